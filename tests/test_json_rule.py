"""One JSON rule on every POST route (issue 9, sections 2 and 4; RFC 8259): UTF-8 without a
BOM, no charset but utf-8, no repeated names, no lone surrogates, every number literal
answered with 2xx or 4xx, integer-valued numbers read as integers. Each test runs on every
POST route the app serves (``POST_ROUTES`` must name a valid body for each of them)."""

import json

import pytest

from specdec_service import create_app
from specdec_service.api.bodies import parse_json
from specdec_service.api.problems import ApiProblem
from specdec_service.engine import parse_config, run

APP = create_app({"TESTING": True})
SEED1 = {"config": {"draft": "biased", "seed": 1}}
TRACE = run(parse_config({"draft": "biased", "seed": 1, "limit": 4}))
POST_ROUTES = {
    "/v1/draft": SEED1,
    "/v1/step": SEED1,
    "/v1/verify": {"state": SEED1, "proposal": {"tokens": ["A", "A", "C"]}},
    "/v1/runs": {"config": {"draft": "biased", "seed": 1, "limit": 4}},
    "/v1/analysis": {"config": {"draft": "biased"}, "depth": 1, "widths": [1, 2], "draft_cost": 0.05},
    "/v1/grade": TRACE,
    "/v1/grade/distribution": {"config": {"draft": "biased", "seed": 0}, "m": 1,
                               "counts": [{"prefix": ["A"], "count": 50}, {"prefix": ["B"], "count": 30},
                                          {"prefix": ["C"], "count": 20}]},
    "/v1/grade/samples": {"config": {"target": "toy", "limit": 2}, "samples": [["A", "B"], ["B", "C"], ["C", "A"]],
                          "alpha": 0.01},
}
"""A valid body of every POST route."""
MALFORMED = "tag:specdec,2026:problem/malformed-json"


def post(path, data, content_type="application/json"):
    return APP.test_client().post(path, data=data, content_type=content_type)


def problem_of(response, status):
    assert response.status_code == status, response.data
    assert response.mimetype == "application/problem+json"
    body = response.get_json()
    assert body["status"] == status
    return body


def test_every_post_route_has_a_valid_body():
    served = {rule.rule for rule in APP.url_map.iter_rules() if "POST" in rule.methods}
    assert served == set(POST_ROUTES)


@pytest.mark.parametrize("path", POST_ROUTES)
def test_valid_body_is_accepted_also_with_charset_utf8(path):
    text = json.dumps(POST_ROUTES[path]).encode()
    assert post(path, text).status_code == 200
    assert post(path, text, "application/json; charset=UTF-8").status_code == 200
    assert post(path, text, 'Application/JSON;charset="utf-8"').status_code == 200


# ---------------------------------------------------------------- encoding (RFC 8259 section 8.1)


@pytest.mark.parametrize("path", POST_ROUTES)
@pytest.mark.parametrize("encoding,fragment", [("utf-8-sig", "byte order mark"), ("utf-16", "not UTF-8"),
                                               ("utf-16-le", "not valid JSON"), ("utf-32", "not UTF-8")])
def test_only_utf8_without_bom(path, encoding, fragment):
    body = problem_of(post(path, json.dumps(POST_ROUTES[path]).encode(encoding)), 400)
    assert body["type"] == MALFORMED and fragment in body["detail"]


@pytest.mark.parametrize("path", POST_ROUTES)
@pytest.mark.parametrize("charset", ["utf-16", "latin-1", "us-ascii", "utf8"])
def test_a_charset_other_than_utf8_is_415(path, charset):
    body = problem_of(post(path, json.dumps(POST_ROUTES[path]).encode(), f"application/json; charset={charset}"), 415)
    assert repr(charset) in body["detail"] and "UTF-8" in body["detail"]


# ---------------------------------------------------------------- repeated names (RFC 8259 section 4)


@pytest.mark.parametrize("path", POST_ROUTES)
def test_a_repeated_name_is_400_naming_it(path):
    valid = POST_ROUTES[path]
    first = next(iter(valid))
    # the first copy is wrong, the last one (which a last-wins parser keeps) is valid
    text = '{"%s": {"junk": true}, %s' % (first, json.dumps(valid)[1:])
    body = problem_of(post(path, text), 400)
    assert body["type"] == MALFORMED
    assert body["errors"] == [{"pointer": f"#/{first}", "detail": f"duplicate name {first!r}"}]
    assert f"The name {first!r} appears more than once in the object at #:" in body["detail"]


def test_a_repeated_name_deep_inside_is_named_by_its_pointer():
    text = '{"state": {"config": {"draft": "biased", "seed": 1, "seed": 2}}, "proposal": {"tokens": ["A"]}}'
    body = problem_of(post("/v1/verify", text), 400)
    assert body["errors"] == [{"pointer": "#/state/config/seed", "detail": "duplicate name 'seed'"}]
    trace = json.dumps(TRACE).replace('"accepted": true', '"accepted": true, "accepted": false', 1)
    body = problem_of(post("/v1/grade", trace), 400)
    assert body["errors"] == [{"pointer": "#/blocks/0/verification/0/accepted", "detail": "duplicate name 'accepted'"}]


