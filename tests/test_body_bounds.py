"""The structure of a body is bounded before anything reads it (issue 18 section 3; api/structure.py):
the bounds are derived from the contract (the deepest and the largest valid body of each route), the
issue's three examples are regressions with their real bodies, and every route reads its numbers as
the one table (``bodies.BODY_RULES``) says."""

import json
import math
from pathlib import Path

import pytest
import yaml

from specdec_service import create_app
from specdec_service.api.bodies import BODY_RULES, EXACT, FLOAT64, SESSION_VALUES, SHORTEST, parse_json
from specdec_service.api.grading import GRADE_MAX_BODY_BYTES
from specdec_service.api.problems import ApiProblem
from specdec_service.api.structure import MAX_NESTING, MAX_NUMBER_CHARS, NUMBER_DETAIL, check_structure

APP = create_app({"TESTING": True})
CONTRACT = yaml.safe_load((Path(__file__).resolve().parents[1] / "openapi.yaml").read_text())
SCHEMAS = CONTRACT["components"]["schemas"]
STRUCTURE_BOUND = "tag:specdec,2026:problem/structure-bound"
POST_ROUTES = sorted(path for path, item in CONTRACT["paths"].items() if "post" in item)


def post(route, text):
    return APP.test_client().post(route, data=text, content_type="application/json")


# ---------------------------------------------------------------- the bounds, derived from the contract


