"""The differential harness: the same script against the embedded simulator and the real v1.37.2 control plane.

Both sides serve the same scenario. The corpus (differential_corpus.py) is a list of cases: API requests sent
verbatim to both (status code, `kind`, `reason`, every field after normalizing), kubectl commands run against both
(the requests kubectl sent and the answers it got, its exit code and output) and behaviour cases (the same actions,
then the resulting objects and events). What must differ between two servers — uids, timestamps, resourceVersions,
generated name suffixes, the servers' addresses — is normalized away here; what differs on purpose is listed, with
its reason, in differential_allowlist.yaml. Everything else is a difference to close.

`dragoman controlplane diff` prints the table; tests/controlplane/test_differential.py fails on any difference the
allowlist does not hold; tests/sim/test_differential_unit.py checks the normalizer and comparer on recorded answers.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import http.client
import json
import pathlib
import re
import ssl
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from typing import Any

import yaml

ALLOWLIST = pathlib.Path(__file__).with_name("differential_allowlist.yaml")
# What a server's answer may hold before it is cut (the corpus's largest, a LIST of the demo fleet, is a few MB) and
# how long it may take in all: an endless or trickling answer ends as a difference, never as memory or a hang.
MAX_ANSWER_BYTES = 64 * 1024 * 1024
MAX_WATCH_LINE = 16 * 1024 * 1024
MAX_ALLOWLIST_BYTES = 4 * 1024 * 1024
SIDES = ("embedded", "real")
MISSING = "<absent>"

# ------------------------------------------------------------------ talking to a server


@dataclasses.dataclass
class Answer:
    code: int
    content_type: str
    body: Any  # parsed JSON, a list of watch events, or a short description of a non-JSON body
    headers: dict[str, str] = dataclasses.field(default_factory=dict)


class Target:
    """One API server: its URL, a bearer token, its CA. Plain HTTPS requests, nothing a client library adds."""

    def __init__(self, name: str, server: str, token: str, ca_pem: bytes, kubeconfig: dict | None = None) -> None:
        self.name = name
        self.server = server.rstrip("/")
        self.token = token
        self.kubeconfig = kubeconfig
        parsed = urllib.parse.urlsplit(self.server)
        self.host, self.port = parsed.hostname or "127.0.0.1", parsed.port or 443
        self.netloc = parsed.netloc
        self._ctx = ssl.create_default_context(cadata=ca_pem.decode())
        # What this side's answers hold that only this side can hold: every resourceVersion and generated name seen.
        self.seen_rvs: set[str] = set()
        self.vars: dict[str, str] = {}

    @classmethod
    def from_kubeconfig(cls, name: str, config: dict | str | pathlib.Path, user: str | None = None) -> Target:
        if not isinstance(config, dict):
            from dragoman.fleet.kubeconfig import MAX_KUBECONFIG_BYTES
            from dragoman.fleet.safefile import read_documents

            docs = read_documents(str(config), "the kubeconfig", max_bytes=MAX_KUBECONFIG_BYTES, expect="a kubeconfig")
            config = docs[0] if len(docs) == 1 and isinstance(docs[0], dict) else {}
        ctx_name = config.get("current-context")
        contexts = {c["name"]: c["context"] for c in config.get("contexts") or ()}
        users = {u["name"]: u["user"] for u in config.get("users") or ()}
        ctx = contexts.get(ctx_name) or next(iter(contexts.values()))
        cluster = next(c["cluster"] for c in config["clusters"] if c["name"] == ctx["cluster"])
        token = users[user or ctx["user"]]["token"]
        ca = base64.b64decode(cluster["certificate-authority-data"])
        return cls(name, cluster["server"], token, ca, config)

    def _conn(self, timeout: float) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection(self.host, self.port, context=self._ctx, timeout=timeout)

    def send(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        content_type: str | None = None,
        accept: str | None = "application/json",
        timeout: float = 60.0,
        user_agent: str | None = None,
    ) -> Answer:
        data: bytes | None
        if body is None:
            data = None
        elif isinstance(body, (bytes, str)):
            data = body.encode() if isinstance(body, str) else body
        else:
            data = json.dumps(body).encode()
        # The User-Agent names the writer kube-apiserver records in managedFields when a request gives no
        # fieldManager: a corpus request replaying a client library sends that library's.
        headers = {"Authorization": f"Bearer {self.token}", "User-Agent": user_agent or "dragoman-differential"}
        if accept is not None:
            headers["Accept"] = accept
        if data is not None:
            headers["Content-Type"] = content_type or "application/json"
        conn = self._conn(timeout)
        try:
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            raw, problem = read_answer(resp, timeout)
            hdrs = {k.lower(): v for k, v in resp.getheaders()}
        finally:
            conn.close()
        ctype = hdrs.get("content-type", "")
        return Answer(resp.status, ctype, answer_body(ctype, raw, problem), _kept_headers(hdrs))

    def watch(self, path: str, *, max_events: int = 20, until_bookmark: bool = False, timeout: float = 15.0) -> Answer:
        """A WATCH: its events until the server ends it (timeoutSeconds), `max_events`, or the initial-events-end
        bookmark; each event is {type, object}."""
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        conn = self._conn(timeout)
        events: list[dict] = []
        try:
            conn.request("GET", path, headers=headers)
            resp = conn.getresponse()
            ctype = resp.getheader("Content-Type", "")
            if resp.status != 200:
                return Answer(resp.status, ctype, answer_body(ctype, *read_answer(resp, timeout)))
            deadline = time.monotonic() + timeout
            while len(events) < max_events and time.monotonic() < deadline:
                try:
                    line = resp.readline(MAX_WATCH_LINE + 1)
                except (TimeoutError, OSError, http.client.HTTPException):
                    break
                if not line:
                    break
                if not line.strip():
                    continue
                try:
                    ev = json.loads(line) if len(line) <= MAX_WATCH_LINE else None
                except ValueError:
                    ev = None
                if not isinstance(ev, dict):
                    events.append({"type": "<not a watch event>", "object": f"<{len(line)} bytes>"})
                    break
                events.append(ev)
                obj = ev.get("object") if isinstance(ev.get("object"), dict) else {}
                meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
                ann = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
                if until_bookmark and ev.get("type") == "BOOKMARK" and ann.get("k8s.io/initial-events-end"):
                    break
        finally:
            conn.close()
        return Answer(200, ctype, {"events": events})


_KEPT_HEADERS = ("warning", "content-type")


def _kept_headers(hdrs: dict[str, str]) -> dict[str, str]:
    # Only headers a client acts on: a Warning (kubectl prints it) and the media type (a client decodes by it).
    out = {}
    for k in _KEPT_HEADERS:
        if k in hdrs:
            v = hdrs[k]
            out[k] = v.split(";")[0].strip() if k == "content-type" else v
    return out


def read_answer(resp: http.client.HTTPResponse, timeout: float, limit: int | None = None) -> tuple[bytes, str]:
    """(body, problem): a response body of at most `limit` bytes read within `timeout` seconds in all (the socket's
    timeout is per read), and what cut it short ("" when it ended): an endless or trickling answer is a difference in
    the table, not memory or a hang."""
    limit = MAX_ANSWER_BYTES if limit is None else limit
    parts: list[bytes] = []
    size = 0
    deadline = time.monotonic() + timeout
    try:
        while size <= limit:
            if time.monotonic() > deadline:
                return b"".join(parts), f"the answer did not end within {timeout:g} s"
            part = resp.read1(min(1 << 20, limit + 1 - size))
            if not part:
                return b"".join(parts), ""
            parts.append(part)
            size += len(part)
    except (OSError, http.client.HTTPException) as exc:
        return b"".join(parts), f"the answer broke off ({type(exc).__name__})"
    return b"".join(parts)[:limit], f"the answer is larger than {limit >> 20} MiB: cut"


def answer_body(ctype: str, raw: bytes, problem: str) -> Any:
    """What the table compares: the parsed body, or what cut it short (with how much came)."""
    return f"<{problem}; {len(raw)} bytes came>" if problem else parse_body(ctype, raw)


def parse_body(ctype: str, raw: bytes) -> Any:
    if "json" in ctype:
        try:
            return json.loads(raw)
        except (ValueError, RecursionError):
            return f"<invalid JSON, {len(raw)} bytes>"
    if "yaml" in ctype:
        from dragoman.fleet.errors import UserError
        from dragoman.fleet.safefile import parse_documents

        try:
            docs = parse_documents(raw, "the answer")  # the one bounded reader: an alias bomb is not expanded
        except UserError:
            return f"<invalid YAML, {len(raw)} bytes>"
        return docs[0] if len(docs) == 1 else docs
    if not raw:
        return None
    if "protobuf" in ctype:
        # The envelope's magic and the kind's name are what a client reads first; the rest is binary.
        return {
            "protobuf": raw[:4].hex(),
            "mentions": sorted(set(re.findall(rb"[A-Z][A-Za-z]{3,}List|[A-Z][a-z]+[A-Z][A-Za-z]+", raw[:200]))),
        }
    return f"<{ctype or 'no content type'}: {raw[:120].decode(errors='replace')}>"


# ------------------------------------------------------------------ normalizing what must differ

UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
PEM = re.compile(r"-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----\n?")
TIME = re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)")
# Keys whose value is per-server by nature (etcd's revision, the continue token that wraps it, a counter of
# repetitions that depends on timing); their presence is still compared.
OPAQUE_KEYS = {"resourceVersion": "<rv>", "continue": "<continue>", "uid": None}
# The phrasings in which kube-apiserver quotes a resourceVersion. Always this server's current revision: the
# number after "current:" in "Too large resource version: N, current: M" (etcd3/cacher) and the one in parentheses
# in "too old resource version: N (M)".
RV_CURRENT = re.compile(r"((?:[Rr]esource version: \d+, current: )|(?:resource version: \d+ \())\d+")
# A number a phrase names as a resourceVersion ("resource version: 5", "ResourceVersion in precondition: 5",
# "resourceVersion=5", 'resourceVersion: Invalid value: "5"'): normalized when it is one of this side's versions
# (a client sends each side its own), kept when the client sent the same on both sides.
RV_QUOTED = re.compile(
    r'((?i:resource ?version)(?: in (?:precondition|object meta))?(?:: Invalid value:)?[:=]? ?"?)(\d+)(?![0-9])'
)
# A Table's age cell ("151d", "6m11s"): the fleet's objects were created at other times on each side.
AGE = re.compile(r"^(?:\d+[smhdy]){1,2}$|^<invalid>$")


@dataclasses.dataclass
class Normalizer:
    """Per side: the strings only that side can produce, replaced by placeholders shared by both."""

    server: str = ""
    netloc: str = ""
    rvs: set[str] = dataclasses.field(default_factory=set)
    names: dict[str, str] = dataclasses.field(default_factory=dict)  # generated name -> generateName + "<sfx>"

    def learn(self, doc: Any) -> None:
        """Collect the generated names and resourceVersions in `doc`, so every later mention is normalized too."""
        for obj in _objects(doc):
            md = obj.get("metadata") or {}
            rv = md.get("resourceVersion")
            if isinstance(rv, str) and rv.isdigit():
                self.rvs.add(rv)
            gen, name = md.get("generateName"), md.get("name")
            if isinstance(gen, str) and gen and isinstance(name, str) and name.startswith(gen) and name != gen:
                self.names.setdefault(name, gen + "<sfx>")
            for vol in (obj.get("spec") or {}).get("volumes") or () if isinstance(obj.get("spec"), dict) else ():
                # The service account token volume's suffix is generated by admission (names.SimpleNameGenerator).
                vname = vol.get("name") if isinstance(vol, dict) else None
                if isinstance(vname, str) and re.fullmatch(r"kube-api-access-[a-z0-9]{5}", vname):
                    self.names.setdefault(vname, "kube-api-access-<sfx>")
            labels = md.get("labels") or {}
            h = labels.get("pod-template-hash") or labels.get("controller-revision-hash")
            if isinstance(h, str) and h:
                # The hash of a pod template: a different hash function per implementation is not a behaviour.
                tail = h.rsplit("-", 1)[-1]
                if len(tail) >= 5:
                    self.names.setdefault(tail, "<hash>")
        if isinstance(doc, dict):
            meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
            rv = meta.get("resourceVersion")
            if isinstance(rv, str) and rv.isdigit():
                self.rvs.add(rv)

    def string(self, s: str) -> str:
        if "-----BEGIN CERTIFICATE-----" in s:
            # A cluster's own CA (kube-root-ca.crt): per server by nature, like a uid.
            s = PEM.sub("<certificate>", s)
        if self.server and self.server in s:
            s = s.replace(self.server, "<server>")
        if self.netloc and self.netloc in s:
            s = s.replace(self.netloc, "<server>")
        s = TIME.sub("<time>", s)
        s = UUID.sub("<uid>", s)
        for name in sorted(self.names, key=len, reverse=True):
            if name in s:
                s = re.sub(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])", self.names[name], s)
        return s

    def message(self, s: str) -> str:
        """A message may quote a resourceVersion ("too old resource version: 1 (266)"): this side's are normalized."""
        # A name the server generated for an object that was never made (a pod a quota refused) is named only here.
        s = re.sub(r'(pods? ")([a-z0-9.-]+?-)[bcdfghjklmnpqrstvwxz2456789]{5}(")', r"\1\2<sfx>\3", s)
        s = self.string(s)
        # A ReplicaSet's name ends in its pod-template-hash, a hash of the template each implementation computes its
        # own way (kube-controller-manager: FNV-32a over Go's dump of the struct).
        s = re.sub(r'((?:ReplicaSet|replica set) "[a-z0-9.-]+-)[bcdfghjklmnpqrstvwxz2456789]{10}"', r'\1<hash>"', s)
        # Only where a message's phrasing quotes a resourceVersion; any other number ("no more than 63 bytes", a
        # count, a port) is the message's own, whatever versions this side happens to have reached.
        s = RV_CURRENT.sub(r"\1<rv>", s)
        if self.rvs:
            s = RV_QUOTED.sub(lambda m: m.group(1) + ("<rv>" if m.group(2) in self.rvs else m.group(2)), s)
        return s

    def value(self, v: Any, key: str = "") -> Any:
        if key == "managedFields" and isinstance(v, list):
            return self.value(managed_fields(v), "")
        if key == "groups" and isinstance(v, list) and all(isinstance(g, dict) and "versions" in g for g in v):
            # An APIGroupList by group name: a group one server serves and the other does not is one difference,
            # not a shift of every group after it.
            return {str(g.get("name")): self.value(g, "") for g in v}
        if key == "conditions" and isinstance(v, list) and all(isinstance(c, dict) and "type" in c for c in v):
            # Conditions are a map by type (their merge key); the order two writers reach the list is timing.
            return {str(c["type"]): self.value(c, "") for c in v}
        if key == "cells" and isinstance(v, list):
            return [self.string(AGE.sub("<age>", c)) if isinstance(c, str) else self.value(c) for c in v]
        if isinstance(v, dict):
            return {k: self.value(x, k) for k, x in v.items()}
        if isinstance(v, list):
            return [self.value(x, key) for x in v]
        if isinstance(v, str):
            if key in OPAQUE_KEYS and v:
                return OPAQUE_KEYS[key] or "<uid>"
            return self.message(v) if key == "message" else self.string(v)
        return v


