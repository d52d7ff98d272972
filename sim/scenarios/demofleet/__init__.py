"""The demo fleet's parts, story group by story group (sim/scenarios/demo_build.py puts them together)."""
