"""``python -m checkprofile``: the command line."""

from checkprofile.cli import main

raise SystemExit(main())
