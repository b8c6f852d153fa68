"""grade() and grade_many(): reports, first divergence, checks, malformed input."""

import copy
import json
import math

import pytest

from specdec_service.engine import InvalidInput, parse_config, pointer, run
from specdec_service.grading import BY_ID, CHECKS, MAX_TRACES, faulty_run, grade, grade_many
from specdec_service.grading.check_names import PLAIN

TRACE = run(parse_config({"draft": "biased", "seed": 1}))


def mutated(change):
    trace = copy.deepcopy(TRACE)
    change(trace)
    return trace


def failing_checks(report):
    return [c["name"] for c in report["checks"] if not c["passed"]]


def test_report_of_a_correct_trace():
    report = grade(copy.deepcopy(TRACE))
    assert report["passed"] and report["score"] == 1.0 and report["tolerance"] == 1e-9
    assert [c["name"] for c in report["checks"]] == list(CHECKS) and len(CHECKS) == 10
    assert report["reference"] == {"output": TRACE["output"], "position": TRACE["position"],
                                   "blocks": len(TRACE["blocks"]), "done": "limit"}


def test_first_divergence_names_block_field_values_and_rule():
    def flip(t):
        t["blocks"][0]["verification"][1]["accepted"] = True
    report = grade(mutated(flip))
    d = report["first_divergence"]
    assert d == {"block": 0, "path": "#/blocks/0/verification/1/accepted", "expected": False, "got": True,
                 "kind": "value", "check": "acceptance", "rule": d["rule"], "explanation": d["explanation"]}
    assert d["rule"].startswith("SPEC section 4.2:")
    assert d["explanation"] == PLAIN["acceptance"] and "u < p(token) / q(token)" in d["explanation"]
    assert "acceptance" in failing_checks(report)
    failure = next(c for c in report["checks"] if c["name"] == "acceptance")["first_failure"]
    assert failure["explanation"] == PLAIN["acceptance"]


def test_greedy_divergence_cites_spec_section_5_in_plain_words():
    trace = json.loads(json.dumps(run(parse_config({"draft": "biased", "seed": 0, "mode": "greedy", "width": 2}))))
    trace["blocks"][0]["verification"][0]["accepted"] = not trace["blocks"][0]["verification"][0]["accepted"]
    d = grade(trace)["first_divergence"]
    assert d["check"] == "acceptance" and d["rule"].startswith("SPEC section 5: in mode greedy")
    assert d["explanation"].startswith("In mode greedy no random numbers are used")


def test_wrong_draw_value_fails_the_draws_check():
    def wrong(t):
        t["blocks"][1]["proposal"]["steps"][0]["draw"]["hex"] = "0" * 16
    report = grade(mutated(wrong))
    assert report["first_divergence"]["check"] == "draws"
    assert failing_checks(report) == ["draws"]
    draws = next(c for c in report["checks"] if c["name"] == "draws")
    assert draws["blocks"] == [1] and draws["first_failure"]["pointer"] == "#/blocks/1/proposal/steps/0/draw/hex"


def test_wrong_counter_fails_the_counters_check_only():
    def wrong(t):
        t["blocks"][0]["counters"]["draws"] += 1
        t["counters"]["draws"] += 1
    report = grade(mutated(wrong))
    assert failing_checks(report) == ["counters"] and report["score"] == 0.9
    assert report["first_divergence"]["path"] == "#/blocks/0/counters/draws"


def test_truncated_session_fails_the_output_check():
    def cut(t):
        t["blocks"].pop()
    report = grade(mutated(cut))
    assert report["first_divergence"]["kind"] == "missing"
    assert "output" in failing_checks(report)


def test_score_is_below_one_whenever_the_trace_fails():
    mutations = [
        lambda t: t.__setitem__("position", t["position"] + 1),
        lambda t: t["output"].append("A"),
        lambda t: t.__setitem__("done", None),
        lambda t: t["blocks"][0]["proposal"]["steps"][2].__setitem__("token", "B"),
        lambda t: t["blocks"][0]["discarded"].clear(),
        lambda t: t["config"].__setitem__("width", 4),
        lambda t: t.__setitem__("format", "specdec-trace/1"),  # no change: passes
    ]
    for i, change in enumerate(mutations):
        report = grade(mutated(change))
        assert report["passed"] == (i == len(mutations) - 1), i
        assert (report["score"] == 1.0) == report["passed"], i


