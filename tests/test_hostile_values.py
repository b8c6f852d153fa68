"""No input produces a 5xx (issue 9, section 2): a property test that takes a valid body of
every POST route (a state, a custom-model state, a proposal, a config, a trace, a batch, a
distribution request), replaces one value at a time (a leaf, or a whole object or array) with
a hostile JSON literal, and asserts that the answer is a 2xx or a 4xx problem document.

Two exhaustive tests then put each number literal of :data:`NUMBERS` in every number field,
and a lone surrogate in every string, of those bodies (a 2xx or 4xx; a surrogate is a 400 at
parse time naming the string).

Hostile literals are written as JSON text, so they reach the parser exactly as a client could
send them: integers beyond float64 (10^309, -10^400), 1e999, 1e-999, -0, 1.0 where an integer
is due, 2^53 + 1, 2^64, lone surrogate escapes, a 10^5-character string, NUL, nested junk,
nesting past the bound (13 to 1000 levels of arrays or objects), exponents of 5 to 19 digits and
literals longer than the bound (issue 18 section 3).

A third property test renames a member, or adds one, in any object of those bodies (``next``,
``counters``, a config, the body itself: wherever a name is the caller's data or unknown) to a
name that is an odd but valid JSON Pointer token: ``"00"``, ``"0"``, ``"-"``, ``"~0"``,
``"~1"``, ``"/"``, ``""``, ``"1e3"``, numbers as strings (issue 18: ``{"next": {"00": {}}}`` was
a 500).
"""

import json

import pytest

from hypothesis import HealthCheck, given, settings, strategies as st

from specdec_service import create_app
from specdec_service.engine import parse_config, run

APP = create_app({"TESTING": True})
TABLE = {"vocab": ["A", "B", "C"], "start": [0.5, 0.3, 0.2],
         "next": {"A": [0.2, 0.6, 0.2], "B": [0.55, 0.15, 0.3], "C": [0.25, 0.25, 0.5]}}
CUSTOM = {"target": TABLE, "draft": {**TABLE, "start": [0.8, 0.15, 0.05]}, "mode": "speculative",
          "width": 3, "seed": 7, "limit": 5, "eos": "C"}
STATE = {"config": {"draft": "biased", "seed": 1}, "committed": ["A", "C"], "position": 6,
         "counters": {"target_passes": 1, "draft_steps": 3, "accepted": 1, "rejected": 1, "discarded": 1,
                      "bonus_tokens": 0, "committed": 2, "draws": 6}}
CUSTOM_STATE = {"config": CUSTOM, "committed": ["A"], "position": 2}
TRACE = run(parse_config(CUSTOM))
BUILTIN_TRACE = run(parse_config({"draft": "biased", "seed": 1, "limit": 3}))
DISTRIBUTION = {"config": {"draft": "aligned", "seed": 0, "limit": 4}, "m": 2,
                "counts": [{"prefix": ["A", "B"], "count": 12}, {"prefix": ["B", "A"], "count": 9}],
                "counters": {"accepted": 30, "draft_steps": 40}, "alpha": 0.01}
