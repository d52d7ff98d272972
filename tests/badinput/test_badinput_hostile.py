"""Bad-input corpus, hostile servers (issue 19): each malformed answer of tests/badinput/hostile_server.py driven
against `check`, `snapshot`, `cel` and `migrate --plan` — one sentence and exit 2 in bounded time, or, for objects of
the wrong shape, a note naming kind, name and field while the rest of the picture is used; informers that meet a
malformed watch relist and say why; bounded memory for endless and compressed bodies (in a subprocess). LIST pages in
a hostile encoding (corrupt, cut short, a bomb, not gzip, an encoding not asked for) get the same sentence."""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
import subprocess
import sys
import time

import psutil
import pytest
import yaml
from dragoman.fleet import cluster as cluster_mod

from tests.badinput.badinput_support import assert_sentence, run_cli
from tests.badinput.hostile_server import exec_user, kubeconfig, serve

ROOT = pathlib.Path(__file__).resolve().parents[2]

# mode -> words the sentence must hold
SENTENCE_MODES = {
    "endless-version": ["more than 4 MiB"],
    "gzip-bomb": ["more than 4 MiB"],
    "html-200": ["not json"],
    "truncated-json": ["not json"],
    "protobuf": ["not json"],
    "brotli": ["encoding"],
    "redirect": ["redirected", "does not follow redirects"],
    "discovery-groups-a-string": ["not an api group list"],
    "continue-cycle": ["continue token", "never ends"],
    "retry-after-nan": ["503"],
    "slow-drip": ["answer"],
    "endless-list": ["more than 8 MiB"],
    # A LIST answered in a hostile encoding (every collection; /version and discovery answer well).
    "list-gzip-corrupt": ["GET /api", "corrupt gzip"],
    "list-gzip-plain": ["GET /api", "corrupt gzip"],
    "list-gzip-truncated": ["GET /api"],
    "list-cut-mid-stream": ["broke while reading /api"],
    "list-gzip-bomb": ["GET /api", "more than 8 MiB"],
    "list-br": ["GET /api", "encoding 'br'"],
    "list-zstd": ["GET /api", "encoding 'zstd'"],
}


def _command(name: str, tmp: pathlib.Path, kc: str) -> list[str]:
    return {
        "check": ["check", "--kubeconfig", kc],
        "snapshot": ["snapshot", str(tmp / "snap.yaml"), "--kubeconfig", kc],
        "cel": ["cel", 'device.driver == "gpu.nvidia.com"', "--kubeconfig", kc],
        "migrate-plan": [
            "migrate",
            "--pool",
            "a",
            "--plan",
            "--kubeconfig",
            kc,
            "--audit-log",
            str(tmp / "audit.jsonl"),
        ],
    }[name]


@pytest.fixture
def small_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    # The real bounds (256 MiB a page, 60 s a request) scaled down so each mode ends in a second or two.
    monkeypatch.setattr(cluster_mod, "MAX_BODY", 8 * 1024 * 1024)
    monkeypatch.setattr(cluster_mod, "REQUEST_TIMEOUT", 2.0)


@pytest.mark.parametrize("command", ["check", "snapshot", "cel", "migrate-plan"])
@pytest.mark.parametrize("mode", sorted(SENTENCE_MODES))
def test_a_hostile_server_gets_one_sentence_and_exit_2_in_bounded_time(
    tmp_path: pathlib.Path, small_bounds: None, mode: str, command: str
) -> None:
    with serve(mode, redirect_to="http://127.0.0.1:9") as (url, _hostile):
        t0 = time.monotonic()
        code, out, err = run_cli(*_command(command, tmp_path, kubeconfig(tmp_path, url)))
        elapsed = time.monotonic() - t0
    assert_sentence(code, err, words=SENTENCE_MODES[mode])
    assert elapsed < 20, f"{mode} took {elapsed:.1f} s"
    assert not (tmp_path / "snap.yaml").exists(), "no snapshot from a server that failed"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".snap")] == [], "no temporary file left"


def test_a_redirect_is_never_followed_not_even_to_the_same_host(tmp_path: pathlib.Path) -> None:
    with serve("ok") as (target, target_state), serve("redirect", redirect_to=target) as (url, _):
        code, _out, err = run_cli("check", "--kubeconfig", kubeconfig(tmp_path, url))
    sentence = assert_sentence(code, err, words=["redirected", target])
    assert target_state.hits == {}, "the redirect's target got no request (and so never saw the token)"
    assert "abc" not in sentence


def test_a_redirect_location_with_a_password_is_shown_redacted(tmp_path: pathlib.Path) -> None:
    with serve("redirect", redirect_to="http://admin:hunter2@127.0.0.1:9") as (url, _):
        code, _out, err = run_cli("check", "--kubeconfig", kubeconfig(tmp_path, url))
    assert_sentence(code, err, words=["redirected"])
    assert "hunter2" not in err