def test_config_difference_is_a_format_failure():
    report = grade(mutated(lambda t: t["config"].__setitem__("width", 4)))
    # the reference is recomputed from the submitted settings: width 4 changes the proposal
    assert report["first_divergence"]["path"] == "#/config/width" or report["first_divergence"]["block"] == 0


def test_malformed_trace_is_invalid_input_with_pointers():
    with pytest.raises(InvalidInput) as error:
        grade(mutated(lambda t: t["blocks"][0]["verification"][0].__setitem__("accepted", "yes")))
    assert [pointer(f.path) for f in error.value.faults] == ["#/blocks/0/verification/0/accepted"]
    with pytest.raises(InvalidInput) as error:
        grade(mutated(lambda t: t["blocks"][0].pop("counters")))
    assert pointer(error.value.faults[0].path) == "#/blocks/0"


def test_invalid_config_is_invalid_input():
    with pytest.raises(InvalidInput) as error:
        grade(mutated(lambda t: t["config"].__setitem__("width", 99)))
    assert [pointer(f.path) for f in error.value.faults] == ["#/config/width"]
    with pytest.raises(InvalidInput):
        grade([1, 2])
    with pytest.raises(InvalidInput) as error:
        grade({"format": "specdec-trace/1"})
    assert pointer(error.value.faults[0].path) == "#/config"


def test_a_wrong_probability_is_a_failed_grade_not_malformed():
    report = grade(mutated(lambda t: t["blocks"][0]["correction"]["distribution"].__setitem__(0, -0.5)))
    assert not report["passed"] and failing_checks(report) == ["correction"]


def test_batch_reports_in_order_and_summarises():
    bad = faulty_run(parse_config(BY_ID["no-bonus"].example), BY_ID["no-bonus"].rules)
    result = grade_many([copy.deepcopy(TRACE), bad, copy.deepcopy(TRACE)])
    assert [r["passed"] for r in result["reports"]] == [True, False, True]
    assert result["summary"] == {"count": 3, "passed": 2, "failed": 1, "mean_score": pytest.approx((1 + 0.9 + 1) / 3)}


def test_batch_refuses_malformed_traces_with_prefixed_pointers():
    broken = mutated(lambda t: t.__setitem__("position", -1))
    with pytest.raises(InvalidInput) as error:
        grade_many([copy.deepcopy(TRACE), broken, [1]])
    pointers = [pointer(f.path) for f in error.value.faults]
    assert pointers[0] == "#/traces/1/position" and pointers[-1] == "#/traces/2"


def test_batch_bounds():
    with pytest.raises(InvalidInput):
        grade_many([])
    with pytest.raises(InvalidInput):
        grade_many([TRACE] * (MAX_TRACES + 1))
    assert grade_many([TRACE] * MAX_TRACES)["summary"]["passed"] == MAX_TRACES


def test_closest_mistake_reported_when_none_reproduces_exactly():
    # no-bonus, then a wrong (uncatalogued) change far later: no variant reproduces it exactly,
    # but no-bonus agrees with it the longest.
    mistake = BY_ID["no-bonus"]
    trace = json.loads(json.dumps(faulty_run(parse_config(mistake.example), mistake.rules)))
    trace["done"] = None
    report = grade(trace)
    assert [d["id"] for d in report["diagnosis"]] == ["no-bonus"]
    entry = report["diagnosis"][0]
    assert entry["exact"] is False and entry["agreement"]["first_divergence"] == "#/done"
    assert entry["agreement"]["blocks"] == 0


def test_no_diagnosis_for_other_modes():
    trace = run(parse_config({"draft": "biased", "seed": 1, "mode": "autoregressive"}))
    trace["blocks"][0]["sample"]["token"] = "C" if trace["blocks"][0]["sample"]["token"] != "C" else "A"
    report = grade(trace)
    assert not report["passed"] and report["diagnosis"] == []
    assert report["first_divergence"]["check"] == "bonus"  # the target-sample check


