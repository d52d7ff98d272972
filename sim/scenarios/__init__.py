"""Scenario files and generators: the demo fleet, the scale fleet."""