def _resolve(schema):
    while "$ref" in schema:
        schema = SCHEMAS[schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def shape(schema, seen=()):
    """(levels, values) of the deepest and the largest instance of ``schema``: levels of arrays
    and objects, values as array elements and object members (infinite where unbounded)."""
    if "$ref" in schema:
        return (math.inf, math.inf) if schema["$ref"] in seen else shape(_resolve(schema), seen + (schema["$ref"],))
    alternatives = schema.get("oneOf") or schema.get("anyOf")
    if alternatives:
        rest = {k: v for k, v in schema.items() if k not in ("oneOf", "anyOf")}
        shapes = [shape(a if "$ref" in a else {**rest, **a}, seen) for a in alternatives]
        return max(s[0] for s in shapes), max(s[1] for s in shapes)
    kinds = schema.get("type", "object" if "properties" in schema else None)
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if None in kinds and not ({"const", "enum"} & set(schema)):
        return math.inf, math.inf
    levels, values = 0, 0
    if "object" in kinds:
        inner = [shape(p, seen) for p in schema.get("properties", {}).values()]
        extra = schema.get("additionalProperties", True)
        if extra is not False:
            more = shape(extra if isinstance(extra, dict) else {}, seen)
            inner.append(more)
            values += schema.get("maxProperties", math.inf) * (1 + more[1])
        levels = max(levels, 1 + max((s[0] for s in inner), default=0))
        values += sum(1 + s[1] for s in inner[:len(schema.get("properties", {}))])
    if "array" in kinds:
        item = shape(schema.get("items", {}), seen)
        levels = max(levels, 1 + item[0])
        values = max(values, schema.get("maxItems", math.inf) * (1 + item[1]))
    return levels, values


def body_shape(route):
    return shape(CONTRACT["paths"][route]["post"]["requestBody"]["content"]["application/json"]["schema"])


def test_the_nesting_bound_is_the_deepest_valid_body_plus_three():
    deepest = {route: body_shape(route)[0] for route in POST_ROUTES}
    assert deepest == {"/v1/analysis": 5, "/v1/draft": 5, "/v1/grade": 9, "/v1/grade/distribution": 5,
                       "/v1/grade/samples": 5, "/v1/runs": 5, "/v1/step": 5, "/v1/verify": 6}
    assert MAX_NESTING == max(deepest.values()) + 3 == 12


def test_the_values_bound_of_each_route_covers_its_largest_valid_body():
    assert set(BODY_RULES) == set(POST_ROUTES)
    largest = {route: body_shape(route)[1] for route in POST_ROUTES}
    sessions = {route: n for route, n in largest.items() if not route.startswith("/v1/grade")}
    assert max(sessions.values()) == largest["/v1/verify"] == 9025  # two 64-label custom models, 8 chains of 16, all 5 sampling fields, a tree setting of 16 branchings and more
    for route in sessions:
        assert BODY_RULES[route].max_values == SESSION_VALUES == 10_000
    # the grading routes' schemas allow more than their 8 MiB hold: a value takes 2 bytes at least
    assert largest["/v1/grade"] > BODY_RULES["/v1/grade"].max_values == GRADE_MAX_BODY_BYTES // 2
    samples = 10**6  # 10^6 samples of one label (6 bytes each), the rest of 8 MiB as more labels (4 bytes)
    most = samples * 2 + (GRADE_MAX_BODY_BYTES - 6 * samples) // 4
    assert most < BODY_RULES["/v1/grade/distribution"].max_values < most * 1.05
    assert BODY_RULES["/v1/grade/samples"] == BODY_RULES["/v1/grade/distribution"]  # the same samples, whole


def test_every_route_reads_numbers_as_the_table_says():
    assert {route: rule.numbers for route, rule in BODY_RULES.items()} == {
        "/v1/draft": SHORTEST, "/v1/step": SHORTEST, "/v1/verify": EXACT, "/v1/runs": EXACT,
        "/v1/analysis": EXACT, "/v1/grade": FLOAT64, "/v1/grade/distribution": FLOAT64,
        "/v1/grade/samples": FLOAT64}
    served = {rule.rule for rule in APP.url_map.iter_rules() if "POST" in rule.methods}
    assert served == set(BODY_RULES)
    # 0.1 + 0.2: exact decimals (and shortest, the same numbers) sum to 3/10; float64 does not
    row = '{"vocab": ["A", "B", "C"], "start": [0.1, 0.2, 0.7], "next": {"A": [0.1, 0.2, 0.7], ' \
          '"B": [0.1, 0.2, 0.7], "C": [0.1, 0.2, 0.7]}}'
    config = '{"target": %s, "draft": %s, "seed": 1, "limit": 2}' % (row, row)
    assert post("/v1/step", '{"config": %s}' % config).status_code == 200
    assert post("/v1/runs", '{"config": %s}' % config).status_code == 200


# ---------------------------------------------------------------- the examples, on every route


def nested(levels):
    return '{"config":{"draft":"biased","seed":1},"x":' + "[" * levels + "]" * levels + "}"


@pytest.mark.parametrize("route", POST_ROUTES)
@pytest.mark.parametrize("levels", [MAX_NESTING, 255, 300, 1000])
def test_deep_nesting_is_a_400_naming_the_bound(route, levels):
    """Issue 18: 255 to about 1000 levels were a 500 on /v1/draft, /v1/step (orjson.dumps) and
    /v1/grade (jsonschema_rs); at the bound (x at level 2, its arrays to level 13) still a 400."""
    response = post(route, nested(levels))
    assert response.status_code == 400, response.data[:300]
    assert response.mimetype == "application/problem+json"
    problem = response.get_json()
    assert problem["type"] == STRUCTURE_BOUND and problem["title"] == "Structure bound exceeded"
    assert f"deeper than {MAX_NESTING} levels" in problem["detail"]
    assert problem["errors"][0]["pointer"] == "#/x" + "/0" * (MAX_NESTING - 1)  # the first container at level 13


@pytest.mark.parametrize("route", POST_ROUTES)
def test_nesting_up_to_the_bound_is_read(route):
    """12 levels are within the bound: the body is read, and refused for what it is (an unknown field)."""
    response = post(route, nested(MAX_NESTING - 1))
    assert response.status_code == 422, response.data[:300]


LONG_EXPONENT = '{"config":{"draft":"biased","seed":1e1000000000000000000}}'


@pytest.mark.parametrize("route", POST_ROUTES)
@pytest.mark.parametrize("text, pointer", [
    (LONG_EXPONENT, "#/config/seed"),
    ('{"config":{"draft":"biased","seed":1},"unknown":[0, -2.5E-1000000000000000000]}', "#/unknown/1"),
    ('{"config":{"draft":"biased","seed":1},"x":{"a\\"b":"1e123456","~/":1e+12345}}', "#/x/~0~1"),
    ('{"config":{"draft":"biased","seed":1},"x":[1e-10000]}', "#/x/0"),
    ('{"config":{"draft":"biased","seed":%s}}' % ("1" * (MAX_NUMBER_CHARS + 1)), "#/config/seed"),
])
def test_a_long_number_literal_is_a_400_naming_it(route, text, pointer):
    """Issue 18: an exponent of 10^18 or more anywhere (an unknown field too) was a 500
    (decimal.InvalidOperation) on draft, step, verify, runs and analysis. A string holding one
    is a string."""
    response = post(route, text)
    assert response.status_code == 400, response.data[:300]
    problem = response.get_json()
    assert problem["type"] == STRUCTURE_BOUND
    assert problem["errors"] == [{"pointer": pointer, "detail": NUMBER_DETAIL}]
    assert NUMBER_DETAIL == "a number literal has at most 330 characters and an exponent of at most 9999 in size"


@pytest.mark.parametrize("literal", ["1e9999", "-1E-9999", "1e-09999", "0." + "0" * 323 + "5", "-" + "9" * 309 + ".5",
                                     "0e9999", "1" * MAX_NUMBER_CHARS])
def test_number_literals_within_the_bound_are_read(literal):
    assert len(literal) <= MAX_NUMBER_CHARS
    parse_json(f"[{literal}]".encode())  # exact decimals, exponents clamped at +-1000
    try:  # float64: read, or beyond its range (422)
        parse_json(f"[{literal}]".encode(), exact=False)
    except ApiProblem as problem:
        assert problem.status == 422 and "beyond the float64 range" in problem.detail


@pytest.mark.parametrize("literal", ["1e10000", "-1E-10000", "0e-10000", "0.5e1000000000000000000", "1" * 331,
                                     "0." + "0" * 320 + "1e10300", "-1.5e-99999"])
@pytest.mark.parametrize("exact", [True, False])
def test_number_literals_beyond_the_bound_are_refused_by_either_reading(literal, exact):
    with pytest.raises(ApiProblem) as caught:
        parse_json(f'{{"a": [0, {literal}]}}'.encode(), exact=exact)
    assert caught.value.status == 400 and caught.value.type == STRUCTURE_BOUND
    assert caught.value.errors == [{"pointer": "#/a/1", "detail": NUMBER_DETAIL}]


def test_too_many_values_is_a_413_stating_the_count():
    committed = ",".join(['"A"'] * 20_000)
    response = post("/v1/step", '{"config": {"draft": "biased", "seed": 1}, "committed": [%s]}' % committed)
    assert response.status_code == 413
    problem = response.get_json()
    assert problem["type"] == STRUCTURE_BOUND
    assert problem["detail"].startswith("The body holds 20004 values") and "at most 10000" in problem["detail"]


def test_values_are_counted_outside_strings():
    """Commas and brackets inside strings are not values; an empty array or object counts one:
    4 elements, 1 member and 2 empty containers."""
    check_structure(b'["a,b,[c]", {}, [], {"k": "{,,,}"}]', 7)
    with pytest.raises(ApiProblem) as caught:
        check_structure(b'["a,b,[c]", {}, [], {"k": "{,,,}"}]', 6)
    assert caught.value.status == 413 and "holds 7 values" in caught.value.detail
    check_structure(b'["\\\\", "\\"[[[[[[[[[[[[[[[[[[", 1]', 3)


# ---------------------------------------------------------------- names that look like pointer tokens


ODD_NAMES = ["00", "0", "-", "~0", "~1", "/", "", "1e3", "007", "1", " ", "%", "a/b~c"]


def test_odd_names_in_next_are_named_not_a_500():
    """Issue 18: {"next": {"00": {}}} was a 500 on /v1/step (KeyError '0' in _real_path:
    jsonschema_rs gives a name of digits as an integer and leaves an empty name out)."""
    text = '{"config":{"draft":{"next":{"00":{}},"start":[0.5,0.5],"vocab":["a","b"]},"seed":0,"target":""}}'
    response = post("/v1/step", text)
    assert response.status_code == 422, response.data[:300]
    assert {"pointer": "#/config/draft/next/00", "detail": "must be a list of 2 to 64 probabilities"} \
        in response.get_json()["errors"]


def _escaped(name):
    from specdec_service.engine import pointer
    return pointer((name,))[2:]


@pytest.mark.parametrize("name", ODD_NAMES)
@pytest.mark.parametrize("route", ["/v1/step", "/v1/draft", "/v1/runs", "/v1/analysis"])
def test_each_odd_name_is_pointed_at_exactly(route, name):
    table = {"vocab": ["a", "b"], "start": [0.5, 0.5], "next": {name: {}, "b": [0.5, 0.5], "a": [0.5, 0.5]}}
    response = post(route, json.dumps({"config": {"target": table, "draft": "biased", "seed": 0}}))
    assert response.status_code == 422, response.data[:300]
    pointers = [e["pointer"] for e in response.get_json()["errors"]]
    assert f"#/config/target/next/{_escaped(name)}" in pointers, pointers


@pytest.mark.parametrize("name", ODD_NAMES)
def test_each_odd_name_in_a_graded_trace_is_pointed_at_exactly(name):
    from specdec_service.engine import parse_config, run

    table = {"vocab": ["a", "b"], "start": [0.5, 0.5], "next": {"a": [0.5, 0.5], "b": [0.5, 0.5]}}
    trace = json.loads(json.dumps(run(parse_config({"target": table, "draft": table, "seed": 1, "limit": 2}))))
    trace["config"]["target"]["next"][name] = {}
    for body, prefix in ((trace, "#"), ({"traces": [trace]}, "#/traces/0")):
        response = post("/v1/grade", json.dumps(body))
        assert response.status_code == 422, response.data[:300]
        pointers = [e["pointer"] for e in response.get_json()["errors"]]
        assert f"{prefix}/config/target/next/{_escaped(name)}" in pointers, pointers