def managed_fields(entries: list) -> Any:
    """managedFields as {"manager operation [subresource]": [field paths]}: which writer owns which fields is the
    behaviour; the entries' order and times are not."""
    out: dict[str, list[str]] = {}
    for e in entries:
        if not isinstance(e, dict):
            return entries
        key = " ".join(str(e.get(k)) for k in ("manager", "operation", "subresource") if e.get(k))
        paths = _field_paths(e.get("fieldsV1") or {})
        # A container's own marker (`f:labels/.`) beside its children says no more than the children do.
        out[key] = sorted(
            p for p in paths if not (p.endswith("/.") and any(q.startswith(p[:-1]) and q != p for q in paths))
        )
    return out


def _field_paths(fields: dict, prefix: str = "") -> list[str]:
    out = []
    for k, v in fields.items():
        path = f"{prefix}/{k}" if prefix else k
        if isinstance(v, dict) and v:
            out.extend(_field_paths(v, path))
        else:
            out.append(path)
    return out


def _objects(doc: Any) -> Iterator[dict]:
    """Every dict in `doc` that has a metadata dict (objects, list items, watch event objects, Table rows' objects)."""
    stack = [doc]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            if isinstance(v.get("metadata"), dict):
                yield v
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)


# Fields whose value depends on when it was measured or on how many times something happened, not on what the
# server does: their presence is compared, their value is not.
TIMING_KEYS = {"count", "age", "lastHeartbeatTime", "lastProbeTime", "lastTransitionTime", "heartbeatTime"}