def test_streamed_variant_difference_equals_the_whole_trace_comparison():
    from specdec_service.grading import CATALOGUE, first_difference
    from specdec_service.grading.grader import variant_difference

    config = parse_config({"draft": "biased", "seed": 4})
    for submitted in CATALOGUE[:5]:
        trace = faulty_run(config, submitted.rules)
        for mistake in CATALOGUE:
            assert variant_difference(config, mistake.rules, trace) == first_difference(faulty_run(config, mistake.rules), trace)


def test_pure_python_schema_validation_gives_the_same_pointers(monkeypatch):
    import sys

    from specdec_service.grading import validate

    monkeypatch.setitem(sys.modules, "jsonschema_rs", None)  # import fails: the jsonschema fallback
    validate._validator.cache_clear()
    try:
        with pytest.raises(InvalidInput) as error:
            grade(mutated(lambda t: t["blocks"][1]["proposal"]["steps"][0].__setitem__("draw", 5)))
        assert [pointer(f.path) for f in error.value.faults] == ["#/blocks/1/proposal/steps/0/draw"]
        assert grade(mutated(lambda t: t["blocks"][0].__setitem__("discarded", [])))["passed"] is False
    finally:
        validate._validator.cache_clear()


def test_reference_cache_is_not_corrupted_by_a_caller_mutating_a_report():
    from specdec_service.grading.grader import reference_trace

    config = parse_config({"draft": "aligned", "seed": 11})
    mistake = BY_ID["no-bonus"]
    bad = faulty_run(config, mistake.rules)
    first = grade(bad)
    first["reference"]["output"].append("X")
    first["first_divergence"]["expected"]["token"] = "X"
    assert reference_trace(config) == run(config)
    assert grade(bad) == grade(copy.deepcopy(bad)) and grade(bad)["reference"]["output"] == run(config)["output"]


def test_a_trace_equal_to_its_reference_only_up_to_types_is_still_validated():
    """The fast path (a trace equal to its reference and valid needs no field-by-field
    comparison) never lets a boolean pass as a number: True == 1 in Python, not in the schema."""
    from specdec_service.grading.grader import _is_reference

    reference = run(parse_config(TRACE["config"]))
    assert _is_reference(json.loads(json.dumps(TRACE)), reference)
    boolean = mutated(lambda t: t["blocks"][0]["counters"].__setitem__("target_passes", True))
    assert boolean == TRACE and not _is_reference(boolean, reference)
    with pytest.raises(InvalidInput) as error:
        grade(boolean)
    assert pointer(error.value.faults[0].path) == "#/blocks/0/counters/target_passes"
    reordered = {key: TRACE[key] for key in reversed(list(TRACE))}  # same content, other key order
    assert _is_reference(reordered, reference) and grade(reordered)["passed"] is True


def test_a_trace_read_from_a_request_body_is_its_reference():
    """POST /v1/grade reads 1.0 and 0.0 as 1 and 0 (the JSON rule): such a trace still takes
    the fast path, while a boolean in a probability's place is still refused."""
    from specdec_service.api.bodies import parse_json
    from specdec_service.grading.grader import _is_reference

    reference = run(parse_config(TRACE["config"]))
    body = parse_json(json.dumps(TRACE).encode(), exact=False)
    integral = next(_integral_floats(TRACE, ()))  # a probability 1.0 or 0.0, read as 1 or 0
    assert type(_at(body, integral)) is int and type(_at(reference, integral)) is float
    assert body == TRACE and _is_reference(body, reference) and grade(body) == grade(copy.deepcopy(TRACE))
    flipped = copy.deepcopy(body)
    _at(flipped, integral[:-1])[integral[-1]] = bool(_at(TRACE, integral))
    assert flipped == body and not _is_reference(flipped, reference)
    with pytest.raises(InvalidInput) as error:
        grade(flipped)
    assert pointer(error.value.faults[0].path) == pointer(integral)
    dotted = {"vocab": ["1.0", "x"], "start": [0.5, 0.5], "next": {"1.0": [1.0, 0.0], "x": [0.25, 0.75]}}
    dotted_trace = run(parse_config({"target": dotted, "draft": dotted, "seed": 2, "limit": 4}))
    assert grade(parse_json(json.dumps(dotted_trace).encode(), exact=False))["passed"] is True