SAMPLES = {"config": CUSTOM, "m": 1, "samples": [["A", "B"], ["C"], ["B", "B"]]}
BODIES = {
    "/v1/step": [STATE, CUSTOM_STATE],
    "/v1/draft": [STATE, CUSTOM_STATE],
    "/v1/verify": [{"state": STATE, "proposal": {"tokens": ["A", "B"]}},
                   {"state": CUSTOM_STATE, "proposal": {"tokens": ["B"]}}],
    "/v1/runs": [{"config": CUSTOM}],
    "/v1/analysis": [{"config": {"draft": "biased"}, "depth": 1, "widths": [1, 2], "draft_cost": 0.05},
                     {"config": {**CUSTOM, "limit": 3}, "depth": 2, "widths": [2, 3], "draft_cost": 0.125}],
    "/v1/grade": [TRACE, {"traces": [BUILTIN_TRACE, TRACE]}],
    "/v1/grade/distribution": [DISTRIBUTION, SAMPLES],
    "/v1/grade/samples": [{"config": CUSTOM, "samples": [["A", "B", "A", "B", "A"], ["C"], ["B", "C"]],
                           "counters": {"accepted": 3, "draft_steps": 5}, "alpha": 0.01},
                          {"config": {"target": "toy", "limit": 2}, "samples": [["A", "B"], ["B", "B"]]}],
}
HOSTILE = [
    "1" + "0" * 309, "-1" + "0" * 400, "1" + "0" * 307, "1e999", "-1e999", "1E+400", "1e-999", "2.5e-324",
    "-0", "-0.0", "0", "1.0", "9.0", "3e0", "0.5", "-1", "1e308", "9007199254740993", "18446744073709551616",
    "true", "false", "null", '""', '"A"', r'"\ud800"', r'"\udfff\ud800"', r'"A\udc00"', r'"\u0000"',
    '"' + "x" * 100_000 + '"', "[]", "{}", "[[[[[[[[1]]]]]]]]", '{"a": {"b": [1, {"c": null}]}}',
    '["A", "B"]', "[1e999]", '{"A": 1}', r'{"\ud800": 1}', "[" + "9" * 400 + "]",
    # past the structure bounds (api/structure.py)
    "[" * 13 + "]" * 13, "[" * 255 + "]" * 255, "[" * 1000 + "]" * 1000, '{"a":' * 300 + "1" + "}" * 300,
    "[" * 300 + "1", "1e1000000000000000000", "-2.5E-1000000000000000000", "1e12345", "1E+99999",
    "1" * 331, "0." + "0" * 400 + "1", "[1e1000000000000000000]", '{"x": 1e-1000000000000000000}',
]
MARK = "\u0001hostile\u0001"


