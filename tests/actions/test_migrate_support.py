"""The audit invariant the migration tests assert (migrate_support.assert_one_intent_one_outcome), on hand-made logs."""

from __future__ import annotations

import pytest

from tests.actions.migrate_support import assert_one_intent_one_outcome


def _write(wid: str, key: str, result: str) -> list[dict]:
    return [
        {"record": "intent", "writeId": wid, "key": key},
        {"record": "outcome", "writeId": wid, "key": key, "result": result},
    ]


def test_a_key_written_again_after_a_write_that_failed_outright_is_allowed():
    log = _write("a", "p/uncordon/Node/n1", "failed") + _write("b", "p/uncordon/Node/n1", "applied")
    assert assert_one_intent_one_outcome(log) == {"p/uncordon/Node/n1": 2}


@pytest.mark.parametrize("first", ["applied", ""])
def test_a_key_applied_under_two_ids_is_caught(first):
    log = _write("a", "p/uncordon/Node/n1", first) + _write("b", "p/uncordon/Node/n1", "applied")
    with pytest.raises(AssertionError):
        assert_one_intent_one_outcome(log)


def test_an_intent_without_its_outcome_is_caught():
    with pytest.raises(AssertionError):
        assert_one_intent_one_outcome([{"record": "intent", "writeId": "a", "key": "k"}])