def flatten(v: Any, prefix: str = "") -> dict[str, Any]:
    """{"a.b[0].c": leaf}; an empty dict or list is a leaf of its own (presence of `{}` is a difference too)."""
    out: dict[str, Any] = {}
    if isinstance(v, dict):
        if not v and prefix:
            out[prefix] = {}
        for k, x in v.items():
            out.update(flatten(x, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(v, list):
        if not v and prefix:
            out[prefix] = []
        for i, x in enumerate(v):
            out.update(flatten(x, f"{prefix}[{i}]"))
    else:
        out[prefix or "."] = v
    return out


# ------------------------------------------------------------------ comparing


@dataclasses.dataclass(frozen=True)
class Difference:
    area: str  # "api" or "behaviour" (the table's grouping), with the case's own group after a slash
    case: str
    path: str
    embedded: Any
    real: Any

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def compare(area: str, case: str, embedded: Any, real: Any) -> list[Difference]:
    """Every path whose presence or value differs between two normalized observations.

    Two answers of different codes or kinds (an object against a Status) differ in that, and in the message: a
    field-by-field list of one object against a Status would only bury it."""
    if isinstance(embedded, dict) and isinstance(real, dict) and "code" in embedded and "code" in real:
        if (embedded["code"], embedded.get("kind")) != (real["code"], real.get("kind")):
            embedded, real = _headline(embedded), _headline(real)
    a, b = flatten(embedded), flatten(real)
    out = []
    for path in sorted(set(a) | set(b), key=_path_key):
        va, vb = a.get(path, MISSING), b.get(path, MISSING)
        leaf = path.rsplit(".", 1)[-1].split("[", 1)[0]
        if leaf in TIMING_KEYS and va is not MISSING and vb is not MISSING:
            continue
        if va != vb:
            out.append(Difference(area, case, path, va, vb))
    return out


def _headline(obs: dict) -> dict:
    body = obs.get("body")
    msg = body.get("message", MISSING) if isinstance(body, dict) else MISSING
    return {k: obs.get(k, MISSING) for k in ("code", "kind", "reason")} | {"message": msg}


def _path_key(path: str) -> list:
    # A part is a number (a list index) in one path and a word in another ("nvidia.com/gpu" next to "cpu.0"):
    # numbers sort before words and never meet them in a comparison.
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"[.\[\]]+", path)]


