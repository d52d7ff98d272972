"""The differential's behaviour cases with real kubelets: the node half judged by upstream's kubelet.

Two real v1.37.2 control planes serve the same small fleet (the demo's DaemonSets, DeviceClasses and the nodes the
behaviour cases copy, `small_fleet`). On one, the node a case joins is run by dragoman's Python node agents (as
everywhere else); on the other it is run by a real kubelet with dragoman-cri and dragoman's device plugin and DRA
kubelet plugin (kubelets.py: the node joins as a machine added to a pool does, its kubelet registers it). The same
behaviour cases (differential_behaviour.py) run on both; what they observe is compared after normalizing, and every
difference not on differential_kubelets_allowlist.yaml (a reason per entry) fails
tests/controlplane/test_real_kubelets_differential.py.

CI runs every case with a node half (`all_cases`), the node lifecycle's three included: NotReady (the real side
SIGSTOPs the node's kubelet), the container runtime down (dragoman-cri refuses every CRI call) and a deleted node (its
kubelet stopped first), the last beside the first (`Behaviour.alongside`). The binding-conditions test after them
once saw the Python agents' pod bound before its condition was set: the order of writes counted an earlier case's
pod (the drain's, still ending) as "pod bound"; it now counts only the case's own pod and claims
(`differential_behaviour.write_order`). `DRAGOMAN_KUBELET_DIFF=WORD;WORD` runs the cases whose names hold a word.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from dragoman.sim.controlplane import differential as diff
from dragoman.sim.controlplane import differential_behaviour as b

ALLOWLIST = pathlib.Path(__file__).with_name("differential_kubelets_allowlist.yaml")
TITLES = ("python agents", "real kubelet")
# The nodes the cases join (each through a real kubelet on the kubelet side).
JOINING = frozenset({b.NODE, b.L4_NODE, b.GONE_NODE, b.BIND_NODE})
# The demo's objects a behaviour case needs: what every node gets (DaemonSets and their namespaces and config), the
# classes, and the nodes the cases copy. No workload: the cases make their own.
KEPT_KINDS = {"Namespace", "DaemonSet", "ConfigMap", "DeviceClass", "ClusterRole", "ClusterRoleBinding"}


def all_cases() -> list[diff.Behaviour]:
    """Every behaviour case with a node half, in the order they build on each other (the first joins the node)."""
    by_name = {c.name: c for c in b.behaviour_cases()}
    crash = diff.Behaviour("a container crash-loops", b.container_crash_loops, group="behaviour/kubelet")
    cordoned = diff.Behaviour("a node cordoned across status syncs", b.node_cordoned, group="behaviour/node")
    names = [
        "a node joins the h100-dra pool",
        "a pod keeping limits: nvidia.com/gpu is bridged",
        "a DeviceClass added while a pod waits",
        "a drain under a PDB",
        "a DaemonSet's pod deleted",
        "a device plugin stopped",
        # The node lifecycle: the real side stops the kubelet (SIGSTOP) or makes dragoman-cri refuse every call where
        # the agents read an annotation (a minute each: the lifecycle controller's grace, the pod collector's
        # quarantine).
        "a node goes NotReady",
        "a node deleted with pods on it",
        "a node's container runtime goes down",
    ]
    # The cordon right after the drain's: its events are the drain's too, when a real kubelet's sync fell in it.
    out = [by_name[n] for n in names[:2]] + [crash] + [by_name[n] for n in names[2:4]] + [cordoned]
    out += [by_name[n] for n in names[4:]]
    return [
        diff.Behaviour(
            c.name,
            _events_by_reason(c.run if i == 0 or c.alongside else _settled_first(c.name, c.run)),
            group=c.group,
            alongside=c.alongside,
        )
        for i, c in enumerate(out)
    ]


# How long a case waits for the node to shed the case before's marks: the NotReady case's kubelet resumes within its
# 10 s status sync, a drained pod ends within its grace.
SETTLE_BEFORE = 60.0


def _settled_first(case: str, run: Callable[[diff.Side], Any]) -> Callable[[diff.Side], Any]:
    """The cases share one node in a fixed order (a case alongside another runs on a node of its own, unwrapped),
    and each flake CI has seen was a case inheriting the one before's state on a real kubelet (the drain's events, its
    cordon still held). So every case after the join first waits until the node shows none (b.node_unsettled); if it
    does not within SETTLE_BEFORE, the case runs anyway and the report says what was left (a note, outside the
    comparison), so a difference that follows is read with its cause."""

    def run_settled(side: diff.Side) -> Any:
        if not side.wait(lambda: not b.node_unsettled(side), SETTLE_BEFORE, interval=1.0):
            left = b.node_unsettled(side)
            if left:
                side.note(case, f"the node had not settled after {SETTLE_BEFORE:.0f} s: " + "; ".join(left))
        return run(side)

    return run_settled


def _events_by_reason(run: Callable[[diff.Side], Any]) -> Callable[[diff.Side], Any]:
    """The case's events keyed by kind and reason: an event one side writes and the other does not is one difference
    under its reason (allowlisted by it), not a shift of every event after it in a sorted list."""

    def keyed(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: _by_reason(x) if "events" in k else keyed(x) for k, x in v.items()}
        return v

    return lambda side: keyed(run(side))


def _by_reason(events: Any) -> Any:
    if not isinstance(events, list) or not all(isinstance(e, (list, tuple)) and len(e) in (4, 5) for e in events):
        return events
    out: dict[str, list] = {}
    for e in events:
        kind, rest = (e[0], list(e[1:])) if len(e) == 5 else ("Node", list(e))
        out.setdefault(f"{kind} {rest[1]}", []).append([rest[0], *rest[2:]])
    return out


def selected_cases(which: str | None = None) -> list[diff.Behaviour]:
    """`ci` (the default) or `all`: every case; or `;`-separated words each picking the cases whose name contains it
    (the node joining always first: the others run on its node)."""
    which = which if which is not None else os.environ.get("DRAGOMAN_KUBELET_DIFF", "ci")
    cases = all_cases()
    if which in ("ci", "all"):
        return cases
    words = [w.strip() for w in which.split(";") if w.strip()]
    return [c for i, c in enumerate(cases) if i == 0 or any(w in c.name for w in words)]


def small_fleet(objects: list[dict]) -> list[dict]:
    """The demo cut to what the cases need: its DaemonSets, classes and namespaces, the H100 DRA node the cases copy
    and one node of each pool a case copies (l4-serve)."""
    keep_nodes = {b.TEMPLATE_NODE}
    l4 = sorted(
        o["metadata"]["name"]
        for o in objects
        if o.get("kind") == "Node"
        and (o["metadata"].get("labels") or {}).get("cloud.google.com/gke-nodepool") == b.L4_POOL
    )
    keep_nodes.update(l4[:1])
    return [
        o
        for o in objects
        if o.get("kind") in KEPT_KINDS or (o.get("kind") == "Node" and o["metadata"]["name"] in keep_nodes)
    ]


@contextlib.contextmanager
def _cluster(binaries: Any, objects: list[dict], users: Any, joining: frozenset[str], node_bins: dict) -> Iterator[Any]:
    from dragoman.sim.controlplane import RealCluster

    cluster = RealCluster(binaries, objects, users, joining=joining, node_binaries=node_bins)
    lt = diff._LoopThread()
    try:
        lt.run(cluster.start(), 900)
        yield cluster
    finally:
        try:
            lt.run(cluster.stop(), 120)
        finally:
            lt.close()


@contextlib.contextmanager
def sides(binaries: str | pathlib.Path, log: Callable[[str], None] = print) -> Iterator[dict[str, diff.Side]]:
    """Both control planes up (at once), serving the small fleet: "embedded" is the Python agents' side (the harness's
    name for its first side), "real" the real kubelets' (its nodes join through `Side.join_node`)."""
    import tempfile
    import time

    from dragoman.sim import scenario as scenario_mod
    from dragoman.sim.controlplane.build import node_binaries

    sc = scenario_mod.load("demo")
    objects = small_fleet(sc.objects)
    node_bins = node_binaries(pathlib.Path(binaries))
    t0 = time.monotonic()
    with contextlib.ExitStack() as stack:
        clusters: dict[str, Any] = {}
        errors: list[BaseException] = []
        lock = threading.Lock()

        exits: list[Any] = []

        def up(name: str, joining: frozenset[str]) -> None:
            try:
                cm = _cluster(binaries, objects, sc.users, joining, node_bins)
                cluster = cm.__enter__()
                with lock:
                    exits.append(cm.__exit__)
                    clusters[name] = cluster
            except BaseException as exc:  # noqa: BLE001 - said by the caller after both tried
                errors.append(exc)

        def down() -> None:
            # Both at once, as they started: each waits for its kubelets' and processes' ends.
            stoppers = [threading.Thread(target=e, args=(None, None, None)) for e in exits]
            for t in stoppers:
                t.start()
            for t in stoppers:
                t.join()

        stack.callback(down)

        threads = [
            threading.Thread(target=up, args=("embedded", frozenset())),
            threading.Thread(target=up, args=("real", JOINING)),
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        log(f"both control planes up in {time.monotonic() - t0:.0f} s")
        folder = pathlib.Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="dragoman-kdiff-")))
        out: dict[str, diff.Side] = {}
        for name, cluster in clusters.items():
            target = diff.Target.from_kubeconfig(name, cluster.kubeconfig())
            side = diff.Side(name, target, diff.kubectl_binary())
            side.kubeconfig_path = diff.kubeconfig_file(target, folder)
            out[name] = side
        out["real"].join_node = clusters["real"].join_kubelet
        out["real"].node_fault = clusters["real"].node_fault
        yield out


def run(
    binaries: str | pathlib.Path, *, cases: list[diff.Behaviour] | None = None, log: Callable[[str], None] = print
) -> diff.Result:
    """Both control planes up, the cases on both, compared."""
    with sides(binaries, log) as both:
        return diff.run_corpus(both, selected_cases() if cases is None else cases)


def load_allowlist() -> list[diff.Allowed]:
    return diff.load_allowlist(ALLOWLIST)
