"""The differential suite: the corpus (sim/controlplane/differential_corpus.py, differential_behaviour.py) on the
embedded simulator and on the real v1.37.2 control plane, both serving the demo; every difference not on the
allowlist (sim/controlplane/differential_allowlist.yaml) fails. `dragoman controlplane diff` prints the same table.

It runs first in the control-plane suite (file order) and removes what it added, so the user flows that follow see
the demo fleet as loaded.
"""

from __future__ import annotations

import pytest
from dragoman.sim.controlplane import differential

from tests.controlplane.support import Served

pytestmark = pytest.mark.controlplane


@pytest.fixture(scope="module")
def result(real: Served) -> differential.Result:
    got = differential.run(real_kubeconfig=str(real.kubeconfig), log=print)
    print(f"differential: {sum(got.counts.values())} cases in {got.seconds:.0f} s; slowest: {got.slowest()}")
    return got


def test_every_case_ran_on_both_sides(result: differential.Result) -> None:
    assert not result.errors, "\n".join(result.errors)
    groups = {g.split("/", 1)[0] for g in result.counts}
    assert groups == {"api", "behaviour"}
    assert sum(n for g, n in result.counts.items() if g.startswith("api")) >= 120
    assert sum(n for g, n in result.counts.items() if g.startswith("behaviour")) >= 13


def test_no_difference_outside_the_allowlist(result: differential.Result) -> None:
    allow = differential.load_allowlist()
    left, used = differential.split(result.differences, allow)
    assert not left, "differences between the embedded simulator and the real control plane:\n" + differential.table(
        result, left, used
    )
