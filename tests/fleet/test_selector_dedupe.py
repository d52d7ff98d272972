"""The selector evaluation evaluates one device per distinct value of what the selectors read (fleet/selectors.py
_dedupe_key): two devices must share a key exactly when they agree on it, whatever shape the published values have."""

from __future__ import annotations

from dragoman.fleet.model import DeviceView
from dragoman.fleet.selectors import _dedupe_key, _frozen
from hypothesis import given
from hypothesis import strategies as st

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=8,
)


def _plain(value):
    """What _frozen gives, written as plainly as it reads: dicts as their sorted items, lists as tuples."""
    if isinstance(value, dict):
        return tuple(sorted((k, _plain(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_plain(v) for v in value)
    return value


@given(JSON)
def test_frozen_is_the_plain_frozen_value(value):
    assert _frozen(value) == _plain(value)


def _dev(driver, attributes, capacity=None):
    return DeviceView(driver, "p", "d", "n", "s", {"attributes": attributes, "capacity": capacity or {}})


def test_devices_share_a_key_exactly_when_they_agree_on_what_is_read():
    reads = (("gpu.nvidia.com", "type"), ("gpu.nvidia.com", "memory"), "example.com")
    bare = _dev("gpu.nvidia.com", {"type": {"string": "gpu"}}, {"memory": {"value": "80Gi"}})
    qualified = _dev("gpu.nvidia.com", {"gpu.nvidia.com/type": {"string": "gpu"}}, {"memory": {"value": "80Gi"}})
    other_type = _dev("gpu.nvidia.com", {"type": {"string": "mig"}}, {"memory": {"value": "80Gi"}})
    other_memory = _dev("gpu.nvidia.com", {"type": {"string": "gpu"}}, {"memory": {"value": "40Gi"}})
    unread = _dev("gpu.nvidia.com", {"type": {"string": "gpu"}, "uuid": {"string": "x"}}, {"memory": {"value": "80Gi"}})
    domain = _dev(
        "gpu.nvidia.com", {"type": {"string": "gpu"}, "example.com/x": {"int": 1}}, {"memory": {"value": "80Gi"}}
    )
    # Another driver: its bare names are in its own domain, so gpu.nvidia.com's `type` is not among them.
    foreign = _dev("example.com", {"type": {"string": "gpu"}}, {"memory": {"value": "80Gi"}})
    key = _dedupe_key(bare, reads)
    assert _dedupe_key(qualified, reads) == key and _dedupe_key(unread, reads) == key
    others = [_dedupe_key(d, reads) for d in (other_type, other_memory, domain, foreign)]
    assert key not in others and len(set(others)) == 4
    assert _dedupe_key(foreign, reads)[2] == (None, None)
