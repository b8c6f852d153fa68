"""One reading of a config's numbers on every route (issue 27 item 7): a config field is refused
(or taken) the same way wherever a config is read: the session routes, runs, analysis, and the
grading routes, which read every other number as float64 but a config's as the decimal written
(a trace's config, each trace's config of a batch, a distribution's and a samples body's).

The walk: every route x every number field of a config (the sampling settings, the integers, a
custom table's entry) x a class of literals (below and beyond float64, negative zero, more digits
than a float64 carries, a string, huge integers, ...): the status and the pointer relative to the
config are the same on every route. The exact-reading routes are the reference."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_service import create_app
from specdec_service.api.bodies import carries, parse_decimal, parse_float64
from specdec_service.engine import parse_config, run

TABLE = {"vocab": ["A", "B", "C"], "start": [0.5, 0.3, 0.2],
         "next": {"A": [0.2, 0.6, 0.2], "B": [0.55, 0.15, 0.3], "C": [0.25, 0.25, 0.5]}}
TRACE = json.loads(json.dumps(run(parse_config({"target": TABLE, "draft": TABLE, "seed": 1, "limit": 3, "width": 2,
                                                 "sampling": {"temperature": 1}}))))
CONFIG = TRACE["config"]
"""A complete config (every field, as a trace echoes it: ``POST /v1/grade`` takes no other)."""
MARK = "__literal__"


def bodies(config: dict) -> list[tuple[str, dict, str]]:
    """``(route, body, the config's pointer)``: every place a config is read."""
    return [
        ("/v1/draft", {"config": config, "committed": ["A"]}, "#/config"),
        ("/v1/step", {"config": config, "committed": ["A"]}, "#/config"),
        ("/v1/verify", {"state": {"config": config}, "proposal": {"tokens": ["A"]}}, "#/state/config"),
        ("/v1/runs", {"config": config}, "#/config"),
        ("/v1/analysis", {"config": config, "depth": 2, "widths": [1, 2]}, "#/config"),
        ("/v1/grade", {**TRACE, "config": config}, "#/config"),
        ("/v1/grade", {"traces": [TRACE, {**TRACE, "config": config}]}, "#/traces/1/config"),
        ("/v1/grade/distribution", {"config": config, "m": 1, "counts": [{"prefix": ["A"], "count": 3}]}, "#/config"),
        ("/v1/grade/samples", {"config": config, "samples": [["A", "B", "C"]] * 3}, "#/config"),
    ]


FIELDS = {
    "temperature": ("sampling", "temperature"),
    "top_p": ("sampling", "top_p"),
    "min_p": ("sampling", "min_p"),
    "top_k": ("sampling", "top_k"),
    "width": ("width",),
    "limit": ("limit",),
    "seed": ("seed",),
    "a table entry": ("target", "start", 1),
}
LITERALS = ["1e-400", "-1e-400", "1e-999", "5e-324", "2e-323", "-0.0", "0.0", "1e400", '"0.5"', "1" + "0" * 200,
            "-" + "9" * 300, "0.0500000000000001", "0.05000000000000000001", "0.3000000000000000166533453693773481",
            "0.30000000000000004", "1.0", "2.0000000000000001", "3e0", "9007199254740993.0", "1e23", "0.5", "1",
            "true", "null"]


def _with(config: dict, path: tuple) -> dict:
    copy = json.loads(json.dumps(config))
    node = copy
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = MARK
    return copy


_CLIENT = create_app({"TESTING": True}).test_client()


def _answer(route: str, text: str, prefix: str) -> tuple:
    """``(status, pointers of the errors relative to the config)`` of a refusal (4xx but 409), or
    ``("taken",)``: the config was read (the answer may be a 200, or a 409 when a limit of 1 has
    ended the session, or a failing grade: all say the value was taken)."""
    response = _CLIENT.post(route, data=text, content_type="application/json")
    if response.status_code < 400 or response.status_code == 409:
        return ("taken",)
    errors = (response.get_json() or {}).get("errors", [])
    return response.status_code, tuple(sorted(e["pointer"][len(prefix):] if e["pointer"].startswith(prefix) else e["pointer"]
                                              for e in errors if "pointer" in e))


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("literal", LITERALS)
def test_every_route_reads_a_config_field_alike(field, literal):
    config = _with(CONFIG, FIELDS[field])
    answers = {}
    for route, body, prefix in bodies(config):
        text = json.dumps(body).replace(json.dumps(MARK), literal)
        answers[(route, prefix)] = _answer(route, text, prefix)
    reference = answers[("/v1/runs", "#/config")]
    assert all(answer == reference for answer in answers.values()), (field, literal, answers)


def test_the_issue_example_is_refused_on_every_route():
    """``"temperature": 1e-400`` was temperature 0 (argmax) and a 200 on /v1/grade/samples."""
    for route, body, prefix in bodies(_with(CONFIG, ("sampling", "temperature"))):
        text = json.dumps(body).replace(json.dumps(MARK), "1e-400")
        response = _CLIENT.post(route, data=text, content_type="application/json")
        assert response.status_code == 422, route
        problem = response.get_json()
        assert [e["pointer"] for e in problem["errors"]] == [f"{prefix}/sampling/temperature"]
        assert problem["errors"][0]["detail"] == "must be 0 or a number from 0.05 to 20"


def test_rounded_numbers_outside_a_config_are_still_float64_on_the_grading_routes():
    """Only configs are read exactly: a trace's probabilities written with more digits than a
    float64 carries are graded as that float64 (the grade of the trace as written by orjson)."""
    text = json.dumps(TRACE)
    u = TRACE["blocks"][0]["proposal"]["steps"][0]["draw"]["u"]
    long = text.replace(f'"u": {u!r}', f'"u": {u:.30f}')
    assert long != text and float(f"{u:.30f}") == u
    plain = _CLIENT.post("/v1/grade", data=text, content_type="application/json")
    rounded = _CLIENT.post("/v1/grade", data=long, content_type="application/json")
    assert plain.status_code == rounded.status_code == 200
    assert rounded.get_json() == plain.get_json()


numbers = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda x: f"{x:.17e}"),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda x: f"{x:.25g}"),
    st.builds(lambda m, e: f"{m}e{e}", st.integers(-10**20, 10**20), st.integers(-400, 400)),
    st.builds(lambda w, f: f"{w}.{f}", st.integers(-10**18, 10**18), st.text("0123456789", min_size=1, max_size=30)),
)


