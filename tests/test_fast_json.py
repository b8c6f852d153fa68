"""The fast reading of a session state (``api.bodies.parse_json_shortest``, issue 10's custom
session target) against the one exact reading (``parse_json``): whatever the fast reading
vouches for reads as the same numbers, it vouches for nothing the exact reading refuses, and
``POST /v1/step`` / ``POST /v1/draft`` answer byte for byte as on the exact path, refusals
included. Both readings run on a body within the structure bounds, checked first
(api/structure.py). The memo of first members that once sat in front of the fast reading is
gone (issue 18 section 7, docs/bench-engine.md)."""

from __future__ import annotations

import json
import random
from decimal import Decimal

import orjson
import pytest
from hypothesis import assume, given, settings, strategies as st

from specdec_service import create_app
from specdec_service.api import bodies
from specdec_service.api.bodies import MAX_VALUES, parse_json, parse_json_shortest
from specdec_service.api.problems import ApiProblem
from specdec_service.api.structure import check_structure

APP = create_app({"TESTING": True})


def custom_model(size: int, seed: int, places: int = 6) -> dict:
    """A random bigram table over ``size`` labels whose rows sum to 1 exactly as decimals."""
    rng = random.Random(seed)
    scale = 10 ** places

    def row():
        cuts = sorted(rng.sample(range(1, scale), size - 1))
        return [(b - a) / scale for a, b in zip([0] + cuts, cuts + [scale])]

    vocab = [f"t{i}" for i in range(size)]
    return {"vocab": vocab, "start": row(), "next": {label: row() for label in vocab}}


def same_numbers(fast, exact) -> bool:
    """Whether ``fast`` (the fast reading) and ``exact`` (parse_json's) are the same JSON value,
    a float of ``fast`` standing for the decimal of its repr (an int or Decimal in ``exact``)."""
    if type(fast) is float:
        return type(exact) in (int, Decimal) and Decimal(repr(fast)) == exact
    if type(fast) is not type(exact):
        return False
    if type(fast) is dict:
        return list(fast) == list(exact) and all(same_numbers(fast[k], exact[k]) for k in fast)
    if type(fast) is list:
        return len(fast) == len(exact) and all(same_numbers(a, b) for a, b in zip(fast, exact))
    return fast == exact


def exact_or_none(data: bytes):
    try:
        return parse_json(data)
    except ApiProblem:
        return None


def within_structure_bounds(data: bytes) -> bool:
    """Whether ``data`` passes the structure check that ``read_json`` makes before either reading."""
    try:
        check_structure(data, MAX_VALUES)
    except ApiProblem:
        return False
    return True


# ---------------------------------------------------------------- the claims it rests on


@settings(max_examples=3000)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_orjson_writes_each_float_as_its_shortest_decimal(x):
    """The canonical-body case compares the body with what orjson writes back: sound only if
    orjson's decimal of a float is the one the engine reads (Python's repr)."""
    assert Decimal(orjson.dumps(x).decode()) == Decimal(repr(x))


@settings(max_examples=3000)
@given(st.integers(1, 10**15 - 1), st.integers(-99 - 14, 99))
def test_a_short_decimal_reads_back_as_written(digits, exponent):
    """The short-literal case: a decimal of at most 15 significant digits in 1e-115..1e115 is
    the shortest decimal of the float64 orjson parses it to."""
    text = f"{digits}e{exponent}"
    assert Decimal(repr(orjson.loads(text))) == Decimal(text)


# ---------------------------------------------------------------- vouches only for what the exact reading reads alike

json_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(-2**70, 2**70), st.text(max_size=6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.decimals(allow_nan=False, allow_infinity=False, places=None).map(lambda d: Decimal(d)),
)
json_value = st.recursive(json_leaf, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=4), inner, max_size=5)), max_leaves=25)