# ------------------------------------------------------------------ the allowlist


@dataclasses.dataclass(frozen=True)
class Allowed:
    area: str
    case: str
    path: str
    reason: str

    def matches(self, d: Difference) -> bool:
        # `case` may list several patterns (one reason for several requests), joined by " | " when loaded.
        cases = self.case.split(" | ")
        return bool(
            _glob(self.area).fullmatch(d.area)
            and any(_glob(c).fullmatch(d.case) for c in cases)
            and _glob(self.path).fullmatch(d.path)
        )


def _glob(pattern: str) -> re.Pattern:
    # `*` is the only wildcard: paths hold `[0]`, which fnmatch would read as a character class.
    return re.compile(".*".join(re.escape(p) for p in pattern.split("*")))


def load_allowlist(path: pathlib.Path | None = None) -> list[Allowed]:
    """The allowlist's entries, read through the one bounded reader (fleet/safefile.read_documents): an alias bomb,
    invalid YAML or a shape that is not a list of entries is a ValueError (or UserError) of one sentence."""
    from dragoman.fleet.safefile import read_documents

    docs = read_documents(
        str(path or ALLOWLIST), "the allowlist", max_bytes=MAX_ALLOWLIST_BYTES, expect="an allowlist", max_depth=10
    )
    if len(docs) > 1:
        raise ValueError(f"it holds {len(docs)} YAML documents; an allowlist is one list of entries")
    raw = (docs[0] if docs else None) or []
    if not isinstance(raw, list):
        raise ValueError("it is not a list of entries (area, case, path, reason)")
    out = []
    for i, e in enumerate(raw):
        if not isinstance(e, dict):
            raise ValueError(f"allowlist entry {i + 1} is not a mapping of area, case, path and reason")
        missing = [k for k in ("area", "case", "path", "reason") if not str(e.get(k) or "").strip()]
        if missing:
            raise ValueError(f"allowlist entry {i + 1} lacks {', '.join(missing)}: each says what differs and why")
        case = " | ".join(map(str, e["case"])) if isinstance(e["case"], list) else str(e["case"])
        out.append(Allowed(str(e["area"]), case, str(e["path"]), " ".join(str(e["reason"]).split())))
    return out


