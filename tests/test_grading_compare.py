"""Field-by-field comparison: exact fields exactly, probabilities within 1e-9, document order."""

import copy
from decimal import Decimal

from specdec_service.engine import parse_config, run
from specdec_service.grading import TOLERANCE, first_difference

TRACE = run(parse_config({"draft": "biased", "seed": 1}))


def test_tolerance_is_one_billionth():
    assert TOLERANCE == 1e-9


def test_probabilities_within_tolerance_agree_and_beyond_do_not():
    got = copy.deepcopy(TRACE)
    got["blocks"][0]["verification"][0]["ratio"] += 5e-10
    got["blocks"][0]["correction"]["distribution"][1] -= 9e-10
    assert first_difference(TRACE, got) is None
    got["blocks"][0]["verification"][1]["p"][2] += 2e-9
    d = first_difference(TRACE, got)
    assert d.path == ("blocks", 0, "verification", 1, "p", 2) and d.kind == "value"


def test_exact_fields_have_no_tolerance():
    got = copy.deepcopy(TRACE)
    got["blocks"][0]["proposal"]["steps"][0]["draw"]["u"] += 1e-16
    d = first_difference(TRACE, got)
    assert d.path == ("blocks", 0, "proposal", "steps", 0, "draw", "u")


def test_a_boolean_is_not_a_number():
    got = copy.deepcopy(TRACE)
    got["blocks"][0]["verification"][0]["accepted"] = 1
    assert got == TRACE  # Python: True == 1; the comparison is stricter
    d = first_difference(TRACE, got)
    assert d.kind == "type" and d.expected is True and d.got == 1


def test_decimals_compare_by_value():
    got = copy.deepcopy(TRACE)
    got["blocks"][0]["verification"][0]["p_token"] = Decimal("0.5")
    got["blocks"][0]["proposal"]["steps"][0]["draw"]["u"] = Decimal(repr(TRACE["blocks"][0]["proposal"]["steps"][0]["draw"]["u"]))
    assert first_difference(TRACE, got) is None


def test_missing_and_unexpected_entries_and_fields():
    got = copy.deepcopy(TRACE)
    got["blocks"].pop()
    d = first_difference(TRACE, got)
    assert d.kind == "missing" and d.path == ("blocks", len(TRACE["blocks"]) - 1) and d.got is None
    got = copy.deepcopy(TRACE)
    got["blocks"][0]["extra"] = 1
    d = first_difference(TRACE, got)
    assert d.kind == "unexpected" and d.path == ("blocks", 0, "extra")
    got = copy.deepcopy(TRACE)
    del got["blocks"][0]["bonus"]
    assert first_difference(TRACE, got).kind == "missing"


def test_order_keys_rank_later_differences_higher():
    early, late = copy.deepcopy(TRACE), copy.deepcopy(TRACE)
    early["blocks"][0]["committed"] = ["B"]
    late["blocks"][1]["prefix"] = ["B"]
    assert first_difference(TRACE, early).order < first_difference(TRACE, late).order


def test_typed_comparison_skips_equal_subtrees_with_the_same_verdict():
    got = copy.deepcopy(TRACE)
    got["blocks"][1]["verification"][0]["p"][0] += 1e-12
    got["blocks"][1]["committed"] = ["C"]
    assert first_difference(TRACE, got, typed=True) == first_difference(TRACE, got)
    assert first_difference(TRACE, got).path == ("blocks", 1, "committed", 0)
