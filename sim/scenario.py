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
import datetime
import functools
import importlib
import json
import pathlib
from collections.abc import Iterable
from typing import Any

from dragoman.fleet.errors import ExitCode, UserError
from dragoman.fleet.forked import ChildUnavailable, Forked, worth_forking
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
    # When the scenario's simulated clock starts (SimulatorConfig startTime): a recorded fleet replays from the moment
    # it was recorded, so a live simulator meets its stories at the ages `check` reads them (a binding timeout, an
    # Event's hour). None: now.
    start: datetime.datetime | None = None
    skipped: dict[str, int] = dataclasses.field(default_factory=dict)  # kinds the simulator does not serve
    source: str = ""
    # The API server's check of the objects, still running in a child (from_documents' `background`): settle() before
    # anything is served or written.
    pending: _BackgroundCheck | None = dataclasses.field(default=None, repr=False, compare=False)

    def settle(self) -> None:
        """Wait for a background check: UserError (exit 2, the sentence load_file words) when it refuses the
        scenario. Returns at once when nothing is pending; a second call gives the same answer."""
        if self.pending is not None and (why := self.pending.result()):
            raise _refused(self.source, why)


# What a scenario may ask of the simulator. The API server accepts larger numbers (int32), but the simulator keeps every
# object in one process: a count of 10^9 in a file would make it build a billion pods or devices and stop answering
# (Ctrl+C included). These bounds are far above every fleet dragoman is measured on (README: 5,000 nodes, 20,000 pods).
MAX_NODES = 20_000  # four times the 5,000 nodes Kubernetes supports in one cluster
MAX_PODS = 200_000  # pods a scenario's workloads may ask for, all together (replicas, Job parallelism and completions)
MAX_OBJECTS = 1_000_000
MAX_DEPTH = 100  # Kubernetes objects nest ~20 levels (managedFields included); deeper is not an object
MAX_SPEED = 1e6
NAME_SHOWN = 60  # characters of a name a sentence repeats (a 100k-character name is cut, with an ellipsis)


class ScenarioError(ValueError):
    """A scenario the simulator refuses to load: the message is one sentence without the file's name."""