def write(value, style: str, rng: random.Random) -> str:
    """``value`` as JSON text in a writer's style: Python's json, compact, or numbers in
    other spellings (trailing zeros, exponents, long literals), to try every branch."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {write(v, style, rng)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(write(v, style, rng) for v in value) + "]"
    if isinstance(value, Decimal):
        if not value.is_finite():
            return "0"
        spelled = format(value, "f") if style == "plain" and abs(value.adjusted()) < 30 else str(value)
        return spelled.replace("E", "e") if rng.random() < 0.5 else spelled
    if isinstance(value, float):
        if style == "padded":
            return repr(value) + ("0" if "e" not in repr(value) and "." in repr(value) else "")
        return json.dumps(value) if style != "orjson" else orjson.dumps(value).decode()
    return json.dumps(value, ensure_ascii=rng.random() < 0.5)


@settings(max_examples=1500)
@given(json_value, st.sampled_from(["python", "orjson", "plain", "padded"]), st.randoms(use_true_random=False))
def test_vouches_only_for_the_exact_reading(value, style, rng):
    data = write(value, style, rng).encode()
    assume(within_structure_bounds(data))
    fast = parse_json_shortest(data)
    if fast is not None:
        exact = exact_or_none(data)
        assert exact is not None, data
        assert same_numbers(fast, exact), (data, fast, exact)


@pytest.mark.parametrize("data", [
    b'{"a": 1, "a": 2}',                      # a repeated name
    b'{"a": {"b": 1}, "c": 2, "a": {"b": 1}}',
    b'{"a": null, "a": null}',               # repeated, nothing numeric in it
    b'["\\ud800"]',                          # a lone surrogate
    b'[NaN]', b'[Infinity]', b'[1e999]',
    b'\xef\xbb\xbf[0.5]',                    # a byte order mark
    b'[0.5',                                 # not JSON
    b'["\xff"]',                             # not UTF-8
    b'[0.10000000000000001]',               # 17 digits, not the shortest decimal of its float
    b'[0.1000000000000000055511151231257827]',
    b'[1e-400]', b'[2.4703282292062328e-324]',
    b'[0.00000000000000000000001]',          # below 1e-16 without an exponent: the exact path decides
    b'{"a\\u003a": 1, "a:": 2}',
    b'["a\tb"]', b'["a\nb"]', b'["a\x01b"]',  # raw control characters in a string
    b'[01]', b'[1.]', b'[.5]', b'[+1]', b'[1]\x00', b'\x0c[1]',
])
def test_vouches_for_nothing_it_cannot_read_alike(data):
    fast = parse_json_shortest(data)
    exact = exact_or_none(data)
    assert fast is None or (exact is not None and same_numbers(fast, exact)), (fast, exact)
    if exact is None:
        assert fast is None
    if b"0.1000000000000000" in data or b"e-4" in data or b"e-32" in data or b"00000000001" in data:
        assert fast is None  # long or tiny literals always go to the exact path


@pytest.mark.parametrize("writer", [
    lambda state: json.dumps(state).encode(),                         # Python (the SDK): 7.7e-05
    lambda state: json.dumps(state, separators=(",", ":")).encode(),
    lambda state: orjson.dumps(state),                                # as the service echoes it
    lambda state: orjson.dumps(state, option=orjson.OPT_INDENT_2),
])
def test_a_custom_state_is_read_fast(writer):
    """The case the fast reading exists for: a 64-label custom state as a client writes it
    (the test fails if a change sends it back to the exact path)."""
    state = {"config": {"target": custom_model(64, 1), "draft": custom_model(64, 2), "seed": 1, "width": 16,
                        "limit": 256}, "committed": ["t1", "t2"], "position": 40}
    data = writer(state)
    fast = parse_json_shortest(data)
    assert fast is not None
    assert same_numbers(fast, parse_json(data))


def test_long_literals_are_read_fast_when_written_as_orjson_or_javascript_would():
    """Rows normalised in float64 have 16-17 digit decimals: read fast when each is its
    float's shortest decimal as orjson (and JavaScript) write it."""
    rng = random.Random(3)
    weights = [rng.random() for _ in range(64)]
    row = [w / sum(weights) for w in weights]
    assert any(len(repr(x)) > 17 for x in row)
    data = orjson.dumps({"row": row})
    assert parse_json_shortest(data) == {"row": row}
    assert parse_json_shortest(data.replace(b"]", b"0]", 1)) is None  # a trailing zero: not orjson's