@pytest.mark.parametrize(
    "mode, kind, name, field",
    [
        ("node-labels-a-list", "Node", "bad-node", "metadata.labels"),
        ("node-pool-label-an-integer", "Node", "bad-node", "metadata.labels.pool"),
        ("node-kubelet-version-a-number", "Node", "bad-node", "status.nodeInfo.kubeletVersion"),
        ("pod-nodename-a-list", "Pod", "ns/bad-pod", "spec.nodeName"),
        ("slice-pool-a-list", "ResourceSlice", "bad-slice", "spec.pool"),
    ],
)
def test_objects_of_the_wrong_shape_are_skipped_with_a_note_and_the_rest_is_used(
    tmp_path: pathlib.Path, mode: str, kind: str, name: str, field: str
) -> None:
    target = tmp_path / "snap.yaml"
    with serve(mode) as (url, _):
        code, _out, err = run_cli("snapshot", str(target), "--kubeconfig", kubeconfig(tmp_path, url))
    assert code == 0, err
    assert "Traceback" not in err
    note = next(line for line in err.splitlines() if "skipped" in line)
    assert kind in note and name in note and field in note, note
    doc = yaml.safe_load(target.read_text())
    names = {i["metadata"]["name"] for i in doc["items"]}
    assert "good-node" in names and not names & {"bad-node", "bad-pod", "bad-slice"}


def test_check_notes_a_malformed_node_in_its_json(tmp_path: pathlib.Path) -> None:
    with serve("node-labels-a-list") as (url, _):
        code, out, err = run_cli("check", "--kubeconfig", kubeconfig(tmp_path, url), "--output", "json")
    assert code in (0, 1), err
    report = json.loads(out)
    assert any("bad-node" in n and "metadata.labels" in n for n in report["notes"]), report["notes"]
    assert report["summary"]["nodes"] == 1


def test_a_gitversion_with_yaml_cannot_inject_objects_into_a_snapshot(tmp_path: pathlib.Path) -> None:
    target = tmp_path / "snap.yaml"
    with serve("version-injection") as (url, _):
        code, _out, err = run_cli("snapshot", str(target), "--kubeconfig", kubeconfig(tmp_path, url))
    assert code == 0, err
    text = target.read_text()
    comments = [line for line in text.splitlines() if line.startswith("#")]
    assert len(comments) == 1 and "\\n" in comments[0], comments
    doc = yaml.safe_load(text)
    assert doc["kind"] == "List" and all(i["kind"] != "Secret" for i in doc["items"])
    assert not text.startswith("items:") and "\nitems:\n- kind: Secret" not in text


def test_a_context_name_with_a_newline_cannot_inject_either(tmp_path: pathlib.Path) -> None:
    target = tmp_path / "snap.yaml"
    with serve("ok") as (url, _):
        kc = pathlib.Path(kubeconfig(tmp_path, url))
        kc.write_text(
            kc.read_text()
            .replace("current-context: c", 'current-context: "c\\nitems: []"')
            .replace("- name: c\n", '- name: "c\\nitems: []"\n')
        )
        code, _out, err = run_cli("snapshot", str(target), "--kubeconfig", str(kc))
    assert code == 0, err
    lines = target.read_text().splitlines()
    assert lines[0].startswith("# ") and not lines[1].startswith("items: []")


def test_401_then_200_refreshes_an_exec_credential_once(tmp_path: pathlib.Path) -> None:
    with serve("401-then-200") as (url, hostile):
        code, _out, err = run_cli(
            "snapshot", str(tmp_path / "s.yaml"), "--kubeconfig", kubeconfig(tmp_path, url, user=exec_user(tmp_path))
        )
    assert code == 0, err
    assert hostile.hits["/version"] == 2


def test_401_with_a_fixed_token_is_one_sentence(tmp_path: pathlib.Path) -> None:
    with serve("401-then-200") as (url, _):
        code, _out, err = run_cli("check", "--kubeconfig", kubeconfig(tmp_path, url))
    assert_sentence(code, err, words=["401", "log in again"])


# A Retry-After that is not a number of seconds keeps the backoff: tests/fleet/test_backoff.py.


# ---------------------------------------------------------------------------- informers and the watch


async def _informer_state(url: str, tmp: pathlib.Path, want, timeout: float = 20.0):
    from dragoman.fleet.cluster import connect
    from dragoman.fleet.informer import Syncer
    from dragoman.fleet.store import FleetStore

    cluster = await connect(kubeconfig(tmp, url), None)
    store = FleetStore(["Node"])
    syncer = Syncer(cluster, store, ["Node"], backoff_initial=0.05, backoff_max=0.2)
    syncer.start()
    inf = syncer.informers["Node"]
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not want(store, inf):
            await asyncio.sleep(0.05)
        return store, inf, want(store, inf)
    finally:
        await syncer.stop()
        await cluster.close()


