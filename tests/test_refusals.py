"""A refusal is as cheap as an answer (issue 18 section 4): every problem document lists at most
20 errors, says how many faults were found (``error_count``; the detail says "the first 20 of N
shown"), and is at most 64 KiB, whatever the body within its route's size limit.

The kind: every POST route x every position of a valid body (walked from the body itself:
every list, object and string, the first item of each list standing for the others) x an
over-long list, an object with very many unknown names, a huge name, a huge string where a short
one is expected. The examples of the issue are kept as regressions with their real sizes. How
long a refusal takes is measured in ``bench/worst_cases.py`` (the REFUSAL column of
docs/service.md), never here."""

from __future__ import annotations

import json
from typing import Any, Iterator

import pytest

from specdec_service import create_app
from specdec_service.api.bodies import BODY_RULES
from specdec_service.api.problems import MAX_PROBLEM_BYTES, STRUCTURE_BOUND
from specdec_service.engine import parse_config, run
from specdec_service.engine.errors import MAX_ERRORS

TABLE = {"vocab": ["A", "B", "C"], "start": [0.5, 0.3, 0.2],
         "next": {"A": [0.2, 0.6, 0.2], "B": [0.55, 0.15, 0.3], "C": [0.25, 0.25, 0.5]}}
CONFIG = {"target": TABLE, "draft": TABLE, "seed": 1, "limit": 4, "eos": "C", "width": 2, "mode": "speculative"}
STATE = {"config": CONFIG, "committed": ["A"], "position": 3, "counters": {"accepted": 1, "draft_steps": 2}}
TRACE = json.loads(json.dumps(run(parse_config(CONFIG))))
ENGINE_LIMIT = 256 * 1024
GRADING_LIMIT = 8 * 1024 * 1024
WALK_SIZE = {ENGINE_LIMIT: 200_000, GRADING_LIMIT: 400_000}
"""The bytes an oversized part adds to a body in the walk: within the route's limit (a grading
body of about 400 KB, thousands of times any size bound of its schema, to keep the walk short;
the examples below go to 8 MB)."""

BODIES = [
    ("/v1/draft", ENGINE_LIMIT, STATE),
    ("/v1/step", ENGINE_LIMIT, STATE),
    ("/v1/verify", ENGINE_LIMIT, {"state": STATE, "proposal": {"tokens": ["A", "B"]}}),
    ("/v1/runs", ENGINE_LIMIT, {"config": CONFIG}),
    ("/v1/analysis", ENGINE_LIMIT, {"config": {**CONFIG, "seed": 0}, "depth": 2, "widths": [1, 2], "draft_cost": 0.5}),
    ("/v1/grade", GRADING_LIMIT, TRACE),
    ("/v1/grade", GRADING_LIMIT, {"traces": [TRACE, TRACE]}),
    ("/v1/grade/distribution", GRADING_LIMIT,
     {"config": CONFIG, "m": 2, "samples": [["A", "B"], ["C"]], "counters": {"accepted": 1, "draft_steps": 2},
      "alpha": 0.01}),
    ("/v1/grade/distribution", GRADING_LIMIT, {"config": CONFIG, "m": 1, "counts": [{"prefix": ["A"], "count": 3}]}),
]
_CLIENT = create_app({"TESTING": True}).test_client()


def positions(value: Any, path: tuple = ()) -> Iterator[tuple]:
    """The path of every list, object and string in ``value`` (of a list, only its first item's)."""
    if isinstance(value, (list, dict, str)):
        yield path
    if isinstance(value, list) and value:
        yield from positions(value[0], path + (0,))
    elif isinstance(value, dict):
        for key, member in value.items():
            yield from positions(member, path + (key,))


def replaced(value: Any, path: tuple, new: Any) -> Any:
    """``value`` with the part at ``path`` replaced by ``new`` (``value`` is not changed)."""
    if not path:
        return new
    copy = list(value) if isinstance(value, list) else dict(value)
    copy[path[0]] = replaced(value[path[0]], path[1:], new)
    return copy


WALK_VALUES_MARGIN = 1_000
"""Values kept free for the rest of the body (a walked body holds fewer than 1,000): an
oversized list or object of the walk stays within its route's values bound
(:data:`~specdec_service.api.bodies.BODY_RULES`), so what refuses it is the capped check of the
fields, not the structure bound that comes first (which ``test_beyond_the_values_bound_*``
covers)."""


