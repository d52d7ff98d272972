"""Headless subcommands. Each module offers `register(subparsers, common)` and keeps its heavy imports inside `run`."""

# Order is the order `dragoman --help` lists them in.
COMMAND_MODULES = ("check", "explain", "cel", "snapshot", "migrate", "sim", "controlplane", "k9s_plugin", "completion")
