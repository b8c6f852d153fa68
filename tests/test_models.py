"""Built-in and custom bigram models (SPEC section 1)."""

from decimal import Decimal
from fractions import Fraction

import pytest

from specdec_service.engine import ALIGNED, BIASED, TOY, InvalidInput, builtin_models, parse_model
from specdec_service.engine.errors import pointer

FOUR = {
    "vocab": ["A", "B", "C", "D"],
    "start": [0.25, 0.25, 0.25, 0.25],
    "next": {"A": [0.1, 0.2, 0.3, 0.4], "B": [1, 0, 0, 0], "C": [0.5, 0.5, 0, 0], "D": [0, 0, 0, 1]},
}


def test_builtin_tables_are_the_spec():
    assert TOY.vocab == ("A", "B", "C")
    assert TOY.start.to_json() == [0.5, 0.3, 0.2]
    assert [r.to_json() for r in TOY.rows] == [[0.2, 0.6, 0.2], [0.55, 0.15, 0.3], [0.25, 0.25, 0.5]]
    assert ALIGNED.start == TOY.start and ALIGNED.rows == TOY.rows
    assert BIASED.start.to_json() == [0.8, 0.15, 0.05]
    assert all(r.to_json() == [0.8, 0.15, 0.05] for r in BIASED.rows)
    assert TOY.start.probability(1) == Fraction(3, 10)


def test_builtin_models_listing():
    listing = {m["name"]: m for m in builtin_models()}
    assert set(listing) == {"toy", "aligned", "biased"}
    assert listing["toy"]["role"] == "target" and listing["biased"]["role"] == "draft"
    assert listing["toy"]["next"]["B"] == [0.55, 0.15, 0.3]


def test_row_depends_on_the_last_token_only():
    assert TOY.row([]) is TOY.start
    assert TOY.row([0, 2, 1]) is TOY.rows[1]


def test_custom_model_reads_the_written_decimal():
    model = parse_model(FOUR)
    assert model.rows[0].probability(0) == Fraction(1, 10)
    decimal = parse_model({**FOUR, "start": [Decimal("0.1"), Decimal("0.2"), Decimal("0.3"), Decimal("0.4")]})
    assert decimal.start.probability(3) == Fraction(2, 5)
    assert model.to_json() == FOUR


def test_custom_row_within_tolerance_is_normalised_exactly():
    model = parse_model({**FOUR, "start": [0.25, 0.25, 0.25, 0.2500000005]})
    assert sum(model.start.probability(i) for i in range(4)) == 1
    assert model.start.probability(3) == Fraction("0.2500000005") / Fraction("1.0000000005")


def faults(spec):
    with pytest.raises(InvalidInput) as error:
        parse_model(spec)
    return {pointer(f.path): f.message for f in error.value.faults}


@pytest.mark.parametrize(
    "change, where, says",
    [
        ({"vocab": ["A"]}, "#/vocab", "2 to 64"),
        ({"vocab": ["A", "A", "C", "D"]}, "#/vocab/1", "'A' is listed twice"),
        ({"vocab": ["A", "", "C", "D"]}, "#/vocab/1", "1 to 16 characters"),
        ({"vocab": ["A", "B", "C", "x" * 17]}, "#/vocab/3", "1 to 16 characters"),
        ({"vocab": "ABCD"}, "#/vocab", "list"),
        ({"start": [0.5, 0.5, 0.5, -0.5]}, "#/start/3", "must be a number from 0 to 1"),
        ({"start": [0.25, 0.25, 0.25]}, "#/start", "one probability per vocabulary token"),
        ({"start": [0.25, 0.25, 0.25, 0.26]}, "#/start", "sum to 1 within 1e-9"),
        ({"start": [0.25, 0.25, 0.25, 0.250000002]}, "#/start", "sum to 1"),
        ({"start": [0.25, 0.25, 0.25, "0.25"]}, "#/start/3", "must be a number from 0 to 1"),
        ({"start": [1e308, 0.25, 0.25, 0.25]}, "#/start/0", "must be a number from 0 to 1"),
        ({"start": [1.5, -0.5, 0, 0]}, "#/start/0", "must be a number from 0 to 1"),
        ({"start": [0.25, 0.25, 0.25, float("nan")]}, "#/start/3", "must be a number from 0 to 1"),
        ({"start": [0.25, 0.25, 0.25, True]}, "#/start/3", "must be a number from 0 to 1"),
        ({"next": {"A": [1, 0, 0, 0], "B": [1, 0, 0, 0], "C": [1, 0, 0, 0]}}, "#/next/D", "missing"),
        ({"next": {**FOUR["next"], "E": [1, 0, 0, 0]}}, "#/next/E", "not in the vocabulary"),
        ({"next": [1, 2]}, "#/next", "object"),
    ],
)
def test_each_fault_is_named_precisely(change, where, says):
    found = faults({**FOUR, **change})
    assert where in found, found
    assert says in found[where]


