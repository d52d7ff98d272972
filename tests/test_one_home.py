"""One home for each of dragoman's own rules (a migration's steps, pool labels, backoff): found by name here.

The Kubernetes rules of fleet/k8s/ are kept in one place by behaviour instead: their table tests
(tests/fleet/test_k8s_*.py) ask the client's and the simulator's answers of the same objects, and
tests/controlplane/test_kernel_rules.py asks the real control plane, so a copy that drifts fails whatever its name.

Each rule is found by what defines it: a module-level name bound to a literal or a function of that name, or the
rule's literal text. A second definition anywhere in the product's source fails here, with where it is."""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ("fleet", "actions", "sim", "tui", "widgets")


def _sources() -> list[tuple[str, ast.Module, str]]:
    out = []
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            text = path.read_text()
            out.append((path.relative_to(ROOT).as_posix(), ast.parse(text), text))
    return out


SOURCES = _sources()


def _definitions(name: str) -> list[str]:
    """Modules that define `name` at module level: a function, or a name bound to a literal (not an import)."""
    found = []
    for rel, tree, _ in SOURCES:
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
                found.append(rel)
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                value = node.value
                literal = isinstance(value, ast.Constant | ast.Tuple | ast.List | ast.Dict | ast.DictComp | ast.Set)
                if literal and any(isinstance(t, ast.Name) and t.id == name for t in targets):
                    found.append(rel)
    return found


@pytest.mark.parametrize(
    ("name", "home"),
    [
        ("STEP_ORDER", "fleet/migration.py"),  # a migration's steps: run by actions/, read back by diagnosis
        ("POOL_LABELS", "fleet/pools.py"),
        ("detect_pool_label", "fleet/pools.py"),
        ("pool_label_of", "fleet/pools.py"),
        ("server_delay", "fleet/backoff.py"),
    ],
)
def test_a_rule_is_defined_once(name: str, home: str) -> None:
    assert _definitions(name) == [home]


@pytest.mark.parametrize(
    ("text", "home"),
    [
        ('"dragoman.io/migration"', "fleet/migration.py"),
    ],
)
def test_a_rules_literal_is_written_once(text: str, home: str) -> None:
    assert [rel for rel, _, source in SOURCES if text in source] == [home]


def test_exponential_backoff_is_computed_only_in_its_home() -> None:
    """A wait doubled per try (`x * 2**attempt`, `wait * 2`): fleet/backoff.py's delay() is the only one."""
    waits = ("attempt", "retry", "retries", "failures", "tries", "backoff", "delay", "wait")

    def about_waiting(node: ast.AST) -> bool:
        return any(isinstance(n, ast.Name) and any(w in n.id.lower() for w in waits) for n in ast.walk(node))

    found = []
    for rel, tree, _ in SOURCES:
        if rel == "fleet/backoff.py":
            continue
        for node in ast.walk(tree):
            doubling = isinstance(node, ast.BinOp) and (
                (isinstance(node.op, ast.Pow) and isinstance(node.left, ast.Constant) and node.left.value == 2)
                or (isinstance(node.op, ast.Mult) and isinstance(node.right, ast.Constant) and node.right.value == 2)
            )
            if doubling and about_waiting(node):
                found.append(f"{rel}:{node.lineno}")
    assert found == []