def split(diffs: list[Difference], allow: list[Allowed]) -> tuple[list[Difference], dict[Allowed, int]]:
    """(differences no entry allows, how many differences each entry allowed)."""
    left, used = [], {a: 0 for a in allow}
    for d in diffs:
        hit = next((a for a in allow if a.matches(d)), None)
        if hit is None:
            left.append(d)
        else:
            used[hit] += 1
    return left, used


# ------------------------------------------------------------------ running a corpus on both sides


@dataclasses.dataclass
class Request:
    """One API request of the corpus. `{name}` in path/body is the side's variable (captured by earlier cases)."""

    name: str
    method: str
    path: str
    body: Any = None
    content_type: str | None = None
    accept: str | None = "application/json"
    group: str = "api"
    watch: dict | None = None  # {max_events, until_bookmark}: read a WATCH
    capture: dict[str, str] = dataclasses.field(default_factory=dict)  # var -> dotted path in the answer's body
    compare_body: bool = True  # False: only the code, kind, reason and media type (a body that is per server)
    # The fleet's own objects: the embedded side loads the scenario file, the real one writes it through the API
    # (loader.py), so who wrote which field (managedFields) differs by construction.
    fleet: bool = False
    settle: float = 0.0  # seconds to wait before sending (the controllers' reaction to the previous write)
    user_agent: str | None = None  # a client library's own (its field manager when the request names none)


@dataclasses.dataclass
class Behaviour:
    """A behaviour case: `run(side)` does the actions on one side and returns what it observed (normalized later)."""

    name: str
    run: Callable[[Side], Any]
    group: str = "behaviour"
    # The case this one runs beside (run_corpus), at the same time, when that case runs just before it (else alone):
    # for cases that mostly wait on a controller's clock and touch none of the objects the other reads (own node, own
    # pods).
    alongside: str = ""


@dataclasses.dataclass
class KubectlCase:
    name: str
    args: list[str]
    group: str = "api/kubectl"


class Side:
    """A target plus its normalizer: what a case drives and what it observes."""

    def __init__(self, name: str, target: Target, kubectl: str | None = None) -> None:
        self.name = name
        self.target = target
        self.norm = Normalizer(server=target.server, netloc=target.netloc)
        self.notes: list[str] = []
        self.kubectl = kubectl
        self.kubeconfig_path: pathlib.Path | None = None
        # How a behaviour case's node joins this side: None posts the Node and its status as a kubelet agent's
        # node does; a real-kubelet side starts a kubelet that registers it (differential_kubelets.py).
        self.join_node: Callable[[dict], None] | None = None
        # How a case stops (True) or starts again (False) a node's "kubelet" or "runtime": None patches the node's
        # annotation the Python agents play; a real-kubelet side stops the process (kubelets.RealKubelets.fault).
        self.node_fault: Callable[[str, str, bool], None] | None = None

    def fill(self, v: Any) -> Any:
        if isinstance(v, str):
            return re.sub(r"\{(\w+)\}", lambda m: self.target.vars.get(m.group(1), m.group(0)), v)
        if isinstance(v, dict):
            return {k: self.fill(x) for k, x in v.items()}
        if isinstance(v, list):
            return [self.fill(x) for x in v]
        return v

    def call(self, method: str, path: str, body: Any = None, **kw: Any) -> Answer:
        ans = self.target.send(method, self.fill(path), self.fill(body), **kw)
        self.norm.learn(ans.body)
        return ans

    def get(self, path: str) -> Any:
        ans = self.call("GET", path)
        return ans.body if ans.code == 200 else None

    def note(self, case: str, text: str) -> None:
        """Something the report should say about this side's run of a case (Result.notes), outside the comparison."""
        self.notes.append(f"{case} on {self.name}: {text}")

    def wait(self, check: Callable[[], Any], timeout: float, interval: float = 0.5) -> Any:
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            last = check()
            if last:
                return last
            time.sleep(interval)
        return last