def oversized(kind: str, part: Any, size: int, max_values: int) -> Any:
    """``part`` made about ``size`` bytes larger in the way ``kind`` names (:data:`KINDS`), with at
    most ``max_values - WALK_VALUES_MARGIN`` more values."""
    items = min(size // 2, max_values - WALK_VALUES_MARGIN)
    if kind == "long list":
        return [1] * items  # "1," a wrong item: a type fault for each, if anything walked them
    if kind == "unknown names":
        return {**part, **{f"u{i}": 0 for i in range(min(size // 12, items))}}
    if kind == "huge name":
        return {**part, "n" * size: 0}
    return "s" * size  # a huge string


KINDS = {list: ("long list",), dict: ("unknown names", "huge name"), str: ("huge string",)}


def cases() -> Iterator:
    for route, limit, body in BODIES:
        batch = "traces" in body
        for path in positions(body):
            if batch and len(path) > 2:
                continue  # a batch's trace is walked in full as the single trace above
            part = body
            for key in path:
                part = part[key]
            for kind in KINDS[type(part)]:
                where = "/".join(map(str, path)) or "#"
                yield pytest.param(route, limit, body, path, kind, id=f"{route}{'-batch' if batch else ''}-{where}-{kind}")


def capped_problem(response) -> dict:
    """The problem document of a refusal, checked against the rule: 4xx (a 413 only for the
    structure bound on the number of values: the body is within its byte limit), at most 64 KiB,
    at most 20 errors, ``error_count`` at least as many."""
    data = response.get_data()
    assert 400 <= response.status_code < 500, data[:500]
    assert response.mimetype == "application/problem+json"
    assert len(data) <= MAX_PROBLEM_BYTES
    problem = json.loads(data)
    if response.status_code == 413:
        assert problem["type"] == STRUCTURE_BOUND, problem
    if "errors" in problem:
        assert 1 <= len(problem["errors"]) <= MAX_ERRORS
        assert problem["error_count"] >= len(problem["errors"])
        if problem["error_count"] > len(problem["errors"]):
            assert f"(the first {len(problem['errors'])} of {problem['error_count']} shown)" in problem["detail"]
    return problem


def post(route: str, body: Any):
    data = json.dumps(body, separators=(",", ":")).encode()
    return _CLIENT.post(route, data=data, content_type="application/json"), len(data)


@pytest.mark.parametrize("route, limit, body, path, kind", list(cases()))
def test_every_oversized_part_is_a_capped_refusal(route, limit, body, path, kind):
    part = body
    for key in path:
        part = part[key]
    response, size = post(route, replaced(body, path, oversized(kind, part, WALK_SIZE[limit],
                                                                BODY_RULES[route].max_values)))
    assert size <= limit
    problem = capped_problem(response)
    assert response.status_code in (400, 422), problem


def test_the_valid_bodies_of_the_walk_are_accepted():
    """The walk starts from valid bodies, so each refusal is the oversized part's."""
    for route, _, body in BODIES:
        response, _ = post(route, body)
        assert response.status_code == 200, (route, response.get_data()[:300])


# ---------------------------------------------------------------- the examples of issue 18 section 4

SEED1 = {"draft": "biased", "seed": 1}


def test_step_with_130000_committed_entries():
    """Was a 422 of 18.4 MB after 9.5 s (130,001 errors): now the structure bound on the values
    of a session body refuses it before any field is read (413, one sentence)."""
    response, size = post("/v1/step", {"config": SEED1, "committed": [1] * 130_000})
    problem = capped_problem(response)
    assert size == 260_052 and response.status_code == 413
    assert "this route takes at most 10000" in problem["detail"] and "errors" not in problem


def test_step_with_9000_committed_entries():
    """Within the values bound, the list's fields are checked: capped at 20 errors of 257."""
    response, size = post("/v1/step", {"config": SEED1, "committed": [1] * 9_000})
    problem = capped_problem(response)
    assert size == 18_052 and response.status_code == 422
    assert problem["error_count"] == 257  # the list's length, then each of the first 256 items (not strings)
    assert problem["errors"][0] == {"pointer": "#/committed", "detail": "must be a list of 0 to 256 token labels"}
    assert len(problem["errors"]) == 20 and "257 fields are invalid (the first 20 of 257 shown)" in problem["detail"]


def test_analysis_with_130000_widths():
    """Was a 422 of 19.7 MB after 11.2 s: now the structure bound (413, one sentence)."""
    response, size = post("/v1/analysis", {"config": SEED1, "widths": [1] * 130_000})
    problem = capped_problem(response)
    assert size == 260_049 and response.status_code == 413
    assert "this route takes at most 10000" in problem["detail"] and "errors" not in problem


def test_analysis_with_9000_widths():
    """Within the values bound: the list's length, then the repeats among the 16 widths read."""
    response, size = post("/v1/analysis", {"config": SEED1, "widths": [1] * 9_000})
    problem = capped_problem(response)
    assert size == 18_049 and response.status_code == 422
    assert problem["errors"][0] == {"pointer": "#/widths", "detail": "must be a list of 1 to 16 widths"}
    assert problem["error_count"] == 16  # the length, then 15 repeats among the 16 widths read


def test_a_distribution_body_sent_to_the_trace_route():
    """10^6 samples (6 MB) posted to /v1/grade: was 5.7 s, and through nginx a killed worker."""
    response, size = post("/v1/grade", {"config": SEED1, "m": 1, "samples": [["A"]] * 10**6})
    problem = capped_problem(response)
    assert size == 6_000_056 and response.status_code == 422
    assert problem["errors"][0] == {"pointer": "#", "detail": "Additional properties are not allowed ('m', 'samples' "
                                                              "were unexpected)"}
    assert problem["error_count"] == 12  # that, 6 required trace fields, 5 required config fields


def test_a_distribution_body_of_699050_names():
    """An object of 699,050 names (8 MiB): the worker was killed."""
    response, size = post("/v1/grade/distribution", {f"k{i}": 1 for i in range(699_050)})
    problem = capped_problem(response)
    assert size == 8_277_491 and size <= GRADING_LIMIT and response.status_code == 422
    assert problem["error_count"] == 699_053  # config and m required, one of samples/counts, each name
    assert problem["errors"][3] == {"pointer": "#/k0",
                                    "detail": "unknown field: the fields are alpha, config, counters, counts, m, samples"}


def test_a_trace_config_of_349525_unknown_names():
    """Was a 422 of 73.5 MB after 21 s."""
    response, size = post("/v1/grade", {"config": {f"k{i}": 1 for i in range(349_525)}})
    problem = capped_problem(response)
    assert size == 4_083_202 and response.status_code == 422
    assert problem["error_count"] == 349_527  # draft and seed required, each name
    assert [e["pointer"] for e in problem["errors"][:3]] == ["#/config/draft", "#/config/seed", "#/config/k0"]


def test_a_long_detail_or_pointer_is_cut_never_the_structure():
    """25 names of 1,500 characters that need escaping (6 bytes each in JSON, 3 in a pointer): each
    string is cut, ending in ``...``, and the document stays under 64 KiB and valid JSON."""
    name = "\x01" * 1_500
    body = {"config": {**SEED1, **{name + str(i): 0 for i in range(25)}}}
    response, _ = post("/v1/runs", body)
    problem = capped_problem(response)
    assert problem["error_count"] == 25 and len(problem["errors"]) == 20
    assert all(e["pointer"].endswith("...") and e["pointer"].startswith("#/config/%01") for e in problem["errors"])
    assert problem["detail"].endswith("...")


def test_the_size_check_cuts_a_copy_and_leaves_the_value_alone():
    """``within_bounds`` returns the value itself when nothing is over a bound, and otherwise a
    cut copy: the caller's value is never changed (in-process callers keep their data)."""
    from specdec_service.engine.inputs import ENGINE_SIZES, STATE, shallow, within_bounds

    schema = shallow(STATE)
    fine = {"config": CONFIG, "committed": ["A"]}
    assert within_bounds(schema, fine, ENGINE_SIZES).value is fine
    long = {"config": {**CONFIG, "x": 1}, "committed": ["A"] * 300, "position": 0}
    before = json.dumps(long)
    bounded = within_bounds(schema, long, ENGINE_SIZES)
    assert json.dumps(long) == before
    assert len(bounded.value["committed"]) == 256 and "x" not in bounded.value["config"]
    assert [(f.path, f.message) for f in bounded.faults] == [
        (("config", "x"), "unknown field: the fields are draft, drafts, eos, limit, mode, sampling, seed, target, tree, width"),
        (("committed",), "must be a list of 0 to 256 token labels")]
