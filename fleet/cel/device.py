"""Turning one raw ResourceSlice device into the `device` variable of DRA CEL, as the scheduler builds it."""

from __future__ import annotations

from typing import Any

from dragoman.fleet.cel.api import CelDevice
from dragoman.fleet.cel.values import Quantity, Semver, ValueError_


class UnsupportedAttribute:
    """An attribute the scheduler cannot convert (no scalar value, bad version): reading any attribute then fails."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message


def split_qualified_name(name: str, default_domain: str) -> tuple[str, str]:
    """`domain/id` → (domain, id); a bare id belongs to the driver's domain (cel/compile.go parseQualifiedName)."""
    sep = name.find("/")
    if sep == -1:
        return default_domain, name
    return name[:sep], name[sep + 1 :]


_VERSIONS: dict[str, Any] = {}
_QUANTITIES: dict[str, Any] = {}


def _parse_version(text: str) -> Any:
    # A fleet repeats a handful of driver/CUDA versions across thousands of devices: parse each once.
    v = _VERSIONS.get(text)
    if v is None:
        try:
            v = Semver.parse(text)
        except ValueError_ as exc:
            v = UnsupportedAttribute(f"parse semantic version: {exc}")
        if len(_VERSIONS) < 10000:
            _VERSIONS[text] = v
    return v


def parse_quantity(text: str) -> Quantity:
    q = _QUANTITIES.get(text)
    if q is None:
        q = Quantity.parse(text)
        if len(_QUANTITIES) < 10000:
            _QUANTITIES[text] = q
    return q


_SCALAR_TYPES = {"string": str, "int": int, "bool": bool}
_NONE: dict = {}
_ABSENT = object()


def converts_plainly(device: dict) -> bool:
    """Whether a raw device converts without error and without a list attribute: every attribute exactly one scalar
    field (a version that parses), every capacity a quantity that parses. Such a device's CEL values are its raw
    values, so devices equal in the raw fields a selector reads get the same verdict (fleeteval groups by them).

    Asked of every device of a fleet the first time a selector groups them (20,000 at the scale benchmark, each with
    about ten attributes): the parse caches are read inline, and a string or version attribute (nearly all of them)
    is read with one lookup before any other field is unpacked (a third less time than unpacking each)."""
    versions, unsupported = _VERSIONS, UnsupportedAttribute
    for attr in (device.get("attributes") or _NONE).values():
        if attr.__class__ is not dict or len(attr) != 1:
            return False
        v = attr.get("string", _ABSENT)
        if v is not _ABSENT:
            if v.__class__ is not str:
                return False
            continue
        v = attr.get("version", _ABSENT)
        if v is not _ABSENT:
            if v is None:
                return False
            parsed = versions.get(v) if v.__class__ is str else None
            if parsed is None:
                parsed = _parse_version(str(v))
            if parsed.__class__ is unsupported:
                return False
            continue
        ((k, v),) = attr.items()
        t = _SCALAR_TYPES.get(k)
        if t is None or v.__class__ is not t:
            return False
    quantities = _QUANTITIES
    for cap in (device.get("capacity") or _NONE).values():
        raw = cap.get("value") if isinstance(cap, dict) else cap
        if raw.__class__ is str and raw in quantities:
            continue
        try:
            parse_quantity(str(raw))
        except ValueError_:
            return False
    return True


def attribute_value(attr: dict) -> Any:
    """The one scalar of a DeviceAttribute (list forms: list_attribute_value)."""
    if not isinstance(attr, dict):
        return UnsupportedAttribute("unsupported attribute value")
    if attr.get("int") is not None:
        return int(attr["int"])
    if attr.get("bool") is not None:
        return bool(attr["bool"])
    if attr.get("string") is not None:
        return str(attr["string"])
    if attr.get("version") is not None:
        return _parse_version(str(attr["version"]))
    return UnsupportedAttribute("unsupported attribute value")


_LIST_FIELDS = ("ints", "bools", "strings", "versions")  # getAttributeValue's order


def list_attribute_value(attr: Any) -> Any:
    """The list of a list-valued DeviceAttribute (DRAListTypeAttributes), None if it has none, or
    UnsupportedAttribute."""
    if not isinstance(attr, dict):
        return None
    for field in _LIST_FIELDS:
        values = attr.get(field)
        if values is None:
            continue
        if not isinstance(values, list):
            return UnsupportedAttribute("unsupported attribute value")
        if field == "ints":
            return [int(v) for v in values]
        if field == "bools":
            return [bool(v) for v in values]
        if field == "strings":
            return [str(v) for v in values]
        out = []
        for v in values:
            parsed = _parse_version(str(v))
            if type(parsed) is UnsupportedAttribute:
                return parsed
            out.append(parsed)
        return out
    return None


_SPLIT: dict[tuple[str, str], tuple[str, str]] = {}


def _split(name: str, driver: str) -> tuple[str, str]:
    # Attribute names repeat across every device of a driver: split each once.
    key = (name, driver)
    r = _SPLIT.get(key)
    if r is None:
        r = split_qualified_name(name, driver)
        if len(_SPLIT) < 100000:
            _SPLIT[key] = r
    return r


def _scalar(attr: Any) -> Any:
    if type(attr) is dict and len(attr) == 1:
        # The common case, exactly one field set (as validation demands): dispatch on it directly.
        for k, v in attr.items():
            if v is None:
                break
            if k == "string":
                return str(v)
            if k == "version":
                return _parse_version(str(v))
            if k == "int":
                return int(v)
            if k == "bool":
                return bool(v)
            break
    return attribute_value(attr)


def cel_device(driver: str, device: dict) -> CelDevice:
    """`device` is one raw entry of `ResourceSlice.spec.devices`; `driver` is the slice's `spec.driver`."""
    attributes: dict[str, dict[str, Any]] = {}
    errors: list[str] = []
    attrs = device.get("attributes")
    if attrs:
        for name, attr in attrs.items():
            # getAttributeValue looks at the list fields first; v0.37.2 converts them whatever the gates
            # (with DRAListTypeAttributes off the API server drops them, so a live cluster never has any).
            value = _scalar(attr)
            if type(value) is UnsupportedAttribute or (type(attr) is dict and len(attr) > 1):
                listed = list_attribute_value(attr)  # off the hot path: only a non-scalar or multi-field attribute
                if listed is not None:
                    value = listed
            if type(value) is UnsupportedAttribute:
                errors.append(f"attribute {name}: {value.message}")
                continue
            domain, ident = _split(name, driver)
            m = attributes.get(domain)
            if m is None:
                m = attributes[domain] = {}
            m[ident] = value
    capacity: dict[str, dict[str, Any]] = {}
    caps = device.get("capacity")
    if caps:
        for name, cap in caps.items():
            raw = cap.get("value") if isinstance(cap, dict) else cap
            try:
                q = parse_quantity(str(raw))
            except ValueError_ as exc:
                errors.append(f"capacity {name}: {exc}")
                continue
            domain, ident = _split(name, driver)
            m = capacity.get(domain)
            if m is None:
                m = capacity[domain] = {}
            m[ident] = q
    dev = CelDevice(
        driver,
        str(device.get("name", "")),
        attributes,
        capacity,
        bool(device.get("allowMultipleAllocations") or False),
        device,
    )
    if errors:
        # The scheduler fails every selector on such a device before evaluating it (DeviceMatches converts first).
        dev.cache["conversion_error"] = errors[0]
    return dev
