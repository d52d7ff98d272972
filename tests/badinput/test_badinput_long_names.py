"""A node sets its own labels: a 100,000-character pool label must not widen every row of `dragoman check` to
100,000 columns, nor wrap a finding into a thousand lines. Names are cut with "…" (fleet/errors.NAME_SHOWN); the
JSON output keeps the data as it is."""

from __future__ import annotations

import json
import pathlib

import yaml
from dragoman.fleet.errors import NAME_SHOWN
from dragoman.sim.scenarios import DEMO_PATH

from tests.badinput.badinput_support import run_cli

POOL_LABEL = "cloud.google.com/gke-nodepool"


def _snapshot(tmp_path: pathlib.Path, pool: str) -> str:
    docs = list(yaml.safe_load_all(DEMO_PATH.read_text()))
    for d in docs:
        for o in d.get("items", [d]) if isinstance(d, dict) else ():
            labels = (o.get("metadata") or {}).get("labels") or {}
            if o.get("kind") == "Node" and "nvidia.com/gpu.product" in labels:
                labels[POOL_LABEL] = pool
                break
        else:
            continue
        break
    path = tmp_path / "snap.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def test_a_100k_character_pool_name_is_cut_in_every_table_and_sentence(tmp_path: pathlib.Path) -> None:
    pool = "p" * 100_000
    code, out, err = run_cli("check", "--snapshot", _snapshot(tmp_path, pool))
    assert code in (0, 1), err
    lines = out.splitlines()
    assert max(len(line) for line in lines) < 200, "no row is padded to the long name"
    cut = "p" * (NAME_SHOWN - 1) + "…"
    assert sum(cut in line for line in lines) >= 2, "the pools and accounting tables show it, cut"
    assert len(lines) < 1000
    code, out, _err = run_cli("check", "--snapshot", _snapshot(tmp_path, pool), "-o", "json")
    assert pool in [p["name"] for p in json.loads(out)["pools"]], "the JSON keeps the data whole"