@pytest.mark.parametrize(
    "mode, words",
    [
        ("watch-error-code-not-a-number", "not an HTTP status"),
        ("watch-object-not-an-object", "not an object"),
        ("watch-endless-line", "longer than"),
    ],
)
def test_a_malformed_watch_relists_with_backoff_and_says_why(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, mode: str, words: str
) -> None:
    monkeypatch.setattr(cluster_mod, "MAX_WATCH_LINE", 1024 * 1024)
    seen: list[str] = []

    def want(store, inf) -> bool:
        st = store.state("Node")
        if words in st.message:
            seen.append(st.status)
        return inf.lists >= 3 and bool(seen)

    with serve(mode) as (url, _):
        store, inf, ok = asyncio.run(_informer_state(url, tmp_path, want))
    assert ok, (store.state("Node"), inf.lists)
    assert seen[0] == "reconnecting"
    assert inf.task is not None and store.count("Node") == 1, "still holding what the last LIST gave"


def test_a_malformed_object_in_a_watch_is_skipped_with_a_note(tmp_path: pathlib.Path) -> None:
    def want(store, inf) -> bool:
        return store.get("Node", None, "late-good") is not None

    with serve("watch-malformed-node") as (url, _):
        store, _inf, ok = asyncio.run(_informer_state(url, tmp_path, want))
    assert ok
    assert store.get("Node", None, "late-bad") is None
    assert any("late-bad" in n and "metadata.labels" in n for n in store.notes.values()), store.notes


# ---------------------------------------------------------------------------- memory, in a subprocess


def _peak_rss(argv: list[str], timeout: float = 60.0) -> tuple[int, float, str]:
    """Run `dragoman ARGV` in a child; (peak RSS in MB, seconds, stderr)."""
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "dragoman", *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=ROOT
    )
    ps = psutil.Process(proc.pid)
    peak = 0
    while proc.poll() is None and time.monotonic() - t0 < timeout:
        try:
            peak = max(peak, ps.memory_info().rss)
        except psutil.Error:
            break
        time.sleep(0.02)
    if proc.poll() is None:
        proc.kill()
    _, err = proc.communicate(timeout=10)
    return peak >> 20, time.monotonic() - t0, err.decode(errors="replace")


@pytest.mark.parametrize("mode", ["endless-version", "gzip-bomb"])
def test_endless_and_compressed_bodies_stay_within_memory(tmp_path: pathlib.Path, mode: str) -> None:
    with serve(mode) as (url, _):
        peak, seconds, err = _peak_rss(["check", "--kubeconfig", kubeconfig(tmp_path, url)])
    assert "Traceback" not in err and "more than 4 MiB" in err, err[-2000:]
    assert peak < 400, f"{peak} MB"
    assert seconds < 30


def test_a_gzip_bomb_as_a_list_page_stays_within_memory(tmp_path: pathlib.Path) -> None:
    """Every collection answered with 512 MiB of zeros gzipped into 0.5 MB, against the real bound of 256 MiB a page:
    the bound is what a page may cost, so the process must stay near one page's bound above its usual 80 MB, not one
    inflated page (and its copy) for every kind being listed at once."""
    with serve("list-gzip-bomb") as (url, _):
        peak, seconds, err = _peak_rss(["check", "--kubeconfig", kubeconfig(tmp_path, url)])
    assert "Traceback" not in err and "more than 256 MiB" in err, err[-2000:]
    assert peak < (cluster_mod.MAX_BODY >> 20) + 300, f"{peak} MB"
    assert seconds < 30


def test_a_gzip_list_without_its_trailer_is_refused(tmp_path: pathlib.Path) -> None:
    """Every byte of the JSON but not the gzip trailer (CRC-32 and length) that checks them: a stream cut short, which
    client-go's reader refuses (unexpected EOF). Accepting it trusts bytes nothing verified."""
    with serve("list-gzip-no-trailer") as (url, _):
        code, _out, err = run_cli("snapshot", str(tmp_path / "snap.yaml"), "--kubeconfig", kubeconfig(tmp_path, url))
    assert_sentence(code, err, words=["GET /api", "gzip"])
    assert not (tmp_path / "snap.yaml").exists()


def test_a_node_read_again_that_is_not_a_node_is_one_sentence(tmp_path: pathlib.Path) -> None:
    """migrate --plan reads each node of the pool again (GET /api/v1/nodes/NAME); an answer that is not that node (here
    the collection, as a misrouted proxy sends) must be a sentence, not a KeyError from the plan's steps."""
    with serve("node-get-a-list") as (url, _):
        code, _out, err = run_cli(*_command("migrate-plan", tmp_path, kubeconfig(tmp_path, url)))
    assert_sentence(code, err, words=["/api/v1/nodes/good-node"])


def test_names_with_control_characters_from_a_server_are_escaped_in_check_text(tmp_path: pathlib.Path) -> None:
    with serve("node-name-with-escapes") as (url, _):
        code, out, err = run_cli("check", "--kubeconfig", kubeconfig(tmp_path, url))
    assert code in (0, 1), err
    assert "\x1b" not in out and "\x00" not in out and "\x1b" not in err
