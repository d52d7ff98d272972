"""The TUI's screens: a table screen per view, detail pages (YAML, describe), help and context switching."""
