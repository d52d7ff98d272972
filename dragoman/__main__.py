"""`python -m dragoman` runs the command line."""

import sys

try:
    from dragoman.tui.cli import main
except KeyboardInterrupt:
    # Ctrl+C while the command line's own module is still imported: nothing has started yet.
    sys.stderr.write("dragoman: interrupted.\n")
    raise SystemExit(130) from None

raise SystemExit(main())
