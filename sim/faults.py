"""Injected faults (off by default): error rates per verb and resource, latency, cut watches, conflicts on updates.

Spec syntax (`--faults`, a scenario's SimulatorConfig, or `Faults.set()`): rules separated by `;`, each rule a
few `key=value` words separated by spaces:

    error=0.1 code=500 verbs=list,watch resources=pods      10% of pod LIST/WATCH get a 500
    error=0.05 code=429 retry-after=2                        5% of every request gets 429 + Retry-After: 2
    error=0.02 code=timeout hang=5s verbs=get                2% of GETs hang 5 s, then 504
    latency=50ms                                             every request waits 50 ms more
    latency=20ms-200ms resources=resourceslices              a uniform delay for slice requests
    watch-cut-events=100 resources=pods                      pod watches end after 100 events
    watch-cut-after=30s                                      every watch ends after 30 s
    conflict=0.2 resources=nodes                             20% of node updates/patches get a 409
    lost-answer=0.05 verbs=create                            5% of creates are made, then answered 500
    seed=7                                                   the random draws are repeatable

`verbs` are get, list, watch, create, update, patch, delete, deletecollection; `resources` are plurals
(`pods`, `resourceslices`) or store keys (`daemonsets.apps`). A rule without them applies to all.
"""

from __future__ import annotations

import dataclasses
import random
import re

VERBS = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")
WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})


class FaultSpecError(ValueError):
    """A --faults spec that does not parse; the message is a sentence for the operator."""


def parse_duration(text: str) -> float:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m)?", text.strip())
    if not m:
        raise FaultSpecError(f"{text!r} is not a duration; write it like 50ms, 2s or 1m.")
    value = float(m.group(1))
    unit = m.group(2) or "s"
    return value / 1000 if unit == "ms" else value * 60 if unit == "m" else value


