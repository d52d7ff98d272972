"""The simulator's spec.nodeName index (sim/store.py): a field-selector LIST or paginated snapshot of pods gives exactly
what a scan of every pod gives, through creates, moves to another node, clearing the node, deletes and re-creates."""

from __future__ import annotations

import random

from dragoman.fleet.k8s.selectors import parse_field_selector
from dragoman.sim import resources
from dragoman.sim.store import Store

NODES = ["n0", "n1", "n2", "n3", ""]


def _pod(ns: str, name: str, node: str) -> dict:
    spec = {"containers": [{"name": "c", "image": "busybox"}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns}, "spec": spec}


def _scan(store: Store, selector: str, ns: str | None) -> list[tuple[str, str]]:
    """The answer without the index: a predicate that does not say what it requires, over every pod."""
    fp = parse_field_selector(selector, resources.lookup("pods").field_labels())
    rt = resources.lookup("pods")
    plain = lambda o: fp(o)  # noqa: E731 - no `equals` attribute: the store must scan
    return [(e.obj["metadata"]["namespace"], e.obj["metadata"]["name"]) for e in store.snapshot(rt, ns, plain).entries]


def _indexed(store: Store, selector: str, ns: str | None) -> tuple[list, list]:
    rt = resources.lookup("pods")
    fp = parse_field_selector(selector, rt.field_labels())
    assert fp.equals.get("spec.nodeName") is not None or "spec.nodeName=" not in selector
    snap = [(e.obj["metadata"]["namespace"], e.obj["metadata"]["name"]) for e in store.snapshot(rt, ns, fp).entries]
    listed = [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in store.list("pods", ns, None, selector)]
    return snap, listed


def test_field_selector_results_are_the_same_with_the_index_through_every_kind_of_change() -> None:
    rng = random.Random(5)
    store = Store(validate=False)
    rt = resources.lookup("pods")
    for ns in ("a", "b"):
        store.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    live: dict[tuple[str, str], str] = {}
    selectors = [f"spec.nodeName={n}" for n in NODES] + [
        "spec.nodeName=n1,status.phase!=Succeeded",
        "spec.nodeName!=n2",
        "spec.nodeName=n0,spec.nodeName=n1",
        "spec.nodeName==n3",
    ]
    moves = clears = deletes = 0
    for step in range(600):
        op = rng.random()
        if op < 0.4 or not live:
            key = (rng.choice("ab"), f"p{rng.randrange(80)}")
            if key in live:
                continue
            node = rng.choice(NODES)
            store.create("pods", _pod(*key, node))
            live[key] = node
        elif op < 0.8:
            key = rng.choice(sorted(live))
            cur = store.entry(rt, *key)
            node = rng.choice(NODES)
            spec = {**cur.obj["spec"]}
            if node:
                spec["nodeName"] = node
            else:
                spec.pop("nodeName", None)
                clears += 1
            moves += node != live[key]
            store._commit("MODIFIED", rt, {**cur.obj, "metadata": dict(cur.obj["metadata"]), "spec": spec}, cur)
            live[key] = node
        else:
            key = rng.choice(sorted(live))
            cur = store.entry(rt, *key)
            store._commit("DELETED", rt, {**cur.obj, "metadata": dict(cur.obj["metadata"])}, cur)
            del live[key]
            deletes += 1
        if step % 25 == 0:
            for selector in selectors:
                for ns in (None, "a"):
                    want = _scan(store, selector, ns)
                    snap, listed = _indexed(store, selector, ns)
                    assert snap == want and listed == want, (step, selector, ns)
    assert moves > 100 and clears > 20 and deletes > 50
    # The index holds exactly the live pods, each under its node.
    assert {k for keys in store._pods_by_node.values() for k in keys} == set(live)
    for key, node in live.items():
        assert key in store._pods_by_node[node]