def _integral_floats(doc, path):
    """The paths of the floats with an integral value in ``doc``, in document order."""
    if isinstance(doc, float) and doc.is_integer():
        yield path
    elif isinstance(doc, (dict, list)):
        for key, value in (doc.items() if isinstance(doc, dict) else enumerate(doc)):
            yield from _integral_floats(value, path + (key,))


def _at(doc, path):
    for key in path:
        doc = doc[key]
    return doc


def test_the_batch_validates_every_trace_that_is_not_its_reference_byte_for_byte():
    """grade_many passes a trace with its reference's bytes unvalidated, as grade does; a
    trace equal only up to types (True for 1) is still refused, with the faults of every
    malformed trace in batch order."""
    boolean = mutated(lambda t: t["blocks"][0]["counters"].__setitem__("target_passes", True))
    broken = mutated(lambda t: t.__setitem__("position", -1))
    with pytest.raises(InvalidInput) as error:
        grade_many([copy.deepcopy(TRACE), boolean, [1], broken])
    assert [pointer(f.path) for f in error.value.faults] == [
        "#/traces/1/blocks/0/counters/target_passes", "#/traces/2", "#/traces/3/position"]
    reordered = {key: TRACE[key] for key in reversed(list(TRACE))}  # valid, other bytes: validated, then passes
    result = grade_many([reordered, copy.deepcopy(TRACE), reordered])
    assert [r["passed"] for r in result["reports"]] == [True] * 3
    assert result["reports"][0] == result["reports"][1] == grade(copy.deepcopy(TRACE))


def test_a_malformed_trace_is_refused_before_an_over_budget_batch(monkeypatch):
    """The order of grade_many's refusals is kept: every malformed trace (422 invalid input)
    before the budget of the reference runs (422 over budget), and nothing is run then."""
    import dataclasses

    from specdec_service.budget import OverBudget
    from specdec_service.grading import grader

    monkeypatch.setattr(grader, "GRADE_BUDGET", dataclasses.replace(grader.GRADE_BUDGET, limit=1))
    monkeypatch.setattr(grader, "run", lambda config: pytest.fail("a reference was run"))
    boolean = mutated(lambda t: t["blocks"][0]["counters"].__setitem__("target_passes", True))
    with pytest.raises(InvalidInput) as error:
        grade_many([copy.deepcopy(TRACE), boolean])
    assert [pointer(f.path) for f in error.value.faults] == ["#/traces/1/blocks/0/counters/target_passes"]
    with pytest.raises(OverBudget):
        grade_many([copy.deepcopy(TRACE)])


def test_references_are_cached_as_bytes_and_read_back_unchanged(monkeypatch):
    """The reference cache keeps a small trace as its orjson bytes (as the dict once asked for
    again); read back it is the engine's trace (values and types); without orjson the trace is
    kept as the dict, and grades the same."""
    from specdec_service.grading import grader

    config = parse_config({"draft": "biased", "seed": 12345})
    key = grader._config_key(config)
    first = grader.reference_trace(config)
    assert isinstance(grader._references[key], bytes) and grader.reference_trace(config) == first == run(config)
    assert isinstance(grader._references[key], dict)  # asked for twice: kept as the dict
    assert json.dumps(grader.reference_trace(config)) == json.dumps(run(config))  # 1.0 stays a float, 1 an int
    target = {"vocab": ["x", "y"], "start": [0.25, 0.75], "next": {"x": [0.5, 0.5], "y": [0.9, 0.1]}}
    draft = {"vocab": ["x", "y"], "start": [0.5, 0.5], "next": {"x": [0.3, 0.7], "y": [0.6, 0.4]}}
    custom = json.loads(json.dumps(run(parse_config({"target": target, "draft": draft, "seed": 3, "limit": 5}))))
    bad = json.loads(json.dumps(faulty_run(parse_config(BY_ID["no-bonus"].example), BY_ID["no-bonus"].rules)))
    expected = [grade(copy.deepcopy(t)) for t in (custom, bad, TRACE)]
    assert [r["passed"] for r in expected] == [True, False, True]
    assert [grade(copy.deepcopy(t)) for t in (custom, bad, TRACE)] == expected  # cache hits: read back from bytes
    monkeypatch.setattr(grader, "orjson", None)
    grader._references.clear()
    assert [grade(copy.deepcopy(t)) for t in (custom, bad, TRACE)] == expected
    assert isinstance(grader._references[grader._config_key(parse_config(TRACE["config"]))], dict)
    assert grade_many([bad, TRACE])["reports"] == expected[1:]
    grader._references.clear()


