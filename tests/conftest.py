"""Shared fixtures."""

import signal

# A shell without job control starts a background command (`.ci/run &`, a CI runner's step) with SIGINT ignored, and
# an ignored signal stays ignored through exec: every dragoman the tests start would then shrug off the Ctrl+C the
# interrupt tests send. Python leaves an inherited SIG_IGN alone, so give this process (each xdist worker imports this
# file) Python's own handler back: a handler is reset to the default at exec, and the children start as from a
# terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
