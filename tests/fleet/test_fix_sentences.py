"""Fixes that fix (issue 30), on the demo fleet: each names the object to change (linked: a finding's objects after the
first are its describe page's links) and, where dragoman can compute it, what to write."""

from __future__ import annotations

import pathlib

import pytest
from dragoman.fleet.diagnose import diagnose
from dragoman.tui.commands.cel import load_objects
from fleet_fixtures import model_of

DEMO = pathlib.Path(__file__).resolve().parents[2] / "sim" / "scenarios" / "demo.yaml"


@pytest.fixture(scope="module")
def findings():
    return diagnose(model_of(*load_objects(str(DEMO))))


def _one(findings, fid: str, name: str):
    return next(f for f in findings if f.id == fid and f.objects[0][2].startswith(name))


def test_pending_unmapped_never_proposes_a_class_for_a_profile_the_fleet_does_not_publish(findings) -> None:
    f = _one(findings, "pending-unmapped", "asr-batch-large")
    # The fleet's MIG GPUs are partitioned into 1g.10gb only: a class naming mig-3g.40gb would select nothing.
    assert "extendedResourceName: nvidia.com/mig-3g.40gb" not in f.fix
    assert "No GPU in the fleet offers MIG profile 3g.40gb (it publishes 1g.10gb)" in f.fix
    assert "Job ml-inference/asr-batch-large" in f.fix and ("Job", "ml-inference", "asr-batch-large") in f.objects
    # The scheduler's other words count too: 2 nodes short of cpu, 4 of memory.
    assert "Insufficient cpu (2 nodes) and memory (4 nodes)" in f.fix


def test_pending_insufficient_names_and_links_its_eligible_nodes(findings) -> None:
    f = _one(findings, "pending-insufficient", "eval-sweep-8gpu")
    nodes = [o[2] for o in f.objects if o[0] == "Node"]
    assert len(nodes) == 3 and all(n.startswith("gke-ml-prod-a100-train-") for n in nodes)
    assert f"Free nvidia.com/gpu capacity on {', '.join(nodes)}" in f.fix
    assert "gke-ml-prod-a100-train-0c603acf-kzkx (1 free)" in f.evidence[0]


def test_no_finding_repeats_its_summary_as_evidence(findings) -> None:
    for f in findings:
        for e in f.evidence:
            assert not (len(e) > 30 and (e in f.summary or f.summary in e)), (f.id, f.summary, e)


def test_a_describe_page_quotes_the_scheduler_once_and_wraps_under_its_text() -> None:
    import io

    from dragoman.widgets.detail import describe, page_renderable
    from rich.console import Console

    model = model_of(*load_objects(str(DEMO)))

    class Fleet:
        def __init__(self) -> None:
            self.model, self.findings, self.diagnosed, self.catalogue = model, diagnose(model), True, None

    pod = next(k for k in model.objects["Pod"] if k[1].startswith("asr-batch-large"))
    text = describe(Fleet(), ("Pod", *pod)).text()
    assert text.count("Insufficient nvidia.com/mig-3g.40gb") == 1, text  # the event's words, not again as scheduler:
    console = Console(width=80, record=True, file=io.StringIO())
    console.print(page_renderable(text))
    lines = console.export_text().splitlines()
    at = next(i for i, line in enumerate(lines) if "· event FailedScheduling" in line)
    bullet = lines[at].index("event")
    # The wrapped rest of the bullet starts under its text, not at column 1.
    assert lines[at + 1][:bullet].strip() == "" and lines[at + 1][bullet] != " "


def test_stuck_pods_show_namespace_and_age_at_the_clusters_clock() -> None:
    from dragoman.fleet.views.cells import age_text
    from dragoman.fleet.views.pending import COLUMNS, stuck_row

    # k9s's habit: NAMESPACE beside the name, AGE as kubectl prints it, judged at the cluster's (the snapshot's) clock.
    assert [c[0] for c in COLUMNS][:4] == ["pod", "namespace", "finding", "age"]
    model = model_of(*load_objects(str(DEMO)))
    pod = next(p for k, p in model.objects["Pod"].items() if k[1].startswith("asr-batch-large"))
    row = stuck_row(pod, [], model.now)
    assert row[1] == "ml-inference" and row[3] == age_text(pod["metadata"]["creationTimestamp"], model.now) != "—"
    assert [age_text("2026-01-01T00:00:00Z", t) for t in (1767225640.0, 1767225900.0, 1767236400.0, 1767398400.0)] == [
        "40s",
        "5m",
        "3h",
        "2d",
    ]
    assert age_text(None, 1.0) == "—"