def test_grading_creates_no_reference_cycles():
    """What lets POST /v1/grade pause the cyclic collector: grading (correct traces, failing
    ones with their checks and diagnosis, malformed ones) leaves nothing for it to collect."""
    import gc

    from specdec_service.budget import OverBudget

    mistakes = [m for m in BY_ID.values() if m.mode == "speculative"][:6]
    failing = [json.loads(json.dumps(faulty_run(parse_config(m.example), m.rules))) for m in mistakes]
    correct = [json.loads(json.dumps(run(parse_config({"draft": "biased", "seed": s})))) for s in range(5)]
    grade_many(correct + failing)  # warm: module-level caches filled
    gc.collect()
    gc.disable()
    try:
        result = grade_many(correct + failing)
        assert result["summary"]["failed"] == len(failing) >= 6 and [grade(t) for t in failing] == result["reports"][5:]
        with pytest.raises(InvalidInput):
            grade_many(correct + [[1]])
        with pytest.raises(OverBudget):
            grade_many([{**correct[0], "config": {**correct[0]["config"], "seed": s, "limit": 256}} for s in range(1000)])
        del result
        assert gc.collect() == 0
    finally:
        gc.enable()


# ---------------------------------------------------------------- in-process values JSON cannot hold


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, "fresh nan"])
def test_a_non_finite_number_where_the_reference_has_null_is_refused(bad):
    """jsonschema_rs reads a NaN or infinity as null: a trace with one where its reference has
    null (here a block's missing bonus) is valid to it, but not equal to the reference (a NaN
    equals nothing), so it is validated in full and refused. (It once had the reference's orjson
    bytes and passed.) Only an in-process caller can pass one."""
    from specdec_service.grading import grade_many

    trace = json.loads(json.dumps(run(parse_config({"draft": "biased", "seed": 1, "limit": 4}))))
    assert trace["blocks"][0]["bonus"] is None
    # math.nan is shared; a fresh NaN is held by the trace alone
    trace["blocks"][0]["bonus"] = float("nan") if bad == "fresh nan" else bad
    with pytest.raises(InvalidInput) as caught:
        grade(trace)
    assert [(f.path, "finite" in f.message) for f in caught.value.faults] == [(("blocks", 0, "bonus"), True)]
    with pytest.raises(InvalidInput) as caught:
        grade_many([trace])
    assert caught.value.faults[0].path == ("traces", 0, "blocks", 0, "bonus")


def test_a_lone_surrogate_label_is_graded_in_process():
    """A label holding a lone surrogate (the service refuses one with a 400; an in-process
    caller can pass one): the trace is graded, not a TypeError or UnicodeEncodeError."""
    table = {"vocab": ["A", "\ud800"], "start": [0.5, 0.5], "next": {"A": [0.5, 0.5], "\ud800": [0.25, 0.75]}}
    trace = json.loads(json.dumps(run(parse_config({"target": table, "draft": table, "seed": 1, "limit": 4}))))
    assert grade(trace)["passed"] is True
    first = trace["blocks"][0]["committed"]
    first[0] = "A" if first[0] != "A" else "\ud800"
    report = grade(trace)
    assert report["passed"] is False
    assert report["first_divergence"]["path"] == "#/blocks/0/committed/0"


def test_a_shared_nan_in_a_greedy_trace_is_refused():
    """The same NaN object in two places (list equality takes an object as equal to itself),
    where a greedy trace's ratios are null."""
    trace = json.loads(json.dumps(run(parse_config({"draft": "biased", "seed": 1, "limit": 4, "mode": "greedy"}))))
    nan = float("nan")
    first = trace["blocks"][0]["verification"][0]
    assert first["ratio"] is None
    second = trace["blocks"][1]["verification"][0]
    assert second["ratio"] is None
    first["ratio"] = second["ratio"] = nan
    with pytest.raises(InvalidInput) as caught:
        grade(trace)
    assert {f.path for f in caught.value.faults} == {("blocks", 0, "verification", 0, "ratio"),
                                                     ("blocks", 1, "verification", 0, "ratio")}
