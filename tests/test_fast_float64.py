"""The fast float64 reading of the grading routes (``api.bodies.parse_json_float64``, issue 18
sections 4 and 7) against the one exact reading (``parse_json(data, exact=False)``): for every
body within the structure bounds, the fast reading either returns exactly the exact reading's
value (the same types, an integral number an ``int`` however written, the same floats) or
defers (``None``); it defers for every body the exact reading refuses, so every refusal and its
message come from the exact path. The routes answer byte for byte as on the exact path."""

from __future__ import annotations

import json

import orjson
import pytest
from hypothesis import assume, given, settings, strategies as st

from specdec_service import create_app
from specdec_service.api import bodies
from specdec_service.api.bodies import MAX_VALUES, parse_json, parse_json_float64
from specdec_service.api.problems import ApiProblem
from specdec_service.api.structure import check_structure
from specdec_service.engine import parse_config, run

APP = create_app({"TESTING": True})


def same_reading(fast, exact) -> bool:
    """Whether two readings are the same value: the same types all the way down (``1`` is not
    ``1.0``), floats bit for bit, objects with the same names in the same order."""
    if type(fast) is not type(exact):
        return False
    if type(fast) is float:
        return repr(fast) == repr(exact)
    if type(fast) is dict:
        return list(fast) == list(exact) and all(same_reading(fast[k], exact[k]) for k in fast)
    if type(fast) is list:
        return len(fast) == len(exact) and all(same_reading(a, b) for a, b in zip(fast, exact))
    return fast == exact


def exact_or_none(data: bytes):
    try:
        return parse_json(data, exact=False)
    except ApiProblem:
        return None


def within_structure_bounds(data: bytes) -> bool:
    try:
        check_structure(data, MAX_VALUES)
    except ApiProblem:
        return False
    return True


def check(data: bytes) -> None:
    """The claim, for one body: the fast reading is the exact one, or it defers."""
    fast = parse_json_float64(data)
    if fast is not None:
        exact = exact_or_none(data)
        assert exact is not None, data  # never vouches for a body the exact path refuses
        assert same_reading(fast, exact), (data, fast, exact)


# ---------------------------------------------------------------- bodies as text, every spelling

# strings with the bytes the checks look at: colons (names), ".0" before , ] } (integral floats),
# "e+", digits, quotes and backslashes (escapes)
_ALPHABET = st.sampled_from(list('ab:.0,]}e+E19"\\ \u00e9\u2028'))


def _string(text: str, escape_colons: bool, ascii_only: bool) -> str:
    written = json.dumps(text, ensure_ascii=ascii_only)
    return written.replace(":", "\\u003a") if escape_colons else written


json_string = st.builds(_string, st.text(_ALPHABET, max_size=6), st.booleans(), st.booleans())
integral_spelling = st.builds(lambda n, tail: f"{n}{tail}", st.integers(-10**17, 10**17),
                              st.sampled_from([".0", ".00", "e0", "E+0", "0e-1", ".0e1", "e2", "e15", "e16"]))
decimal_spelling = st.decimals(allow_nan=False, allow_infinity=False).map(str).map(
    lambda s: s.replace("E", "e"))
special = st.sampled_from([
    "-0", "-0.0", "0.0", "0e99999", "1e-99999", "1e-400", "1e400", "1e308", "1.7976931348623157e308",
    "2.5e-324", "5e-324", "0.1", "9007199254740993.0", "1e22", "18446744073709551615", "18446744073709551616",
    "-9223372036854775809", "1" * 309, "1" * 330, "0." + "0" * 320 + "1", "1." + "0" * 329, "0.10000000000000001",
    '"\\ud800"', '"\\udc00"', '"\\ud83d\\ude00"', '"\\\\u003a"', '"a\\u003a"', "NaN", "Infinity", "-Infinity",
    "true", "false", "null", '"\\u0000"',
    # strings shaped like the literals beyond the bound (a hex draw), with and without escapes
    '"8e74616"', '"0e99999"', '"a\\n1e12345"', '"' + "1" * 300 + '"', '"\\t' + "2" * 301 + '"', '"1e+5"',
])
json_leaf = st.one_of(
    json_string, special, integral_spelling, decimal_spelling,
    st.integers(-2**70, 2**70).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(json.dumps),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda x: orjson.dumps(x).decode()),
)
_SPACE = st.sampled_from(["", "", " ", "\n  "])
# object names from a few strings, so that names repeat (a repeated name must defer)
json_name = st.one_of(st.sampled_from(['"a"', '"b"', '"a:"', '"a\\u003a"', '"\\u0061"', '"x.0,"']), json_string)
json_text = st.recursive(json_leaf, lambda inner: st.one_of(
    st.builds(lambda items, sp: "[" + ("," + sp).join(items) + "]", st.lists(inner, max_size=5), _SPACE),
    st.builds(lambda pairs, sp: "{" + ("," + sp).join(f"{k}{sp}:{sp}{v}" for k, v in pairs) + "}",
              st.lists(st.tuples(json_name, inner), max_size=5), _SPACE),
), max_leaves=25)


@settings(max_examples=2000)
@given(json_text)
def test_reads_as_the_exact_reading_or_defers(text):
    data = text.encode("utf-8", "surrogatepass")
    assume(within_structure_bounds(data))
    check(data)


@settings(max_examples=500)
@given(json_text, st.binary(max_size=3), st.integers(0, 200))
def test_damaged_bodies_too(text, junk, at):
    """A body with a few bytes inserted (not JSON, not UTF-8, a BOM, a stray quote)."""
    data = text.encode("utf-8", "surrogatepass")
    at = min(at, len(data))
    data = data[:at] + junk + data[at:]
    assume(within_structure_bounds(data))
    check(data)


