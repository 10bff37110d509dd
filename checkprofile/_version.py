"""The package's version, in a module of its own so that any module may read it without
importing the package face (telemetry names its instrumentation scope with it)."""

__version__ = "0.1.0"