def observe_answer(ans: Answer, req: Request | None = None) -> dict:
    body = ans.body
    if req is not None and req.watch is not None and isinstance(body, dict) and "events" in body:
        body = {"events": [watch_event(e) for e in body["events"]]}
    if req is not None and req.fleet:
        body = without_managed_fields(body)
    out: dict[str, Any] = {
        "code": ans.code,
        "contentType": ans.headers.get("content-type", ans.content_type.split(";")[0]),
    }
    if "warning" in ans.headers:
        out["warning"] = ans.headers["warning"]
    if isinstance(body, dict):
        out["kind"] = body.get("kind", MISSING)
        if body.get("kind") == "Status":
            out["reason"] = body.get("reason", MISSING)
    if req is None or req.compare_body:
        out["body"] = body
    return out


def watch_event(ev: dict) -> dict:
    """A watch event as a watcher acts on it: its type and which object (an ERROR's Status in full; a bookmark's
    annotations). The objects themselves are compared by the GETs around the watch."""
    obj = ev.get("object") or {}
    if ev.get("type") == "ERROR" or obj.get("kind") == "Status":
        return {"type": ev.get("type"), "object": obj}
    md = obj.get("metadata") or {}
    if ev.get("type") == "BOOKMARK":
        return {
            "type": "BOOKMARK",
            "apiVersion": obj.get("apiVersion"),
            "kind": obj.get("kind"),
            "annotations": md.get("annotations") or {},
        }
    return {
        "type": ev.get("type"),
        # The API an object came through: a watch of events.k8s.io/v1 delivers that view of a core Event.
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "name": md.get("name"),
        "deleting": "deletionTimestamp" in md,
    }


def without_managed_fields(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: without_managed_fields(v) for k, v in doc.items() if k != "managedFields"}
    if isinstance(doc, list):
        return [without_managed_fields(v) for v in doc]
    return doc


def _dig(v: Any, path: str) -> Any:
    for part in path.split("."):
        if isinstance(v, list) and part.isdigit():
            v = v[int(part)] if int(part) < len(v) else None
        elif isinstance(v, dict):
            v = v.get(part)
        else:
            return None
    return v


def run_request(side: Side, req: Request) -> Any:
    if req.settle:
        time.sleep(req.settle)
    if req.watch is not None:
        ans = side.target.watch(side.fill(req.path), **req.watch)
        side.norm.learn(ans.body)
    else:
        ans = side.call(
            req.method, req.path, req.body, content_type=req.content_type, accept=req.accept, user_agent=req.user_agent
        )
    for var, where in req.capture.items():
        got = _dig(ans.body, where)
        if got is not None:
            side.target.vars[var] = str(got)
    return side.norm.value(observe_answer(ans, req))


def run_kubectl(side: Side, case: KubectlCase) -> Any:
    """kubectl against one side at -v=6: the requests it sent (method, path, answer) and what it printed."""
    import subprocess

    assert side.kubectl and side.kubeconfig_path
    args = [side.fill(a) for a in case.args]
    import tempfile

    # A fresh discovery cache per command: otherwise what kubectl asks depends on what an earlier run cached.
    with tempfile.TemporaryDirectory(prefix="dragoman-diff-kubectl-") as cache:
        p = subprocess.run(
            [side.kubectl, "--kubeconfig", str(side.kubeconfig_path), "--cache-dir", cache, "-v=6", *args],
            capture_output=True,
            text=True,
            timeout=120,
        )
    requests = []
    for line in p.stderr.splitlines():
        m = re.search(r'"Response" verb="(\w+)" url="([^"]+)" status="(\d+)', line) or re.search(
            r"\] (GET|POST|PUT|PATCH|DELETE) (https://\S+) (\d+)", line
        )
        if m:
            url = urllib.parse.urlsplit(m.group(2))
            requests.append(f"{m.group(1)} {url.path}{'?' + url.query if url.query else ''} {m.group(3)}")
    errors = [ln for ln in p.stderr.splitlines() if not re.match(r"^[IW]\d{4} ", ln)]
    return side.norm.value({"exit": p.returncode, "requests": requests, "stdout": p.stdout, "stderr": errors})


@dataclasses.dataclass
class Result:
    differences: list[Difference]
    counts: dict[str, int]  # cases run per group
    seconds: float
    errors: list[str] = dataclasses.field(default_factory=list)
    case_seconds: dict[str, float] = dataclasses.field(default_factory=dict)  # the slower side's time per case
    # What a case tells beside its observation (Side.note): a scenario run again after the side's own transient
    # failure, with the failure's words. Printed, never compared.
    notes: list[str] = dataclasses.field(default_factory=list)

    def slowest(self, n: int = 8) -> str:
        """The cases that took longest: where the suite's minutes go."""
        top = sorted(self.case_seconds.items(), key=lambda kv: -kv[1])[:n]
        return ", ".join(f"{name} {sec:.0f} s" for name, sec in top)


