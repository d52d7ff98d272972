"""The Findings view: every finding of the latest diagnosis, errors first; filter severity=, id=, pool=.

A delta touches no row here: findings change only with a new diagnosis, which rebuilds the view."""

from __future__ import annotations

from dragoman.fleet.findings import CATALOGUE, SEVERITY_ORDER, Finding
from dragoman.fleet.views.base import View
from dragoman.fleet.views.cells import severity_cell, without_subject

COLUMNS = (
    ("severity", "SEVERITY", 6, 10),
    ("id", "ID", 8, 26),
    ("pool", "POOL", 4, 16),
    ("object", "OBJECT", 10, 64),
    ("summary", "SUMMARY", 10, None),
)


def finding_row(f: Finding) -> tuple:
    kind, ns, name = f.objects[0] if f.objects else ("", "", "")
    obj = f"{kind} {ns + '/' if ns else ''}{name}" if kind else "—"
    return (severity_cell(f.severity), f.id, f.pool or "—", obj, without_subject(f.summary, kind, ns, name))


def finding_facets(f: Finding) -> dict:
    kind, ns, name = f.objects[0] if f.objects else ("", "", "")
    return {"severity": f.severity, "id": f.id, "pool": f.pool or "", "kind": kind, "namespace": ns, "name": name}


class FindingsView(View):
    name, title = "findings", "Findings"
    columns = COLUMNS
    name_column = "object"
    uses_findings = True
    empty = "no findings: the fleet is consistent"

    def sort_key(self, key, row):
        return key[0], key[1:]

    def empty_text(self, fleet):
        # Before the first diagnosis "no findings" would be a false all-clear (it took a minute on a large fleet).
        return self.empty if fleet.diagnosed else "diagnosing the fleet… (findings show when the first diagnosis ends)"

    def all_rows(self, fleet):
        ids = list(CATALOGUE)
        for f in fleet.findings:
            key = (
                SEVERITY_ORDER.get(f.severity, 9),
                ids.index(f.id) if f.id in ids else 99,
                f.pool or "",
                tuple(f.objects[0]) if f.objects else ("", "", ""),
                f.summary,
            )
            yield key, finding_row(f), finding_facets(f)

    def row(self, fleet, key):
        for k, cells, facets in self.all_rows(fleet):
            if k == key:
                return cells, facets
        return None

    def affected(self, fleet, t):
        return ()  # findings change only with a new diagnosis

    def palette(self, fleet):
        return [(f"findings: only {s}", f"filter severity={s}", f"severity={s}") for s in ("error", "warning", "info")]

    def ref(self, fleet, key):
        obj = key[3]
        return tuple(obj) if obj and obj[0] else None
