"""The real kubectl (or helm) the tests drive: one home, benchmarks/kubectl.py, shared with the benchmark command."""

from dragoman.benchmarks.kubectl import CACHE, WHEEL, ensure_binary  # noqa: F401
