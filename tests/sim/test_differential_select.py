"""`dragoman controlplane diff --case PATTERN`: one case (or a few) of the differential, chosen by name; a pattern that
selects nothing is refused with a sentence before any control plane starts."""

from __future__ import annotations

import subprocess
import sys

from dragoman.sim.controlplane.differential import case_matches
from dragoman.sim.controlplane.differential_behaviour import behaviour_cases


def test_patterns_select_cases_by_name_with_shell_wildcards() -> None:
    names = [c.name for c in behaviour_cases()]
    picked = [n for n in names if case_matches(n, ["a node joins*", "*NotReady*"])]
    assert picked == ["a node joins the h100-dra pool", "a node goes NotReady"]
    assert all(case_matches(n, None) for n in names)
    assert not any(case_matches(n, ["*notready*"]) for n in names), "case-sensitive, as the names are written"


def test_a_pattern_that_matches_nothing_is_refused_before_anything_starts() -> None:
    p = subprocess.run(
        [sys.executable, "-m", "dragoman", "controlplane", "diff", "--area", "behaviour", "--case", "*no such case*"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2
    assert "--case '*no such case*' matches none of the" in p.stderr and "of --area behaviour" in p.stderr
    assert "Traceback" not in p.stderr and "starting" not in p.stderr
