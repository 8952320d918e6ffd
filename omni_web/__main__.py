"""`python -m omni_web ...`: the command-line interface."""

from omni_web.cli import main

raise SystemExit(main())