def run_corpus(sides: dict[str, Side], cases: list, areas: set[str] | None = None, settle_scale: float = 1.0) -> Result:
    """Every case on both sides (at once), compared after normalizing."""
    from concurrent.futures import ThreadPoolExecutor

    t0 = time.monotonic()
    diffs: list[Difference] = []
    counts: dict[str, int] = {}
    errors: list[str] = []
    took: dict[str, float] = {}
    batches: list[list[Any]] = []
    for case in cases:
        top = case.group.split("/", 1)[0]
        if areas and top not in areas:
            continue
        if isinstance(case, Request) and case.settle:
            case = dataclasses.replace(case, settle=case.settle * settle_scale)
        if batches and isinstance(case, Behaviour) and case.alongside in {c.name for c in batches[-1]}:
            batches[-1].append(case)
        else:
            batches.append([case])
    pool = ThreadPoolExecutor(2 * max((len(b) for b in batches), default=1), thread_name_prefix="differential")
    for batch in batches:
        started = time.monotonic()
        # Both sides at once: they are independent servers, and a behaviour case spends its time waiting. A case
        # marked `alongside` runs beside the one before it, on both sides too.
        futures = {(case.name, name): pool.submit(_timed, sides[name], case) for case in batch for name in SIDES}
        for case in batch:
            seen = {}
            for name in SIDES:
                seen[name], err, ended = futures[(case.name, name)].result()
                took[case.name] = max(took.get(case.name, 0.0), ended - started)
                if err:
                    errors.append(f"{case.name} on {name}: {err}")
            counts[case.group] = counts.get(case.group, 0) + 1
            # Normalize again with what both runs of the case taught (a name generated late in the answer).
            a = sides["embedded"].norm.value(seen["embedded"])
            b = sides["real"].norm.value(seen["real"])
            diffs.extend(compare(case.group, case.name, a, b))
    pool.shutdown()
    notes = [n for name in SIDES for n in sides[name].notes]
    return Result(diffs, counts, time.monotonic() - t0, errors, took, notes)


def _timed(side: Side, case: Any) -> tuple[Any, str | None, float]:
    seen, err = _run_case(side, case)
    return seen, err, time.monotonic()


def _run_case(side: Side, case: Any) -> tuple[Any, str | None]:
    try:
        if isinstance(case, Request):
            return run_request(side, case), None
        if isinstance(case, KubectlCase):
            return run_kubectl(side, case), None
        return side.norm.value(case.run(side)), None
    except Exception as exc:  # noqa: BLE001 - a side's failure is that side's answer, compared like any other
        return {"error": f"{type(exc).__name__}: {exc}"}, f"{type(exc).__name__}: {exc}"


def case_matches(name: str, patterns: list[str] | None) -> bool:
    """Whether a case is selected by `--case` patterns (shell wildcards, case-sensitive; none selects every case)."""
    import fnmatch

    return not patterns or any(fnmatch.fnmatchcase(name, p) for p in patterns)


# ------------------------------------------------------------------ the two control planes


class _LoopThread:
    """An asyncio loop in a thread: the servers and agents are asyncio, the harness drives them synchronously."""

    def __init__(self) -> None:
        import asyncio

        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="differential-loop", daemon=True)
        self.thread.start()

    def run(self, coro: Any, timeout: float | None = None) -> Any:
        import asyncio

        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@contextlib.contextmanager
def embedded_side(scenario: str = "demo") -> Iterator[Target]:
    """The embedded simulator with every controller, as `dragoman sim serve --demo` runs it."""
    from dragoman.sim import scenario as scenario_mod
    from dragoman.sim.controllers import default_controllers
    from dragoman.sim.server import Simulator

    sc = scenario_mod.load(scenario)
    lt = _LoopThread()

    async def make() -> Simulator:
        # The real control plane's clock is the wall's: the simulator judged beside it starts now too.
        sim = Simulator.from_scenario(sc, real_time=True)
        for c in default_controllers(sim):
            sim.add_controller(c)
        await sim.start()
        return sim

    sim = lt.run(make(), 120)
    try:
        yield Target.from_kubeconfig("embedded", sim.kubeconfig())
    finally:
        lt.run(sim.stop(), 60)
        lt.close()


@contextlib.contextmanager
def real_side(
    binaries: str | pathlib.Path, scenario: str = "demo", log: Callable[[str], None] = lambda s: None
) -> Iterator[Target]:
    """The real control plane with the scenario loaded and the node agents running (sim/controlplane RealCluster)."""
    from dragoman.sim import scenario as scenario_mod
    from dragoman.sim.controlplane import RealCluster

    sc = scenario_mod.load(scenario)
    cluster = RealCluster(binaries, sc.objects, sc.users)
    lt = _LoopThread()
    try:
        lt.run(cluster.start(), 900)
        log("real control plane: " + ", ".join(f"{k} {v:.0f} s" for k, v in cluster.timings.items()))
        yield Target.from_kubeconfig("real", cluster.kubeconfig())
    finally:
        try:
            lt.run(cluster.stop(), 120)
        finally:
            lt.close()


def wait_settled(target: Target, timeout: float = 240.0) -> float:
    """Until the fleet stops changing: the same pods in the same phases and every DaemonSet ready (but for the pods a
    node's fault keeps unready: the crash-looping driver on h100-dra), twice 5 s apart."""
    from dragoman.sim.controllers.base import unready_daemonsets

    t0 = time.monotonic()
    last = None
    while time.monotonic() - t0 < timeout:
        pods = target.send("GET", "/api/v1/pods").body.get("items") or []
        dss = target.send("GET", "/apis/apps/v1/daemonsets").body.get("items") or []
        state = (
            sorted(
                (p["metadata"].get("namespace"), p["metadata"]["name"], (p.get("status") or {}).get("phase"))
                for p in pods
            ),
            sorted((d["metadata"]["name"], (d.get("status") or {}).get("numberReady")) for d in dss),
        )
        nodes = target.send("GET", "/api/v1/nodes").body.get("items") or []
        ready = not unready_daemonsets(dss, nodes)
        if ready and state == last:
            return time.monotonic() - t0
        last = state
        time.sleep(5.0)
    return time.monotonic() - t0


