"""Benchmarks against the simulator: one entry point, each figure with median, min-max and target."""