def places(node, path=()):
    """Every path to a value inside ``node`` (leaves, objects and arrays), the root excluded."""
    if path:
        yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from places(value, path + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from places(value, path + (i,))


def replaced(node, path, value):
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(node, dict):
        return {**node, head: replaced(node[head], rest, value)}
    return node[:head] + [replaced(node[head], rest, value)] + node[head + 1:]


CASES = [(route, i) for route, bodies in BODIES.items() for i in range(len(bodies))]
PLACES = {(route, i): list(places(BODIES[route][i])) for route, i in CASES}


@st.composite
def hostile_requests(draw):
    route, i = draw(st.sampled_from(CASES))
    path = draw(st.sampled_from(PLACES[(route, i)]))
    literal = draw(st.sampled_from(HOSTILE))
    text = json.dumps(replaced(BODIES[route][i], path, MARK)).replace(json.dumps(MARK), literal)
    return route, path, literal, text


def test_every_route_and_its_bodies_are_covered():
    served = {rule.rule for rule in APP.url_map.iter_rules() if "POST" in rule.methods}
    assert served == set(BODIES)
    for route, i in CASES:  # the unchanged bodies are valid
        response = APP.test_client().post(route, data=json.dumps(BODIES[route][i]), content_type="application/json")
        assert response.status_code == 200, (route, i, response.data[:300])


@settings(max_examples=700, deadline=None, suppress_health_check=list(HealthCheck))
@given(hostile_requests())
def test_no_hostile_value_anywhere_gives_a_5xx(request):
    route, path, literal, text = request
    response = APP.test_client().post(route, data=text, content_type="application/json")
    assert response.status_code < 500, (route, path, literal[:40], response.data[:300])
    if response.status_code >= 400:
        assert response.mimetype == "application/problem+json"
        problem = response.get_json()
        assert problem["status"] == response.status_code and problem["detail"]
    else:
        json.loads(response.data)  # a complete JSON document


NUMBERS = ["1" + "0" * 309, "-1" + "0" * 400, "1e999", "-1e999", "1e-999", "-0", "1.0", "18446744073709551616"]
"""Number literals every number field must take (2xx or 4xx): beyond float64, huge and tiny
exponents, negative zero, an integer written with a fraction, 2^64."""
SURROGATES = [r'"\ud800"', r'"x\udfff"']


def _value_at(node, path):
    for key in path:
        node = node[key]
    return node


def _exhaustive_cases():
    for route, bodies in BODIES.items():
        for i, body in enumerate(bodies):
            if route == "/v1/grade" and i == 1:
                continue  # the batch repeats the single trace's fields
            yield route, i


@pytest.mark.parametrize("route,i", list(_exhaustive_cases()))
def test_every_number_field_takes_any_number_literal(route, i):
    """Exhaustive over the number fields of each valid body: no 5xx, and a refusal names the field
    (a pointer at it or inside it, or at the object holding it)."""
    body = BODIES[route][i]
    client = APP.test_client()
    numbers = [p for p in places(body) if type(_value_at(body, p)) in (int, float)]
    assert numbers
    for path in numbers:
        for literal in NUMBERS:
            text = json.dumps(replaced(body, path, MARK)).replace(json.dumps(MARK), literal)
            response = client.post(route, data=text, content_type="application/json")
            assert response.status_code < 500, (route, path, literal[:30], response.data[:300])
            if response.status_code >= 400:
                assert response.mimetype == "application/problem+json"


@pytest.mark.parametrize("route,i", list(_exhaustive_cases()))
def test_every_string_and_name_refuses_a_lone_surrogate_at_parse_time(route, i):
    body = BODIES[route][i]
    client = APP.test_client()
    strings = [p for p in places(body) if isinstance(_value_at(body, p), str)]
    for path in strings:
        for literal in SURROGATES:
            text = json.dumps(replaced(body, path, MARK)).replace(json.dumps(MARK), literal)
            response = client.post(route, data=text, content_type="application/json")
            assert response.status_code == 400, (route, path, response.data[:300])
            assert response.get_json()["errors"][0]["pointer"] == "#/" + "/".join(map(str, path))


ODD_NAMES = ["00", "0", "-", "~0", "~1", "/", "", "1e3", "007", "1", "-1", "1.5", " ", "%25", "~01", "a/b~c",
             "#", "\u00e9", "t0", "A", "next", "config"]
"""Names that are odd but valid JSON Pointer tokens (RFC 6901: ``~`` and ``/`` escaped, digits
that an array index would read, the empty name), and names the body already uses."""


def objects(node, path=()):
    """Every path to an object inside ``node``, the root included."""
    if isinstance(node, dict):
        yield path
        for key, value in node.items():
            yield from objects(value, path + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from objects(value, path + (i,))


def renamed(node, path, change):
    """``node`` with ``change`` applied to the object at ``path`` (a new dict, order kept)."""
    if not path:
        return change(node)
    head, rest = path[0], path[1:]
    if isinstance(node, dict):
        return {**node, head: renamed(node[head], rest, change)}
    return node[:head] + [renamed(node[head], rest, change)] + node[head + 1:]


OBJECTS = {(route, i): list(objects(BODIES[route][i])) for route, i in CASES}


@st.composite
def odd_name_requests(draw):
    route, i = draw(st.sampled_from(CASES))
    path = draw(st.sampled_from(OBJECTS[(route, i)]))
    name = draw(st.sampled_from(ODD_NAMES))
    target = BODIES[route][i]
    for key in path:
        target = target[key]
    rename = bool(target) and draw(st.booleans())
    if rename:
        old = draw(st.sampled_from(sorted(target)))
        change = lambda obj: {(name if k == old else k): v for k, v in obj.items()}  # noqa: E731
    else:
        value = json.loads(draw(st.sampled_from(['{}', '[]', '1', '"A"', '[0.5, 0.5]', 'null'])))
        change = lambda obj: {**obj, name: value}  # noqa: E731
    return route, path, name, rename, json.dumps(renamed(BODIES[route][i], path, change))


@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(odd_name_requests())
def test_no_odd_name_anywhere_gives_a_5xx(request):
    """A renamed or added member with an odd name in any object (``next``, ``counters``, a config,
    a trace's block, the body): a 2xx or a problem document, never a 5xx."""
    route, path, name, rename, text = request
    response = APP.test_client().post(route, data=text, content_type="application/json")
    assert response.status_code < 500, (route, path, name, rename, response.data[:300])
    if response.status_code >= 400:
        assert response.mimetype == "application/problem+json"
        problem = response.get_json()
        assert problem["status"] == response.status_code and problem["detail"]
        for error in problem.get("errors", []):
            assert error["pointer"].startswith("#")
    else:
        json.loads(response.data)