def _rate(text: str, key: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise FaultSpecError(f"{key}={text} is not a rate; write a number between 0 and 1, like {key}=0.1.") from None
    if not 0 <= value <= 1:
        raise FaultSpecError(f"{key}={text} is not a rate between 0 and 1.")
    return value


@dataclasses.dataclass
class Rule:
    kind: str  # error | latency | watch-cut | conflict | lost-answer
    rate: float = 0.0
    code: str = "500"
    retry_after: int = 1
    hang: float = 60.0
    latency: tuple[float, float] = (0.0, 0.0)
    cut_events: int | None = None
    cut_after: float | None = None
    verbs: frozenset[str] | None = None
    resources: frozenset[str] | None = None

    def applies(self, verb: str, resource: str) -> bool:
        if self.verbs is not None and verb not in self.verbs:
            return False
        if self.resources is not None:
            plural = resource.split(".", 1)[0]
            if resource not in self.resources and plural not in self.resources:
                return False
        return True


@dataclasses.dataclass
class Injection:
    """What to do to one request: answer `code` (500, 429 or 504 after `hang` seconds)."""

    code: int
    retry_after: int | None = None
    hang: float = 0.0


def parse(spec: str) -> tuple[list[Rule], int | None]:
    rules: list[Rule] = []
    seed = None
    for raw in spec.split(";"):
        words = raw.split()
        if not words:
            continue
        fields: dict[str, str] = {}
        for w in words:
            if "=" not in w:
                raise FaultSpecError(f"fault rule word {w!r} has no '='; write key=value, e.g. error=0.1.")
            k, v = w.split("=", 1)
            fields[k.strip().lower()] = v.strip()
        first = words[0].split("=", 1)[0].lower()
        if first == "seed":
            try:
                seed = int(fields["seed"])
            except ValueError:
                raise FaultSpecError(f"seed={fields['seed']} is not an integer.") from None
            continue
        rule: Rule
        if first == "error":
            rule = Rule("error", rate=_rate(fields["error"], "error"))
            code = fields.get("code", "500").lower()
            if code not in ("500", "429", "timeout", "503"):
                raise FaultSpecError(f"code={code} is not a fault this server injects; use 500, 503, 429 or timeout.")
            rule.code = code
            if "retry-after" in fields:
                rule.retry_after = int(parse_duration(fields["retry-after"]))
            if "hang" in fields:
                rule.hang = parse_duration(fields["hang"])
        elif first == "latency":
            value = fields["latency"]
            if "-" in value:
                lo, hi = value.split("-", 1)
                rule = Rule("latency", latency=(parse_duration(lo), parse_duration(hi)))
            else:
                d = parse_duration(value)
                rule = Rule("latency", latency=(d, d))
        elif first == "watch-cut-events":
            try:
                rule = Rule("watch-cut", cut_events=int(fields["watch-cut-events"]))
            except ValueError:
                raise FaultSpecError(f"watch-cut-events={fields['watch-cut-events']} is not a whole number.") from None
        elif first == "watch-cut-after":
            rule = Rule("watch-cut", cut_after=parse_duration(fields["watch-cut-after"]))
        elif first == "conflict":
            rule = Rule("conflict", rate=_rate(fields["conflict"], "conflict"))
        elif first == "lost-answer":
            rule = Rule("lost-answer", rate=_rate(fields["lost-answer"], "lost-answer"))
        else:
            raise FaultSpecError(
                f"unknown fault {first!r}; a rule starts with error=, latency=, watch-cut-events=, "
                "watch-cut-after=, conflict=, "
                "lost-answer= or seed=."
            )
        if "verbs" in fields:
            verbs = frozenset(v for v in fields["verbs"].split(",") if v)
            bad = sorted(verbs - set(VERBS))
            if bad:
                raise FaultSpecError(f"unknown verb {bad[0]!r} in a fault rule; use {', '.join(VERBS)}.")
            rule.verbs = verbs
        if "resources" in fields:
            rule.resources = frozenset(r for r in fields["resources"].split(",") if r)
        known = {
            "error",
            "code",
            "retry-after",
            "hang",
            "latency",
            "watch-cut-events",
            "watch-cut-after",
            "conflict",
            "lost-answer",
            "verbs",
            "resources",
        }
        extra = sorted(set(fields) - known)
        if extra:
            raise FaultSpecError(f"unknown key {extra[0]!r} in fault rule {raw.strip()!r}.")
        rules.append(rule)
    return rules, seed


class Faults:
    """The faults in force; the server asks it about every request."""

    def __init__(self, spec: str = "") -> None:
        self.rules: list[Rule] = []
        self.random = random.Random(0)
        self.spec = ""
        if spec:
            self.set(spec)

    def set(self, spec: str) -> None:
        rules, seed = parse(spec)
        self.rules = rules
        self.spec = spec
        self.random = random.Random(seed if seed is not None else 0)

    def clear(self) -> None:
        self.rules = []
        self.spec = ""

    @property
    def active(self) -> bool:
        return bool(self.rules)

    def error(self, verb: str, resource: str) -> Injection | None:
        for r in self.rules:
            if r.kind == "error" and r.applies(verb, resource) and self.random.random() < r.rate:
                if r.code == "429":
                    return Injection(429, retry_after=r.retry_after)
                if r.code == "timeout":
                    return Injection(504, hang=r.hang)
                return Injection(int(r.code))
        return None

    def latency(self, verb: str, resource: str) -> float:
        total = 0.0
        for r in self.rules:
            if r.kind == "latency" and r.applies(verb, resource):
                lo, hi = r.latency
                total += lo if lo == hi else self.random.uniform(lo, hi)
        return total

    def watch_limits(self, resource: str) -> tuple[int | None, float | None]:
        events: int | None = None
        seconds: float | None = None
        for r in self.rules:
            if r.kind == "watch-cut" and r.applies("watch", resource):
                if r.cut_events is not None:
                    events = r.cut_events if events is None else min(events, r.cut_events)
                if r.cut_after is not None:
                    seconds = r.cut_after if seconds is None else min(seconds, r.cut_after)
        return events, seconds

    def lost_answer(self, verb: str, resource: str) -> bool:
        """Whether this write is made and then answered 500, as when a connection drops after the commit."""
        for r in self.rules:
            if (
                r.kind == "lost-answer"
                and verb in WRITE_VERBS
                and r.applies(verb, resource)
                and self.random.random() < r.rate
            ):
                return True
        return False

    def conflict(self, verb: str, resource: str) -> bool:
        for r in self.rules:
            if (
                r.kind == "conflict"
                and verb in ("update", "patch")
                and r.applies(verb, resource)
                and self.random.random() < r.rate
            ):
                return True
        return False