# ---------------------------------------------------------------- the routes answer as on the exact path


def both_paths(monkeypatch, path: str, data: bytes):
    client = APP.test_client()
    fast = client.post(path, data=data, content_type="application/json")
    with monkeypatch.context() as patch:
        patch.setattr(bodies, "parse_json_shortest", lambda data: None)
        exact = client.post(path, data=data, content_type="application/json")
    return fast, exact


def deterministic_model() -> dict:
    """Rows with integral entries written as floats (1.0, 0.0, -0.0), which the exact path
    reads as integers and echoes as 1 and 0."""
    return {"vocab": ["a", "b", "c"], "start": [1.0, 0.0, -0.0],
            "next": {"a": [0.0, 1.0, 0.0], "b": [0.25, 0.25, 0.5], "c": [0.5, 0.5, 0.0]}}


STATES = {
    "custom 64": {"config": {"target": custom_model(64, 1), "draft": custom_model(64, 2), "seed": 1, "width": 16,
                             "limit": 256}},
    "integral floats": {"config": {"target": deterministic_model(), "draft": {
        "vocab": ["a", "b", "c"], "start": [0.5, 0.25, 0.25],
        "next": {"a": [0.125, 0.75, 0.125], "b": [0.5, 0.25, 0.25], "c": [0.5, 0.5, 0.0]}}, "seed": 4,
                                   "width": 2, "limit": 6}},
    "toy": {"config": {"draft": "biased", "seed": 1}},
}


@pytest.mark.parametrize("name", sorted(STATES))
@pytest.mark.parametrize("path", ["/v1/step", "/v1/draft"])
@pytest.mark.parametrize("writer", ["python", "orjson"])
def test_routes_answer_byte_for_byte_as_the_exact_path(monkeypatch, name, path, writer):
    state = STATES[name]
    for _ in range(3):  # a few blocks of the session, each state sent back as the client writes it
        data = json.dumps(state).encode() if writer == "python" else orjson.dumps(state)
        fast, exact = both_paths(monkeypatch, path, data)
        assert fast.status_code == exact.status_code == 200, fast.data[:300]
        assert fast.data == exact.data
        if path == "/v1/draft" or fast.get_json()["done"] is not None:
            break
        state = fast.get_json()["state"]


@pytest.mark.parametrize("change, pointer", [
    ("0.10000000000000001", "/config/target/start/0"),  # 17 digits: not its float's shortest decimal
    (lambda s: s["config"].__setitem__("width", 3.0), None),        # an integral float is the integer 3
    (lambda s: s["config"].__setitem__("width", 3.5), "/config/width"),
    (lambda s: s.__setitem__("position", 2.5), "/position"),
    (lambda s: s["config"]["draft"]["start"].__setitem__(1, True), "/config/draft/start/1"),
    (lambda s: s["config"]["target"]["next"].__setitem__("zz", [0.5, 0.5, 0.0]), "/config/target/next/zz"),
])
def test_refusals_come_from_the_exact_path(monkeypatch, change, pointer):
    state = json.loads(json.dumps(STATES["integral floats"]))
    if callable(change):
        change(state)
    data = json.dumps(state).encode()
    if not callable(change):  # a literal no float writes: put it in the text
        data = data.replace(b"[1.0, 0.0, -0.0]", b"[%s, 0.9, 0.0]" % change.encode())
        assert change.encode() in data
    fast, exact = both_paths(monkeypatch, "/v1/step", data)
    assert fast.status_code == exact.status_code
    assert fast.data == exact.data
    if pointer is None:
        assert fast.status_code == 200
    else:
        assert fast.status_code == 422
        assert any(e["pointer"].startswith("#" + pointer) for e in fast.get_json()["errors"]), fast.get_json()