def _show(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= NAME_SHOWN else text[: NAME_SHOWN - 1] + "…"


def _type(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "true/false", type(None): "null"}.get(
        type(value), "a number" if isinstance(value, (int, float)) else type(value).__name__
    )


def _flatten(docs: Iterable[Any]) -> list[tuple[str, dict]]:
    """(where, object) for every object of the documents, through the snapshot reader's walk (fleet/snapshot.py): a
    List's items, typed lists' items given their kind; anything that is not an object is a ScenarioError."""
    from dragoman.fleet.snapshot import document_items, not_an_object

    docs = list(docs)
    for n, d in enumerate(docs, 1):
        if isinstance(d, dict) and isinstance(d.get("kind"), str) and d["kind"].endswith("List") and "items" in d:
            if not isinstance(d["items"], list):
                where = f"document {n}" if len(docs) > 1 else "the document"
                raise ScenarioError(f"{where} is a {d['kind']} whose items are {_type(d['items'])}, not a list")
    out: list[tuple[str, dict]] = []
    for where, item in document_items(docs):
        problem = not_an_object(item, where)
        if problem:
            raise ScenarioError(problem + " (a Kubernetes object has a kind and an apiVersion, e.g. kind: Node, v1)")
        assert isinstance(item, dict)
        out.append((where, item))
    if len(out) > MAX_OBJECTS:
        raise ScenarioError(f"it holds {len(out):,} objects; the simulator loads at most {MAX_OBJECTS:,}")
    return out


def _strings(value: Any, field: str) -> None:
    if value is not None and (not isinstance(value, list) or not all(isinstance(v, str) for v in value)):
        raise ScenarioError(f"{field} must be a list of strings, not {_type(value)}")


def taint_added_now(obj: dict) -> dict:
    """`obj` as a server whose clock is the wall's gets it: a DeviceTaintRule without the scenario's timeAdded, which
    the API server then stamps now. A claim's NoExecute tolerationSeconds count from it, so an eviction the scenario
    shows pending is pending there too, not long overdue by the scenario's clock. Other objects are returned as they
    are (the rule is copied, never changed in place)."""
    if obj.get("kind") != "DeviceTaintRule":
        return obj
    spec = obj.get("spec")
    taint = spec.get("taint") if isinstance(spec, dict) else None
    if not isinstance(taint, dict) or "timeAdded" not in taint:
        return obj
    return {**obj, "spec": {**spec, "taint": {k: v for k, v in taint.items() if k != "timeAdded"}}}


def _config(scenario: Scenario, d: dict, where: str) -> None:
    """The SimulatorConfig document: each field of the type the simulator reads, or a sentence."""
    speed = d.get("speed")
    if speed is not None:
        if isinstance(speed, bool) or not isinstance(speed, (int, float)) or not 0 < speed <= MAX_SPEED:
            raise ScenarioError(
                f"{where}: SimulatorConfig speed is {_show(speed)}; it must be a number of simulated seconds per real "
                f"second, above 0 and at most {MAX_SPEED:g}"
            )
        scenario.speed = float(speed)
    faults = d.get("faults")
    if faults:
        if not isinstance(faults, str):
            raise ScenarioError(f"{where}: SimulatorConfig faults must be a string in the --faults syntax")
        from dragoman.sim.faults import FaultSpecError, parse

        try:
            parse(faults)
        except FaultSpecError as exc:
            raise ScenarioError(f"{where}: SimulatorConfig faults: {exc}") from None
        scenario.faults = faults
    start = d.get("startTime")
    if start is not None:
        from dragoman.fleet.k8s.times import parse_rfc3339

        try:
            scenario.start = parse_rfc3339(start) if isinstance(start, str) else None
        except ValueError:
            scenario.start = None
        if scenario.start is None:
            raise ScenarioError(
                f"{where}: SimulatorConfig startTime is {_show(start)}; it must be an RFC 3339 time such as "
                "2026-11-30T08:00:00Z (when the simulated clock starts), or left out for now"
            )
    if "anonymousRead" in d:
        if not isinstance(d["anonymousRead"], bool):
            raise ScenarioError("SimulatorConfig anonymousRead must be true or false")
        scenario.anonymous_read = d["anonymousRead"]
    users = d.get("users")
    if users is None:
        return
    if not isinstance(users, list):
        raise ScenarioError(
            f"{where}: SimulatorConfig users must be a list of users (name, groups), not {_type(users)}"
        )
    for i, u in enumerate(users, 1):
        if not isinstance(u, dict) or not isinstance(u.get("name"), str) or not u["name"]:
            raise ScenarioError(f"{where}: SimulatorConfig user {i} must be a mapping with a name (a string)")
        if u.get("token") is not None and not isinstance(u["token"], str):
            raise ScenarioError(f"{where}: SimulatorConfig user {_show(u['name'])!r}: token must be a string")
        _strings(u.get("groups"), f"{where}: SimulatorConfig user {_show(u['name'])!r}: groups")
        _strings(u.get("clusterRoles"), f"{where}: SimulatorConfig user {_show(u['name'])!r}: clusterRoles")
    scenario.users.extend(users)


@functools.cache
def _api_tools() -> tuple:
    """What _api_problem uses, imported once (not on every object: 40,000 imports were 0.2 s of a fleet's check), and
    only when a scenario is checked."""
    import msgspec
    from dragoman.sim import pieces
    from dragoman.sim.decode import DecodeError, clean, decode
    from dragoman.sim.store import clone

    return msgspec, pieces, DecodeError, clean, decode, clone


def _api_problem(rt: resources.ResourceType, obj: dict, copy: bool = True) -> str | None:
    """What the API server would answer creating `obj` (decoding into its type, sim/decode.py, then its validation,
    sim/api/validation), or None: a scenario loads only what a client could have created, so no controller meets an
    object it cannot read. Checked on a copy (the scenario's objects load as written), unless `copy` is False and
    decoding would change nothing: a forked child's objects are its own, and are never loaded."""
    msgspec, pieces, DecodeError, clean, decode, clone = _api_tools()
    # A copy through msgpack keeps every value as read (NaN, a key that is not a string), and is 4x faster than the
    # store's json round trip (0.68 -> 0.16 s for a 5,000-node scenario's 40,000 objects); an integer beyond 64 bits
    # takes the json way. The same bytes tell whether decoding would change anything (sim/decode.clean, in C): for a
    # clean object, nearly all of them, the walk is skipped (1.7 of the 4.0 s of CPU a 5,000-node fleet's check took).
    try:
        data = msgspec.msgpack.encode(obj)
    except (OverflowError, TypeError):
        data = None
    if data is not None and clean(rt.kind, rt.api_version, data):
        mine = msgspec.msgpack.decode(data) if copy else obj
    else:  # decoding changes it: always on a copy, so a refusal still names the object as written
        mine = clone(obj) if data is None else msgspec.msgpack.decode(data)
        try:
            decode(rt.kind, rt.api_version, mine, strict=False)
        except DecodeError as exc:
            return _cut(str(exc))
    causes = pieces.validate_object(rt.plural, mine, None, rt.api_version)
    if not causes:
        return None
    first = causes[0]
    text = _cut(first.get("message", "invalid"))
    field = first.get("field")
    more = f" (and {len(causes) - 1} more)" if len(causes) > 1 else ""
    return f"{field}: {text}{more}" if field and not text.startswith(field) else text + more


def _cut(text: str, most: int = 240) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _gpu_problem(obj: dict) -> str | None:
    """A node whose GPU labels or extended resources claim more GPUs than any server has (fleet/nvidia_schema)."""
    from dragoman.fleet.k8s.quantity import count as parse_count
    from dragoman.fleet.model import GFD_COUNT
    from dragoman.fleet.nvidia_schema import MAX_DEVICES_PER_NODE, MAX_GPUS_PER_NODE

    labels = (obj.get("metadata") or {}).get("labels") or {}
    for key, value in labels.items() if isinstance(labels, dict) else ():
        if key == GFD_COUNT or (isinstance(key, str) and key.startswith("nvidia.com/mig-") and key.endswith(".count")):
            if parse_count(value) > MAX_DEVICES_PER_NODE:
                return (
                    f"its label {key} is {_show(value)}; a node has at most {MAX_GPUS_PER_NODE} GPUs "
                    f"({MAX_DEVICES_PER_NODE} MIG devices)"
                )
    return None


def _pods_asked(obj: dict) -> int:
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    kind = obj.get("kind")
    if kind in ("Deployment", "ReplicaSet", "StatefulSet", "ReplicationController"):
        return _count(spec.get("replicas"))
    if kind == "Job":
        return max(_count(spec.get("parallelism")), _count(spec.get("completions")))
    return 0


def _label(where: str, obj: dict) -> str:
    """How a sentence names an object: where it is in the file, its kind and (cut) name. Made only for a refusal:
    40,000 labels were a tenth of a large scenario's check."""
    md = obj.get("metadata")
    label = f"{where} ({obj['kind']}"
    if isinstance(md, dict) and isinstance(md.get("name"), str):
        label += f" {_show(md['name'])!r}"
    return label + ")"


def check_objects(objects: list[tuple[str, dict]], *, validate: bool = True, copy: bool = True) -> None:
    """Refuse (ScenarioError) a scenario the simulator cannot run: counts beyond its bounds, and (with `validate`)
    any object the API server would refuse (`copy`: see _api_problem)."""
    nodes = pods = 0
    for where, obj in objects:
        if validate:
            try:
                rt = resources.for_object(obj)
            except KeyError:
                continue
            problem = _api_problem(rt, obj, copy)
            if problem:
                raise ScenarioError(f"{_label(where, obj)} would be refused by the API server: {problem}")
        if obj["kind"] == "Node":
            nodes += 1
            problem = _gpu_problem(obj)
            if problem:
                raise ScenarioError(f"{_label(where, obj)}: {problem}")
        asked = _pods_asked(obj)
        if asked > MAX_PODS:
            raise ScenarioError(
                f"{_label(where, obj)} asks for {asked:,} pods; the simulator runs at most {MAX_PODS:,}"
            )
        pods += asked
    if nodes > MAX_NODES:
        raise ScenarioError(f"it holds {nodes:,} nodes; the simulator models at most {MAX_NODES:,}")
    if pods > MAX_PODS:
        raise ScenarioError(f"its workloads ask for {pods:,} pods; the simulator runs at most {MAX_PODS:,}")


# A scenario of at least this many objects, checked for `sim serve`, is checked in a forked child while the parent
# loads the store from the same objects (from_documents' `background`). The check decodes and validates every object
# as the API server would, ~45 µs each: 1.8 s of CPU for the README's 5,000-node fleet, beside the 1.4 s its store
# takes to load. With two cores the start waits for the longer of the two, not their sum; the child's pages are the
# parent's until either writes them (copy on write). A small scenario's check is quicker than a fork.
BACKGROUND_OBJECTS = 5_000


class _BackgroundCheck:
    """check_objects(validate=True) in a forked child (fleet/forked); result() waits for its verdict."""

    def __init__(self, objects: list[tuple[str, dict]]) -> None:
        self._objects: list[tuple[str, dict]] | None = objects
        self._verdict: str | None = None
        self._child = Forked(functools.partial(_verdict, objects, copy=False))

    def result(self) -> str:
        """The child's verdict: "" (the API server would take every object) or the ScenarioError's sentence. A child
        that gave none (killed, out of memory, or a bug in the check) is replaced by the check run here, so the answer
        is always the one an inline check gives."""
        if self._verdict is None:
            try:
                self._verdict = self._child.result()
            except (ChildUnavailable, RuntimeError):
                self._verdict = _verdict(self._objects or [])
            self._objects = None
        return self._verdict


def _verdict(objects: list[tuple[str, dict]], copy: bool = True) -> str:
    """The API check's answer as a string: "" or the sentence (a child's answer crosses a pipe)."""
    try:
        check_objects(objects, validate=True, copy=copy)
    except ScenarioError as exc:
        return str(exc)
    return ""


def _refused(source: str, why: object) -> UserError:
    return UserError(f"the scenario {source} is not one the simulator can load: {why}.", ExitCode.INPUT)


def from_documents(
    docs: Iterable[Any], source: str = "", *, validate: bool = False, background: bool = False
) -> Scenario:
    """A Scenario from decoded documents; ScenarioError (a sentence) when a document is not an object, the settings
    are not of their types, or the counts exceed the simulator's bounds; with `validate`, also when an object would
    be refused by the API server (a file of one's own; the shipped scenarios are checked by a test). `background`: a
    large scenario's API check may run in a child (BACKGROUND_OBJECTS) and is then the caller's to settle() before
    anything is served; its sentence is the one given without it."""
    scenario = Scenario(objects=[], source=source)
    flat = _flatten(docs)
    for where, d in flat:
        if d["kind"] == CONFIG_KIND and d["apiVersion"] == CONFIG_API_VERSION:
            _config(scenario, d, where)
            continue
        try:
            rt = resources.for_object(d)
        except KeyError:
            key = f"{d['apiVersion']}/{d['kind']}"
            scenario.skipped[key] = scenario.skipped.get(key, 0) + 1
            continue
        if rt.key in resources.VIRTUAL:
            continue
        scenario.objects.append(d)
    objects = [(w, d) for w, d in flat if d["apiVersion"] != CONFIG_API_VERSION]
    if validate and background and len(objects) >= BACKGROUND_OBJECTS and worth_forking():
        try:
            scenario.pending = _BackgroundCheck(objects)
        except ChildUnavailable:
            pass  # no fork today (a process limit): checked here, as a small scenario is
        else:
            try:
                check_objects(objects, validate=False)  # the counts, here too: they bound what the parent loads
            except Exception:
                # Unchecked objects may hold anything (a label key that is a number). The child meets this too, or an
                # object before it that the API server refuses: its sentence is the inline check's.
                why = scenario.pending.result()
                if why:
                    raise ScenarioError(why) from None
                raise
            return scenario
    check_objects(objects, validate=validate)
    return scenario


def load_file(path: str | pathlib.Path, *, validate: bool = True, background: bool = False) -> Scenario:
    """A scenario file, through the one bounded reader (fleet/safefile.read_documents: size, time, encoding,
    aliases, nesting), then checked as from_documents says (`background` too); every refusal is one sentence
    (UserError, exit 2)."""
    from dragoman.fleet.safefile import read_documents
    from dragoman.fleet.snapshot import MAX_SNAPSHOT_BYTES

    docs = read_documents(
        str(path), "the scenario", max_bytes=MAX_SNAPSHOT_BYTES, expect="a scenario", max_depth=MAX_DEPTH
    )
    return _scenario_of(docs, str(path), validate=validate, background=background)


def _scenario_of(docs: list, source: str, *, validate: bool, background: bool = False) -> Scenario:
    """from_documents, its refusal one sentence (UserError, exit 2) naming the scenario: a file's or a shipped one's."""
    try:
        return from_documents(docs, source, validate=validate, background=background)
    except ScenarioError as exc:
        raise _refused(source, exc) from None


def available() -> list[str]:
    """The built-in scenario names: the YAML files of sim/scenarios/ and the modules there that define `load()` (the
    others, such as nvidia or demo_build, are helpers, not scenarios)."""
    names = {p.stem for p in SCENARIO_DIR.glob("*.yaml")}
    names |= {
        p.stem
        for p in SCENARIO_DIR.glob("*.py")
        if not p.stem.startswith("_") and "\ndef load(" in p.read_text(encoding="utf-8")
    }
    return sorted(names)


def load(name_or_path: str, *, background: bool = False) -> Scenario:
    """A scenario by name (sim/scenarios/) or by file path (`background`: see from_documents)."""
    p = pathlib.Path(name_or_path)
    if p.suffix in (".yaml", ".yml", ".json") or p.exists() or "/" in name_or_path:
        return load_file(p, background=background)
    names = available()
    if name_or_path not in names:
        raise UserError(
            f"there is no scenario named {_show(name_or_path)!r} (built in: {', '.join(names) or 'none yet'}); "
            "give a file path instead.",
            ExitCode.INPUT,
        )
    f = SCENARIO_DIR / f"{name_or_path}.yaml"
    if f.exists():
        # Shipped and checked by a test (tests/badinput/test_badinput_scenario): parsed once a process.
        from dragoman.sim.scenarios import shipped_documents

        return _scenario_of(shipped_documents(f), str(f), validate=False)
    module = importlib.import_module(f"dragoman.sim.scenarios.{name_or_path}")
    loaded = module.load()
    if isinstance(loaded, Scenario):
        return loaded
    return from_documents(loaded, name_or_path)
