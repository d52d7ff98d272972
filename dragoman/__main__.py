"""`python -m dragoman` runs the command line."""

from dragoman.tui.cli import main

raise SystemExit(main())