def test_the_repeated_name_of_the_first_object_is_named():
    """Objects in the order they start: an outer object before the objects inside it."""
    with pytest.raises(ApiProblem) as caught:
        parse_json(b'{"a": {"x": 1, "y": {"z": 1, "z": 2}, "x": 2}, "a": 3}')
    assert caught.value.errors == [{"pointer": "#/a", "detail": "duplicate name 'a'"}]
    with pytest.raises(ApiProblem) as caught:
        parse_json(b'{"a": {"x": 1, "y": {"z": 1, "z": 2}, "x": 2}, "b": 3}')
    assert caught.value.errors == [{"pointer": "#/a/x", "detail": "duplicate name 'x'"}]
    with pytest.raises(ApiProblem) as caught:  # a syntax error after the repeated name is still a 400
        parse_json(b'{"a": 1, "a": 2, }')
    assert caught.value.status == 400 and "not valid JSON" in caught.value.detail


def test_equal_names_in_different_objects_are_fine():
    assert parse_json(b'{"a": {"a": 1}, "b": [{"a": 2}, {"a": 3}]}') == {"a": {"a": 1}, "b": [{"a": 2}, {"a": 3}]}


# ---------------------------------------------------------------- lone surrogates (RFC 8259 section 8.2)


def _with_string(valid, text):
    """``valid`` with its first string value (depth first) replaced by the raw JSON ``text``."""
    marker = "\u0000marker\u0000"

    def put(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(value, str):
                    return {**node, key: marker}, (key,)
                found = put(value)
                if found:
                    return {**node, key: found[0]}, (key,) + found[1]
        if isinstance(node, list):
            for i, value in enumerate(node):
                if isinstance(value, str):
                    return node[:i] + [marker] + node[i + 1:], (i,)
                found = put(value)
                if found:
                    return node[:i] + [found[0]] + node[i + 1:], (i,) + found[1]
        return None

    replaced, path = put(valid)
    return json.dumps(replaced).replace(json.dumps(marker), text), "#/" + "/".join(map(str, path))


@pytest.mark.parametrize("path", POST_ROUTES)
@pytest.mark.parametrize("escape", [r'"\ud800"', r'"A\udfffB"', r'"\uDBFF"', r'"\udc00\ud800"'])
def test_a_lone_surrogate_is_400_on_every_route(path, escape):
    text, where = _with_string(POST_ROUTES[path], escape)
    body = problem_of(post(path, text), 400)
    assert body["type"] == MALFORMED
    assert body["errors"] == [{"pointer": where, "detail": "the string holds a lone surrogate "
                                                           "(\\ud800-\\udfff outside a valid pair)"}]


@pytest.mark.parametrize("path", POST_ROUTES)
def test_a_lone_surrogate_in_a_name_is_400(path):
    text = '{"\\udfff": 1, %s' % json.dumps(POST_ROUTES[path])[1:]
    body = problem_of(post(path, text), 400)
    assert body["errors"][0]["pointer"] == "#" and "a name in the object" in body["errors"][0]["detail"]


def test_a_surrogate_pair_and_an_escaped_backslash_are_fine():
    assert parse_json(rb'["\ud83d\ude00", "\\ud800", "\u00e9"]') == ["\U0001F600", "\\ud800", "\u00e9"]


def test_a_custom_vocabulary_label_with_a_lone_surrogate_never_reaches_a_trace():
    """Issue 9: POST /v1/runs accepted the label "\\ud800" and returned a trace /v1/grade could not grade."""
    text = ('{"config": {"draft": {"vocab": ["A", "\\ud800"], "start": [0.5, 0.5], '
            '"next": {"A": [0.5, 0.5], "\\ud800": [0.5, 0.5]}}, "target": "toy", "seed": 1}}')
    body = problem_of(post("/v1/runs", text), 400)
    assert body["errors"][0]["pointer"] == "#/config/draft/vocab/1"


def test_a_query_string_must_be_utf8():
    client = APP.test_client()
    for query in ("seed=%ED%A0%80", "seed=1&x=%ff", "seed=%C0%80"):
        body = problem_of(client.get(f"/v1/draws?{query}"), 400)
        assert "not percent-encoded UTF-8" in body["detail"]
    assert client.get("/v1/draws?seed=1&count=2").status_code == 200


# ---------------------------------------------------------------- numbers


HUGE = "1" + "0" * 309  # 10^309: beyond float64
FINE = "1" + "0" * 307  # 10^307


def _grade_with(path, literal):
    """POST /v1/grade of the trace with the number at ``path`` written as ``literal``."""
    value = json.loads(json.dumps(TRACE))
    node = value
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = "MARK"
    return post("/v1/grade", json.dumps(value).replace('"MARK"', literal))


BEYOND = "is beyond the float64 range (about 1.8e308): this route reads numbers as float64"


@pytest.mark.parametrize("field", ["p_token", "q_token", "ratio"])
@pytest.mark.parametrize("literal,status", [(HUGE, 422), ("-" + HUGE, 422), ("1e999", 422), ("-1e999", 422),
                                            ("1e-999", 200), (FINE, 200), ("-0", 200), ("-0.0", 200), ("1.0", 200)])
def test_grade_takes_any_number_literal_in_a_float_field(field, literal, status):
    """Issue 9: 10^309 in p_token or ratio was an OverflowError (500); 10^307 was fine."""
    response = _grade_with(("blocks", 0, "verification", 0, field), literal)
    assert response.status_code == status, response.data
    if status == 422:
        assert response.get_json()["errors"] == [{"pointer": f"#/blocks/0/verification/0/{field}", "detail": BEYOND}]
    else:  # graded: the value differs from the reference's (0.5, 0.8, 0.625)
        assert response.get_json()["passed"] is False


@pytest.mark.parametrize("path", [("blocks", 0, "verification", 0, "p", 1), ("blocks", 0, "verification", 0, "q", 1),
                                  ("blocks", 0, "correction", "distribution", 1), ("config", "width"),
                                  ("blocks", 0, "position"), ("counters", "draws"), ("position",)])
@pytest.mark.parametrize("literal", [HUGE, "1e999", "-1e400"])
def test_grade_refuses_a_number_beyond_float64_anywhere(path, literal):
    body = problem_of(_grade_with(path, literal), 422)
    assert body["errors"] == [{"pointer": "#/" + "/".join(map(str, path)), "detail": BEYOND}]


@pytest.mark.parametrize("path", [("blocks", 0, "verification", 0, "p", 1), ("blocks", 0, "correction", "distribution", 1)])
@pytest.mark.parametrize("literal", [FINE, "1e-999", "-0", "2.5"])
def test_grade_grades_a_wrong_number_in_a_row(path, literal):
    response = _grade_with(path, literal)
    assert response.status_code == 200 and response.get_json()["passed"] is False


@pytest.mark.parametrize("literal,status", [(HUGE, 422), ("1e999", 422), ("1e-999", 422), ("-0", 422),
                                            ("0.5", 200), ("5e-1", 200), (FINE, 422)])
def test_distribution_alpha_takes_any_number(literal, status):
    """Issue 9: alpha = 10^309 was a 500."""
    text = json.dumps({**POST_ROUTES["/v1/grade/distribution"], "alpha": "MARK"}).replace('"MARK"', literal)
    response = post("/v1/grade/distribution", text)
    assert response.status_code == status, response.data
    if status == 422:
        assert response.get_json()["errors"][0]["pointer"] == "#/alpha"


def test_integer_valued_numbers_are_integers_and_are_echoed_as_integers():
    """JSON Schema counts 9.0 an integer: so does the service, on every route."""
    text = '{"config": {"draft": "biased", "seed": 1.0, "width": 9.0, "limit": 8e0}, "position": 0.0}'
    response = post("/v1/step", text)
    assert response.status_code == 200, response.data
    assert b'"width":9,"seed":1,"limit":8,' in response.data
    same = '{"config": {"draft": "biased", "seed": 1, "width": 9, "limit": 8}, "position": 0}'
    assert response.data == post("/v1/step", same).data  # byte for byte
    assert response.get_json()["block"]["proposal"]["tokens"][:3] == ["A", "A", "C"]  # SPEC section 4's draws
    verify = post("/v1/verify", '{"state": %s, "proposal": {"tokens": ["A"]}}' % text)
    assert verify.status_code == 200 and b'"width":9,' in verify.data
    runs = post("/v1/runs", '{"config": {"draft": "biased", "seed": 1, "limit": 4.0, "width": 3e0}}')
    assert runs.status_code == 200
    assert runs.data == post("/v1/runs", '{"config": {"draft": "biased", "seed": 1, "limit": 4, "width": 3}}').data
    counts = POST_ROUTES["/v1/grade/distribution"]
    response = post("/v1/grade/distribution", json.dumps({**counts, "m": 1.0}))
    assert response.status_code == 200 and response.get_json()["m"] == 1


def test_numbers_not_integers_are_refused_where_an_integer_is_due():
    body = problem_of(post("/v1/step", '{"config": {"draft": "biased", "seed": 1, "width": 9.5}}'), 422)
    assert body["errors"][0]["pointer"] == "#/config/width"


def test_parse_rules_of_numbers():
    assert parse_json(b"[9.0, 9e0, 0.9e1, -0.0, -0, 1e-999, 0.25]") == [9, 9, 9, 0, 0, parse_json(b"1e-999"), parse_json(b"0.25")]
    assert [type(v) for v in parse_json(b"[9.0, -0.0, 1.0]")] == [int, int, int]
    assert [type(v) for v in parse_json(b"[9.0, 0.5, 1e-999]", exact=False)] == [int, float, int]
    assert parse_json(("[" + FINE + ", 1.5e308]").encode(), exact=False) == [10**307, 1.5e308]
    with pytest.raises(ApiProblem) as caught:
        parse_json(b'{"a": [1, 2, 1e400]}', exact=False)
    assert caught.value.status == 422 and caught.value.errors[0]["pointer"] == "#/a/2"
