"""``python -m checkprofile``: the command line."""

from .cli import main

raise SystemExit(main())