def test_missing_and_unknown_fields():
    found = faults({"vocab": ["A", "B"], "start": [0.5, 0.5], "rows": {}})
    assert "is required" in found["#/next"]
    assert "unknown field" in found["#/rows"]
    assert "built-in model name or an object" in faults([1, 2])["#"]


def test_every_fault_is_reported_at_once():
    """Every fault of the structure (engine/inputs.py MODEL_TABLE) at once; then, for a
    table of the right structure, every fault of the rules no JSON Schema states."""
    found = faults({**FOUR, "start": [0.5, -1, 0.5, 0.5], "next": {**FOUR["next"], "B": [0.5, 1.6, 0, 0]}})
    assert set(found) == {"#/start/1", "#/next/B/1"}
    found = faults({**FOUR, "start": [0.5, 0, 0.5, 0.5], "next": {**FOUR["next"], "B": [0.5, 0.6, 0, 0]}})
    assert set(found) == {"#/start", "#/next/B"}


@pytest.mark.parametrize("text, verdict", [("1e999999999", "must be a number from 0 to 1"), ("-1e999999999", "must be a number from 0 to 1"), ("-1e-999999999", "must be a number from 0 to 1")])
def test_extreme_exponents_neither_overflow_nor_hang(text, verdict):
    assert verdict in faults({**FOUR, "start": [Decimal(text), 0.25, 0.25, 0.5]})["#/start/0"]


def test_huge_and_tiny_decimals_stay_cheap():
    found = faults({**FOUR, "start": [Decimal("1e999999"), 0, 0, 0]})
    assert "must be a number from 0 to 1" in found["#/start/0"]
    found = faults({**FOUR, "start": [Decimal("1e-999999"), Decimal("0.25"), Decimal("0.25"), Decimal("0.5")]})
    assert "float64" in found["#/start/0"]


@pytest.mark.parametrize("text", ["0.372890878631350564109681045010802336037158967064453125", "1e-400", "0.12345678901234567"])
def test_decimals_a_trace_cannot_echo_exactly_are_refused(text):
    """A trace carries probabilities as float64: a decimal that is not the
    shortest decimal of a double would come back as another rational."""
    rest = Decimal(repr(float((1 - Fraction(text)) / 3)))
    assert "float64" in faults({**FOUR, "start": [Decimal(text), rest, rest, rest]})["#/start/0"]


@pytest.mark.parametrize("text", ["0.1", "0.10", "0.3333333333333333", "0.30000000000000004", "1E-5"])
def test_decimals_a_trace_can_echo_are_read_exactly(text):
    model = parse_model({**FOUR, "start": [Decimal(text), Decimal("0.25"), Decimal("0.25"), Decimal("0.5") - Decimal(text)]})
    assert model.start.probability(0) == Fraction(text)
    assert parse_model(model.to_json()) == model  # the float64 echo reads back as the same model
