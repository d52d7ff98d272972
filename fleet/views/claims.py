"""The Claims view: claim → pods → devices → node, bridge-made claims marked ⇄, pending and failed first.

Rows follow `Delta.claims` (fleet/delta.py: a claim's own change, or a pod naming it in its status)."""

from __future__ import annotations

from collections.abc import Sequence

from dragoman.fleet.glyphs import glyph, labelled
from dragoman.fleet.k8s.devicestate import BINDING_FAILED, binding_state, result_entries
from dragoman.fleet.model import is_bridge_claim
from dragoman.fleet.views.base import View
from dragoman.fleet.views.cells import Cell

COLUMNS = (
    ("state", "STATE", 6, 12),
    ("claim", "CLAIM", 10, 80),
    ("source", "MADE BY", 8, 10),
    ("pod", "POD", 6, 48),
    ("devices", "DEVICES", 4, 24),
    ("node", "NODE", 6, None),
)

CLAIM_RANK = {"failed": 0, "bind failed": 1, "pending": 2, "binding": 3, "reserved": 4, "allocated": 5}


def claim_state(claim: dict, pod_phase: str | None) -> str:
    """kubectl's STATE, plus v1.37's binding conditions: an allocation whose devices wait for their binding
    conditions is "binding" (the pod waits in PreBind), one whose failure condition is True is "bind failed"."""
    status = claim.get("status") or {}
    if pod_phase == "Failed":
        return "failed"
    if not status.get("allocation"):
        return "pending"
    for dev, r in result_entries(claim):
        b = binding_state(claim, dev, r)
        if b is not None:
            return "bind failed" if b[0] == BINDING_FAILED else "binding"
    return "reserved" if status.get("reservedFor") else "allocated"


def claim_row(
    claim: dict,
    state: str,
    bridge: bool,
    pods: Sequence[tuple[str, str]],
    devices: Sequence[tuple[str, str, str]],
    node: str | None,
) -> tuple:
    meta = claim.get("metadata") or {}
    tone = {
        "failed": "error",
        "bind failed": "error",
        "pending": "warning",
        "binding": "warning",
        "reserved": "ok",
        "allocated": "ok",
    }[state]
    mark = glyph(
        {
            "failed": "error",
            "bind failed": "error",
            "pending": "waiting",
            "binding": "binding",
            "reserved": "reserved",
            "allocated": "allocated",
        }[state]
    )
    if bridge:
        source = Cell(labelled("bridge", "bridge"), "dra")
    elif meta.get("ownerReferences"):
        source = Cell("template", None)
    else:
        source = Cell("claim", None)
    dev = ", ".join(d[2] for d in devices[:3]) + (f" +{len(devices) - 3}" if len(devices) > 3 else "")
    return (
        Cell(f"{mark} {state}", tone),
        f"{meta.get('namespace', '')}/{meta.get('name', '')}",
        source,
        ", ".join(p[1] for p in pods) or "—",
        dev or "—",
        node or "—",
    )


class ClaimsView(View):
    name, title = "claims", "Claims"
    columns = COLUMNS
    name_column = "claim"
    empty = "no ResourceClaims"

    def sort_key(self, key, row):
        state = row[0].text.split(" ", 1)[1]
        return (CLAIM_RANK.get(state, 9), key)

    def _state(self, fleet, c: dict) -> tuple[list, str]:
        """(the pods the claim is for, its STATE)."""
        m = fleet.model
        pods = m.claim_pods(c)
        phase = None
        for pk in pods:
            pod = m.objects["Pod"].get(pk)
            if pod is not None:
                phase = (pod.get("status") or {}).get("phase")
        return pods, claim_state(c, phase)

    def order(self, fleet):
        # sort_key's (rank of the STATE, key), without the rest of the row.
        for key, c in list(fleet.model.objects["ResourceClaim"].items()):
            yield key, (CLAIM_RANK.get(self._state(fleet, c)[1], 9), key)

    def row(self, fleet, key):
        m = fleet.model
        c = m.claim(*key)
        if c is None:
            return None
        pods, state = self._state(fleet, c)
        node = m.claim_node(c)
        cells = claim_row(c, state, is_bridge_claim(c), pods, m.claim_devices(c), node)
        return cells, {
            "namespace": key[0],
            "state": state,
            "node": node or "",
            "pool": fleet.model.pool_of_node(node) or "",
            "bridge": "true" if is_bridge_claim(c) else "false",
        }

    def all_rows(self, fleet):
        for key in list(fleet.model.objects["ResourceClaim"]):
            r = self.row(fleet, key)
            if r:
                yield key, r[0], r[1]

    def affected(self, fleet, t):
        return None if t.everything else t.claims

    def ref(self, fleet, key):
        return ("ResourceClaim", key[0], key[1])