@settings(max_examples=400)
@given(numbers)
def test_carries_says_whether_the_float64_reading_is_the_exact_one(text):
    """:func:`carries` against its definition: the float64 reading read as the engine reads a
    float (its shortest decimal; an integral one as its integer) equals the exact reading."""
    try:
        value = parse_float64(text)
    except Exception:  # noqa: BLE001 - beyond float64: refused, no reading to compare
        return
    exact = parse_decimal(text)
    engine = value if type(value) is int else parse_decimal(repr(value))
    assert carries(text, value) == (engine == exact and type(engine) is type(exact))


@settings(max_examples=150)
@given(numbers, st.sampled_from(["temperature", "top_p", "min_p", "a table entry"]))
def test_any_literal_is_read_alike_on_runs_and_on_the_grading_routes(literal, field):
    """The grading routes' reading (each literal float64, noted when the float64 rounds it) gives
    a config field the answer of ``POST /v1/runs`` for any number literal."""
    config = _with(CONFIG, FIELDS[field])
    answers = {_answer(route, json.dumps(body).replace(json.dumps(MARK), literal), prefix)
               for route, body, prefix in bodies(config) if route in ("/v1/runs", "/v1/grade/samples", "/v1/grade")}
    assert len(answers) == 1, (literal, answers)


# ---------------------------------------------------------------- bodies full of rounded numbers

ROUNDED = ["1e-999", "-1e-400", "0.05000000000000000001", "2.0000000000000001", "9007199254740993.0",
           "0.3000000000000000166533453693773481", "1e-320"]
"""Literals the float64 rounds (a denormal, zero, a neighbour, an integer)."""


def as_numbers(value):
    """``value`` with every number an exact Fraction of the decimal it stands for (a float by its
    shortest decimal, as the engine reads it): the two readings of a config compare by number."""
    from decimal import Decimal
    from fractions import Fraction
    if isinstance(value, dict):
        return {key: as_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [as_numbers(item) for item in value]
    if isinstance(value, float):
        return Fraction(repr(value))
    if isinstance(value, (int, Decimal)) and not isinstance(value, bool):
        return Fraction(value)
    return value


def large_bodies(literal: str) -> list[tuple[str, str]]:
    """``(route, body)``: each grading route's body, a config whose table entries are all
    ``literal`` and, outside it, 10,000 numbers (``literal`` and plain ones): bodies of numbers, as
    at the 8 MiB limit, read by orjson (the literals without ``.0``) or by the float64 hooks."""
    config = json.dumps({**CONFIG, "target": {**TABLE, "start": [MARK] * 3}}).replace(f'"{MARK}"', literal)
    outside = "[" + ",".join([literal, "0.5", "1", "0.0", "7"] * 2000) + "]"
    return [("/v1/grade", f'{{"config":{config},"blocks":{outside}}}'),
            ("/v1/grade", f'{{"traces":[{{"config":{json.dumps(CONFIG)},"blocks":{outside}}},'
                          f'{{"config":{config},"x":{outside}}}]}}'),
            ("/v1/grade/distribution", f'{{"config":{config},"m":1,"counts":{outside}}}'),
            ("/v1/grade/samples", f'{{"config":{config},"samples":{outside}}}')]


@pytest.mark.parametrize("literal", ROUNDED)
def test_bodies_full_of_rounded_numbers_read_configs_exactly_and_the_rest_as_float64(literal):
    from specdec_service.api.bodies import parse_json, read_json
    from specdec_service.api.grading import config_paths
    app = create_app()
    for route, body in large_bodies(literal):
        with app.test_request_context(route, method="POST", data=body.encode(), content_type="application/json"):
            got = read_json(exact_at=config_paths)
        floats, exact = parse_json(body.encode(), exact=False), parse_json(body.encode(), exact=True)
        for path in config_paths(floats):  # the reference: configs as written, the rest as float64
            _at(floats, path[:-1])[path[-1]] = _at(exact, path)
        assert as_numbers(got) == as_numbers(floats), (route, literal)
        start = as_numbers(_at(got, config_paths(got)[-1])["target"]["start"])
        assert start == [as_numbers(parse_decimal(literal))] * 3, (route, literal)  # as written, not rounded


def _at(document, path):
    for key in path:
        document = document[key]
    return document
