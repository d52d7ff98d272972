"""Scenarios: object files (a Kubernetes List or YAML documents) plus an optional SimulatorConfig with users, faults and
speed.

A scenario file may hold, besides ordinary objects, one document

    apiVersion: sim.dragoman.io/v1
    kind: SimulatorConfig
    speed: 10                       # simulated seconds per real second
    faults: "latency=20ms"          # the --faults syntax (sim/faults.py)
    users:
      - name: viewer                # a bearer token is generated unless `token` is given
        clusterRoles: [view]        # bound with a ClusterRoleBinding
      - name: ops
        groups: [ops]               # RBAC objects in the scenario decide what the group may do
    anonymousRead: false            # true: a request without a token may get, list and watch (never Secrets)

Tokens are made fresh for every run and reach clients only through the kubeconfig the simulator writes; the
scenarios shipped here name no token (a `token` in a scenario file of one's own fixes it, for tests that need to).

A scenario NAME is looked up as sim/scenarios/NAME.yaml, then as a module dragoman.sim.scenarios.NAME with a
`load() -> list[dict]` function (generated fleets).
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import pathlib
from collections.abc import Iterable
from typing import Any

import yaml
from dragoman.fleet.errors import ExitCode, UserError
from dragoman.sim import resources

CONFIG_API_VERSION = "sim.dragoman.io/v1"
CONFIG_KIND = "SimulatorConfig"
SCENARIO_DIR = pathlib.Path(__file__).resolve().parent / "scenarios"


@dataclasses.dataclass
class Scenario:
    """Objects to load and the simulator settings the scenario asks for."""

    objects: list[dict]
    users: list[dict] = dataclasses.field(default_factory=list)
    faults: str = ""
    speed: float | None = None
    anonymous_read: bool = False
    skipped: dict[str, int] = dataclasses.field(default_factory=dict)  # kinds the simulator does not serve
    source: str = ""


def _flatten(docs: Iterable[Any]) -> list[dict]:
    out: list[dict] = []
    for d in docs:
        if not d:
            continue
        if not isinstance(d, dict):
            raise ValueError("a document is not a mapping")
        if d.get("kind", "").endswith("List") and isinstance(d.get("items"), list):
            for item in d["items"]:
                if isinstance(item, dict) and d.get("kind") != "List" and "kind" not in item:
                    item = {**item, "kind": d["kind"][:-4], "apiVersion": d.get("apiVersion", "v1")}
                out.extend(_flatten([item]))
        else:
            out.append(d)
    return out


def from_documents(docs: Iterable[Any], source: str = "") -> Scenario:
    scenario = Scenario(objects=[], source=source)
    for d in _flatten(docs):
        if d.get("kind") == CONFIG_KIND:
            scenario.users.extend(d.get("users") or [])
            if d.get("faults"):
                scenario.faults = str(d["faults"])
            if d.get("speed") is not None:
                scenario.speed = float(d["speed"])
            if "anonymousRead" in d:
                if not isinstance(d["anonymousRead"], bool):
                    raise ValueError("SimulatorConfig anonymousRead must be true or false")
                scenario.anonymous_read = d["anonymousRead"]
            continue
        try:
            resources.for_object(d)
        except KeyError:
            key = f"{d.get('apiVersion', '?')}/{d.get('kind', '?')}"
            scenario.skipped[key] = scenario.skipped.get(key, 0) + 1
            continue
        if resources.for_object(d).key in resources.VIRTUAL:
            continue
        scenario.objects.append(d)
    return scenario


def load_file(path: str | pathlib.Path) -> Scenario:
    p = pathlib.Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise UserError(f"cannot read the scenario {p}: {exc.strerror or exc}.", ExitCode.INPUT) from None
    if p.suffix == ".json":
        # JSON is YAML too, but the json module reads a large generated fleet a hundred times faster.
        try:
            docs = [json.loads(text)]
        except ValueError as exc:
            raise UserError(f"the scenario {p} is not valid JSON: {exc}.", ExitCode.INPUT) from None
        return from_documents(docs, str(p))
    try:
        docs = list(yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise UserError(f"the scenario {p} is not valid YAML{where}.", ExitCode.INPUT) from None
    try:
        return from_documents(docs, str(p))
    except ValueError as exc:
        raise UserError(f"the scenario {p} is not a list of Kubernetes objects: {exc}.", ExitCode.INPUT) from None


def available() -> list[str]:
    names = {p.stem for p in SCENARIO_DIR.glob("*.yaml")}
    names |= {p.stem for p in SCENARIO_DIR.glob("*.py") if not p.stem.startswith("_")}
    return sorted(names)


def load(name_or_path: str) -> Scenario:
    """A scenario by name (sim/scenarios/) or by file path."""
    p = pathlib.Path(name_or_path)
    if p.suffix in (".yaml", ".yml", ".json") or p.exists() or "/" in name_or_path:
        return load_file(p)
    f = SCENARIO_DIR / f"{name_or_path}.yaml"
    if f.exists():
        return load_file(f)
    try:
        module = importlib.import_module(f"dragoman.sim.scenarios.{name_or_path}")
    except ImportError:
        names = ", ".join(available()) or "none yet"
        raise UserError(
            f"there is no scenario named {name_or_path!r} (built in: {names}); give a file path instead.",
            ExitCode.INPUT,
        ) from None
    loaded = module.load()
    if isinstance(loaded, Scenario):
        return loaded
    return from_documents(loaded, name_or_path)
