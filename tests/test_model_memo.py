"""Custom models are memoised by their exact JSON (engine.models.parse_model):
the same tables read once, a spec that differs in any value or type is read
(and judged) on its own, and the memo is bounded."""

from decimal import Decimal

import pytest

from specdec_service.engine import InvalidInput, parse_model
from specdec_service.engine.models import MODEL_MEMO_SIZE


def spec(first="0.5"):
    return {"vocab": ["A", "B"], "start": [Decimal(first), Decimal("0.5")],
            "next": {"A": [Decimal("0.25"), Decimal("0.75")], "B": [Decimal("1"), Decimal("0")]}}


def test_the_same_tables_are_read_once():
    assert parse_model(spec()) is parse_model(spec())


def test_a_value_of_another_type_is_not_taken_from_the_memo():
    parse_model(spec())
    bad = spec()
    bad["start"][0] = "0.5"  # a string where the cached spec has the number 0.5
    with pytest.raises(InvalidInput) as error:
        parse_model(bad)
    assert error.value.faults[0].path == ("start", 0)


def test_different_values_give_different_models():
    a, b = parse_model(spec("0.5")), parse_model({**spec("0.5"), "start": [Decimal("0.4"), Decimal("0.6")]})
    assert a is not b and a.start != b.start


def test_the_memo_is_bounded():
    # least recently used first out: after MODEL_MEMO_SIZE other models the first one is read
    # afresh (another object), while the last MODEL_MEMO_SIZE are still kept
    def other(i):
        return {**spec(), "vocab": [f"A{i}", "B"], "next": {f"A{i}": [1, 0], "B": [0, 1]}}

    first = parse_model(other(0))
    assert parse_model(other(0)) is first
    read = [parse_model(other(i)) for i in range(1, MODEL_MEMO_SIZE + 1)]
    assert all(parse_model(other(i)) is read[i - 1] for i in range(1, MODEL_MEMO_SIZE + 1))
    again = parse_model(other(0))
    assert again is not first and again.vocab == first.vocab