@pytest.mark.parametrize("data", [
    b'{"a": 1, "a": 2}', b'{"a": {"b": 1.0}, "c": 2, "a": {"b": 1.0}}', b'{"a": null, "a": null}',
    b'{"a\\u003a": 1, "a:": 2}', b'{"a\\u003A": 1, "a:": 2}', b'{"\\\\u003a": 1, "\\\\u003a": 2}',
    b'["\\ud800"]', b'{"\\udfff": 1}', b'[NaN]', b'[Infinity]', b'[-Infinity]', b'[1e999]', b'[-1e309]',
    b'[1' + b'0' * 400 + b']', b'[1e-99999]', b'[0e99999]', b'[0.' + b'0' * 330 + b'1]',
    b'\xef\xbb\xbf[0.5]', b'[0.5', b'["\xff"]', b'["\xed\xa0\x80"]', b'["a\tb"]', b'["a\x01b"]',
    b'[01]', b'[1.]', b'[.5]', b'[+1]', b'[1]\x00', b'\x0c[1]', b'', b' ',
])
def test_defers_for_every_refusal(data):
    assert exact_or_none(data) is None
    assert parse_json_float64(data) is None


@pytest.mark.parametrize("data, value", [
    (b'[9.0, 9e0, 90e-1, 0.9e1, -0.0, 1E2, 0.5, 1e-7]', [9, 9, 9, 9, 0, 100, 0.5, 1e-7]),
    (b'{"m": 1.0, "seed": 9007199254740991, "x": {"y": [0.0, 1.0]}}',
     {"m": 1, "seed": 9007199254740991, "x": {"y": [0, 1]}}),
    (b'1.0', 1), (b'[18446744073709551615]', [18446744073709551615]), (b'{"a\\u003a": 2.5}', {"a:": 2.5}),
])
def test_reads_integral_numbers_as_ints(data, value):
    fast = parse_json_float64(data)
    assert same_reading(fast, value), fast
    assert same_reading(fast, parse_json(data, exact=False))


@pytest.mark.parametrize("data", [
    b'[18446744073709551616]',   # beyond 64 bits: orjson reads a float, the rule an int
    b'[1e16]',                   # a float of 1e16 or more: orjson writes e+16
    b'["x.0,", 1.0]',            # a string that the integral rewrite would cut
    b'[1' + b'0' * 310 + b']',   # beyond float64: a 422 from the exact path
])
def test_defers_where_it_cannot_vouch(data):
    assert parse_json_float64(data) is None


# ---------------------------------------------------------------- the grading bodies are read fast


def _trace(config: dict) -> dict:
    return json.loads(json.dumps(run(parse_config(config))))


GRADING_BODIES = {
    "/v1/grade": [
        _trace({"draft": "biased", "seed": 1}),
        {"traces": [_trace({"draft": "biased", "seed": s}) for s in range(3)]},
        {**_trace({"draft": "biased", "seed": 2}), "position": 1.0},           # an integral float: graded as 1
        {"traces": [1] * 1000},                                                  # refused: not traces
        {"config": {f"k{i}": 1 for i in range(1000)}},                            # refused: unknown names
        {"config": {"draft": "biased", "seed": 1}, "m": 1, "samples": [["A"]] * 1000},
    ],
    "/v1/grade/distribution": [
        {"config": {"draft": "biased", "seed": 0}, "m": 1, "samples": [["A"], ["B"], ["C"]] * 300},
        {"config": {"draft": "biased", "seed": 0}, "m": 1.0, "samples": [["A"], ["B"], ["C"]] * 300},
        {"config": {"draft": "biased", "seed": 0}, "m": 1, "counts": [{"prefix": ["A"], "count": 5.0}]},
        {"config": {"draft": "biased", "seed": 0}, "m": 1, "samples": [["A"]] * 999 + [["Z"]]},  # refused
        {f"k{i}": 1 for i in range(1000)},                                                         # refused
        {"config": {"draft": "biased", "seed": 0}, "m": 1, "samples": [1] * 1000},                 # refused
    ],
}
CASES = [(path, i) for path, bodies_ in GRADING_BODIES.items() for i in range(len(bodies_))]


@pytest.mark.parametrize("path, i", CASES)
@pytest.mark.parametrize("writer", ["python", "orjson"])
def test_grading_bodies_are_read_fast(path, i, writer):
    """The case the fast reading exists for: traces as the engine writes them, the worst refusals
    (the test fails if a change sends them back to the exact path)."""
    body = GRADING_BODIES[path][i]
    data = json.dumps(body).encode() if writer == "python" else orjson.dumps(body)
    fast = parse_json_float64(data)
    assert fast is not None
    assert same_reading(fast, parse_json(data, exact=False))


@pytest.mark.parametrize("path, i", CASES)
def test_routes_answer_byte_for_byte_as_the_exact_path(monkeypatch, path, i):
    """Each body answered with the fast reading wherever it vouches (``fast_float64_pays``, a
    choice of speed, forced) and with the exact reading alone: the same bytes."""
    data = orjson.dumps(GRADING_BODIES[path][i])
    client = APP.test_client()
    with monkeypatch.context() as patch:
        patch.setattr(bodies, "fast_float64_pays", lambda data: True)
        fast = client.post(path, data=data, content_type="application/json")
    with monkeypatch.context() as patch:
        patch.setattr(bodies, "parse_json_float64", lambda data: None)
        exact = client.post(path, data=data, content_type="application/json")
    assert fast.status_code == exact.status_code
    assert fast.data == exact.data