def kubeconfig_file(target: Target, folder: pathlib.Path) -> pathlib.Path:
    from dragoman.fleet.safefile import write_atomic

    p = folder / f"{target.name}.kubeconfig"
    write_atomic(str(p), lambda f: yaml.safe_dump(target.kubeconfig, f, sort_keys=False), "the kubeconfig")
    return p


def kubectl_binary() -> str | None:
    import shutil

    cached = pathlib.Path.home() / ".cache" / "dragoman-tests" / "kubectl"
    return str(cached) if cached.exists() else shutil.which("kubectl")


# ------------------------------------------------------------------ the table


def table(
    result: Result,
    left: list[Difference],
    used: dict[Allowed, int],
    width: int = 60,
    titles: tuple[str, str] = ("embedded", "real"),
) -> str:
    def short(v: Any) -> str:
        s = "—" if v == MISSING else json.dumps(v, sort_keys=True) if not isinstance(v, str) else v
        s = " ".join(s.split())
        return s if len(s) <= width else s[: width - 1] + "…"

    lines = []
    by_area: dict[str, list[Difference]] = {}
    for d in left:
        by_area.setdefault(d.area, []).append(d)
    total_cases = sum(result.counts.values())
    groups = ", ".join(f"{g} {n}" for g, n in sorted(result.counts.items()))
    hit = sum(1 for n in used.values() if n)
    lines.append(
        f"{total_cases} cases ({groups}) in {result.seconds:.0f} s; {len(left)} differences not on the allowlist, "
        f"{sum(used.values())} allowed by {hit} of {len(used)} entries"
    )
    if result.case_seconds:
        lines.append(f"slowest: {result.slowest()}")
    for area in sorted(by_area):
        lines.append("")
        lines.append(f"== {area} ({len(by_area[area])})")
        lines.append(f"{'case':38} {'path':44} {titles[0]:30} {titles[1]}")
        for d in by_area[area]:
            lines.append(f"{d.case[:38]:38} {d.path[:44]:44} {short(d.embedded)[:30]:30} {short(d.real)}")
    unused = [a for a, n in used.items() if n == 0]
    if unused:
        lines.append("")
        lines.append("allowlist entries that matched nothing (remove them once their difference is gone):")
        lines.extend(f"  {a.area} {a.case} {a.path}" for a in unused)
    for n in result.notes:
        lines.append(f"note: {n}")
    for e in result.errors:
        lines.append(f"error: {e}")
    return "\n".join(lines)


# ------------------------------------------------------------------ one call: both sides up, the corpus, the verdict


def run(
    *,
    binaries: str | pathlib.Path | None = None,
    real_kubeconfig: str | None = None,
    embedded_kubeconfig: str | None = None,
    areas: set[str] | None = None,
    names: list[str] | None = None,
    scenario: str = "demo",
    log: Callable[[str], None] = lambda s: None,
) -> Result:
    """Start what is not given (the embedded simulator; the real control plane from `binaries`), let both settle,
    run the corpus on both (only the cases whose name matches one of `names`, shell wildcards, when given). A
    kubeconfig given for a side reuses that running cluster (fresh: the corpus writes)."""
    import tempfile

    from dragoman.sim.controlplane.differential_corpus import cases

    with contextlib.ExitStack() as stack:
        targets: dict[str, Target] = {}
        if embedded_kubeconfig:
            targets["embedded"] = Target.from_kubeconfig("embedded", embedded_kubeconfig)
        else:
            log("starting the embedded simulator")
            targets["embedded"] = stack.enter_context(embedded_side(scenario))
        if real_kubeconfig:
            targets["real"] = Target.from_kubeconfig("real", real_kubeconfig)
        else:
            assert binaries is not None
            log("starting the real control plane (about a minute)")
            targets["real"] = stack.enter_context(real_side(binaries, scenario, log))
        # Only the real side settles: the embedded one loads the demo's settled picture, and its churning cases (a
        # crash-looping pod, a flapping plugin) never stop changing, which a wait for stillness would sit out.
        log(f"real: settled after {wait_settled(targets['real']):.0f} s")
        folder = pathlib.Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="dragoman-diff-")))
        sides = {}
        for name, t in targets.items():
            side = Side(name, t, kubectl_binary())
            side.kubeconfig_path = kubeconfig_file(t, folder)
            sides[name] = side
        corpus = [c for c in cases() if not (isinstance(c, KubectlCase) and not kubectl_binary())]
        corpus = [c for c in corpus if case_matches(c.name, names)]
        try:
            return run_corpus(sides, corpus, areas)
        finally:
            from dragoman.sim.controlplane.differential_behaviour import cleanup

            for side in sides.values():
                cleanup(side)
