"""The Textual app, its screens and the command line. Textual is imported lazily so headless commands start fast."""
