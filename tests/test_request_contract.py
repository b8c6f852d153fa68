"""One parse path for the engine's bodies: the contract and the parsers agree.

Each body (a config, a custom model table, a session state, ``POST /v1/verify``,
``POST /v1/runs``, ``POST /v1/analysis``) is stated once (``engine/inputs.py``); the engine's
parsers check it and the contract (``openapi.yaml``: ``ConfigIn``, ``ModelTableIn``,
``StateIn``, ``VerifyIn``, ``RunIn``, ``AnalysisIn``) is produced from it. These tests hold the
two ends against each other:

- a hypothesis property per body: bodies whose fields are drawn within the bounds the
  contract states (read from the published document, boundary values among them), or are
  arbitrary JSON, present or absent, with unknown fields now and then, are accepted by the
  contract (``jsonschema_rs`` on the whole published document) exactly when the parser
  accepts them. Bodies are read by the service's own JSON reader (``parse_json``: ``3.0`` is
  the integer 3, as over HTTP). The rules no JSON Schema states (tokens of the vocabulary, a
  committed prefix within the limit, rows summing to 1, ``depth`` at most ``limit``) are kept
  true, as the contract test excuses them (tests/test_openapi.py);
- each bound, on both sides of it, over HTTP: accepted (200), or refused (422) with the
  pointer of the field in ``errors``, the verdict of the contract.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, note, settings, strategies as st
from jsonschema_rs import Draft202012Validator

from specdec_service import create_app
from specdec_service.api.bodies import parse_json
from specdec_service.engine import InvalidInput, parse_config, parse_model, parse_state, pointer
from specdec_service.engine.analysis import parse_analysis
from specdec_service.engine.state import parse_run, parse_verify

DOCUMENT = yaml.safe_load((Path(__file__).resolve().parents[1] / "openapi.yaml").read_text(encoding="utf-8"))
COMPONENTS = DOCUMENT["components"]["schemas"]
APP = create_app({"TESTING": True})
LABELS = ["A", "B", "C"]
TABLE = {"vocab": LABELS, "start": [0.5, 0.3, 0.2],
         "next": {"A": [0.2, 0.6, 0.2], "B": [0.55, 0.15, 0.3], "C": [0.25, 0.25, 0.5]}}
SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))


def contract(name: str) -> Draft202012Validator:
    """The published contract of component ``name``, its references resolved in the document."""
    return Draft202012Validator({"$ref": f"#/components/schemas/{name}", "components": DOCUMENT["components"]})


def read(body):
    """``body`` as the service reads it (``parse_json`` of its JSON text)."""
    return parse_json(json.dumps(body).encode())


def agree(name: str, parse, body) -> None:
    """The contract ``name`` accepts ``body`` exactly when ``parse`` does."""
    body = read(body)
    try:
        parse(body)
        faults = []
    except InvalidInput as error:
        faults = [(pointer(f.path), f.message) for f in error.faults]
    accepted = contract(name).is_valid(body)
    note(f"body={body!r} contract={accepted} parser={faults}")
    assert accepted == (not faults), (body, faults)


JUNK = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 20), st.integers(),
    st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([0, 1, 0.5, 1.0, 3.0, -0.0, 2**53, 2**53 - 1]),
    st.text(max_size=3), st.just("A" * 17), st.lists(st.sampled_from(LABELS), max_size=2),
    st.dictionaries(st.sampled_from(LABELS + ["x"]), st.integers(0, 3), max_size=2),
)
"""Arbitrary JSON values, boundary numbers among them."""


def _stated(schema: dict):
    """Values within what ``schema`` (a property of the published document) states, its
    bounds among them."""
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if schema.get("type") == "integer":
        low, high = schema["minimum"], schema["maximum"]
        return st.one_of(st.sampled_from([low, high]), st.integers(low, high))
    if schema.get("type") == "number":
        high = schema["maximum"]
        if "exclusiveMinimum" in schema:  # top_p: above 0
            low = schema["exclusiveMinimum"]
            return st.one_of(st.just(high), st.floats(low, high, exclude_min=True))
        low = max([schema["minimum"]] + [b["minimum"] for b in schema.get("anyOf", ()) if "minimum" in b])
        consts = [b["const"] for b in schema.get("anyOf", ()) if "const" in b]  # temperature: 0 or 0.05..20
        return st.one_of(st.sampled_from([*consts, low, high]), st.floats(low, high), st.integers(-(-low // 1), high))
    if schema.get("type") == "object":  # sampling: any of its fields, each stated, past or arbitrary
        return st.fixed_dictionaries({}, optional={key: st.one_of(_stated(sub), _past(sub), JUNK)
                                                   for key, sub in schema["properties"].items()})
    raise AssertionError(schema)


def _past(schema: dict):
    """Values just past the bounds of an integer or number ``schema`` (and, for a number with a
    gap, in it: a temperature of 0.04)."""
    if schema.get("type") in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        gaps = [b["minimum"] - 0.01 for b in schema.get("anyOf", ()) if "minimum" in b]
        return st.sampled_from([low - 1, schema["maximum"] + 1, *gaps, *([low] if "exclusiveMinimum" in schema else [])])
    return JUNK


def _focus(draw, keys) -> str:
    """The field that may be off the contract: one of ``keys`` (so that a body with one fault
    is drawn often), or ``"any"`` (every field may be)."""
    return draw(st.sampled_from([*keys, "any", "any"]))


def _field(draw, key: str, schema: dict, stated=None, focus: str = "any"):
    """A value of field ``key``: within what the contract states of it, past its bounds,
    arbitrary JSON, or absent (the last three only when ``focus`` is ``key`` or ``"any"``)."""
    off = focus in (key, "any")
    how = draw(st.sampled_from(["stated"] * 5 + ["past", "junk", "absent"] if off else ["stated"] * 3 + ["absent"]))
    if how == "absent":
        return None, False
    if how == "stated":
        return draw(stated if stated is not None else _stated(schema)), True
    return draw(_past(schema) if how == "past" else JUNK), True


def _unknown(draw, body: dict, odds: int = 10) -> dict:
    """``body``, with an unknown field one time in ``odds``."""
    if draw(st.integers(1, odds)) == 1:
        body = {**body, draw(st.sampled_from(["extra", "seed2", "x"])): draw(JUNK)}
    return body


MODEL_NAMES = {"target": st.sampled_from(["toy", TABLE]), "draft": st.sampled_from(["aligned", "biased", TABLE])}


@st.composite
def trees(draw):
    """A ``tree`` (SPEC 12) within the contract that keeps the rules it cannot state true: residual
    not with beam, branching only with distinct (short lists of 1s and 2s: at most 256 nodes at
    any width), thresholds (0 < t <= 1) only with target_only."""
    shape = draw(st.sampled_from([None, "chains", "distinct", "beam"]))
    verify = "target_only" if shape == "beam" else draw(st.sampled_from([None, "residual", "target_only"]))
    tree = {key: value for key, value in (("shape", shape), ("verify", verify)) if value is not None}
    if shape == "distinct" and draw(st.booleans()):
        tree["branching"] = draw(st.lists(st.integers(1, 2), min_size=1, max_size=3))
    if verify == "target_only":
        for key in ("threshold_single", "threshold_acc"):
            if draw(st.booleans()):
                tree[key] = draw(st.one_of(st.just(1), st.floats(0, 1, exclude_min=True)))
    return tree


ANALYSED_TREES = st.sampled_from([{}, {"shape": "chains"}, {"verify": "residual"}, {"shape": "chains", "verify": "residual"}])
"""The trees an analysis takes today (SPEC 11's); the others are refused (engine/analysis.py)."""


@st.composite
def configs(draw, component: str = "ConfigIn"):
    """A config: each setting stated, past its bounds, arbitrary or absent; ``eos`` a label of
    the vocabulary when it is a string of 1-16 characters (the vocabulary is a rule no schema
    states)."""
    properties = COMPONENTS[component]["properties"]
    focus = _focus(draw, properties)
    body = {}
    for key, schema in properties.items():
        if key in MODEL_NAMES:
            stated = MODEL_NAMES[key]
        elif key == "eos":
            stated = st.sampled_from([None, *LABELS])
        elif key == "tree":
            stated = ANALYSED_TREES if component == "AnalysisConfigIn" else trees()
        else:
            stated = None
        value, present = _field(draw, key, schema, stated, focus)
        if key == "eos" and isinstance(value, str) and 1 <= len(value) <= 16:
            value = "A"
        if key in MODEL_NAMES and isinstance(value, str) and value not in ("toy", "aligned", "biased"):
            value = draw(st.sampled_from([value, 3, None]))  # an unknown name is refused by both
            if isinstance(value, str) and len(value) == 0:
                value = None
        if present:
            body[key] = value
    if isinstance(body.get("tree"), dict):  # SPEC 12: only mode tree reads it (a rule no schema states)
        body["mode"] = "tree"
    if draw(st.integers(0, 4)):  # mostly the required ones
        body.setdefault("draft", "biased")
        if component == "ConfigIn":
            body.setdefault("seed", 1)
    return _unknown(draw, body)


def _or_junk(values: list):
    """One of ``values`` (values the contract refuses) half of the time, else arbitrary JSON
    (a flat choice: ``st.one_of`` would flatten into JUNK's branches)."""
    return st.booleans().flatmap(lambda pick: st.sampled_from(values) if pick else JUNK)


def _finish(draw, body: dict) -> dict:
    """``body`` without its required ``config`` one time in 21, with an unknown field one in ten."""
    if draw(st.integers(0, 20)) == 0:
        del body["config"]
    return _unknown(draw, body)


def _mostly(strategy):
    """``strategy`` four times in five, else arbitrary JSON."""
    return st.integers(0, 4).flatmap(lambda k: strategy if k else JUNK)


WEIGHTS = {True: ["stated", "refused", "refused", "absent"], False: ["stated"] * 4 + ["refused", "absent"]}
"""How a list field is drawn: mostly refused when it is the field in focus."""


@st.composite
def states(draw):
    """A state: a config of the toy vocabulary with ``limit`` 8 (stated or arbitrary), committed
    labels of it within the limit (or values the contract refuses), position and counters
    stated, past their bounds, arbitrary or absent."""
    properties = COMPONENTS["StateIn"]["properties"]
    body = {"config": draw(st.one_of(st.just({"draft": "biased", "seed": 1}), configs()))}
    if isinstance(body["config"], dict):
        body["config"].pop("limit", None)
        body["config"].pop("eos", None)
    focus = _focus(draw, ["committed", "position", "counters"])
    how = draw(st.sampled_from(WEIGHTS[focus == "committed"] if focus in ("committed", "any") else ["stated", "absent"]))
    if how == "stated":
        body["committed"] = draw(st.lists(st.sampled_from(LABELS), max_size=8))
    elif how == "refused":
        body["committed"] = draw(_or_junk([None, 3, "A", ["A", ""], ["A" * 17], ["A", "A" * 17], [1], ["A"] * 257,
                                           {"A": 1}]))
    value, present = _field(draw, "position", properties["position"], focus=focus)
    if present:
        body["position"] = value
    counters = COMPONENTS["CountersIn"]["properties"]
    how = draw(st.sampled_from(["stated"] * 4 + ["junk", "absent"] if focus in ("counters", "any")
                               else ["stated", "absent"]))
    if how == "stated":
        body["counters"] = {}
        for name, schema in counters.items():
            value, present = _field(draw, name, schema, focus="any" if focus in ("counters", "any") else focus)
            if present:
                body["counters"][name] = value
        body["counters"] = _unknown(draw, body["counters"], 3 if focus == "counters" else 10)
    elif how == "junk":
        body["counters"] = draw(JUNK)
    return _finish(draw, body)


@SETTINGS
@given(configs())
def test_contract_and_parser_agree_on_configs(body):
    agree("ConfigIn", parse_config, body)


@SETTINGS
@given(states())
def test_contract_and_parser_agree_on_states(body):
    agree("StateIn", parse_state, body)


PROPOSALS = st.integers(0, 3).flatmap(lambda k: [
    st.fixed_dictionaries({"tokens": st.lists(st.sampled_from(LABELS), max_size=16)}),
    st.fixed_dictionaries({"tokens": _or_junk([["A"] * 17, [""], [2], ["A" * 17]])}),
    st.sampled_from([{}, {"tokens": ["A"], "x": 1}, {"tokens": None}]), JUNK][k])
"""A proposal within what the contract states, or one it refuses."""


@SETTINGS
@given(_mostly(states()), PROPOSALS, st.integers(0, 9))
def test_contract_and_parser_agree_on_verify_bodies(state, proposal, shape):
    """``parse_verify`` (the body's structure; a proposal's vocabulary and room are the
    engine's rules, checked after it)."""
    body = {"state": state, "proposal": proposal}
    if shape == 0:
        body = {"state": state}
    elif shape == 1:
        body = {**body, "extra": 1}
    agree("VerifyIn", parse_verify, body)


@SETTINGS
@given(_mostly(configs()), st.integers(0, 9))
def test_contract_and_parser_agree_on_run_bodies(config, shape):
    body = {} if shape == 0 else {"config": config, "x": 1} if shape == 1 else {"config": config}
    agree("RunIn", parse_run, body)


@st.composite
def analyses(draw):
    properties = COMPONENTS["AnalysisIn"]["properties"]
    config = draw(st.one_of(st.just({"draft": "biased"}), st.just({"draft": "aligned", "width": 2}),
                            configs("AnalysisConfigIn")))
    if isinstance(config, dict):
        config.pop("limit", None)  # depth at most limit (8 by default) is a rule no schema states
        if config.get("mode") == "block":  # nor is the bound on the draft blocks mode block enumerates
            del config["mode"]
    focus = _focus(draw, ["depth", "widths", "draft_cost"])
    body = {"config": config}
    value, present = _field(draw, "depth", properties["depth"], focus=focus)
    if present:
        body["depth"] = value
    widths = properties["widths"]
    how = draw(st.sampled_from(WEIGHTS[focus == "widths"] if focus in ("widths", "any") else ["stated", "absent"]))
    if how == "stated":
        body["widths"] = draw(st.lists(_stated(widths["items"]), min_size=1, max_size=widths["maxItems"], unique=True))
    elif how == "refused":
        body["widths"] = draw(_or_junk([[], [2, 2], [1, 3, 1], [0], [17], list(range(1, 18)), [1.5], [True]]))
    value, present = _field(draw, "draft_cost", properties["draft_cost"], focus=focus)
    if present:
        body["draft_cost"] = value
    return _finish(draw, body)


@SETTINGS
@given(analyses())
def test_contract_and_parser_agree_on_analysis_bodies(body):
    agree("AnalysisIn", parse_analysis, body)


NOT_A_VOCABULARY = JUNK.filter(lambda v: not (isinstance(v, list) and len(set(v)) == len(v) >= 2))
"""Arbitrary JSON but a vocabulary of another model (another vocabulary is a rule no schema states)."""


@st.composite
def tables(draw):
    """A model table of 2-4 labels with rows summing to 1, now and then changed in a way the
    contract refuses (a wrong type, a label too long or repeated, an entry out of 0..1, a
    missing or unknown field), or left valid."""
    size = draw(st.integers(2, 4))
    vocab = [f"t{i}" for i in range(size)]
    row = [1] + [0] * (size - 1)
    body = {"vocab": vocab, "start": list(row), "next": {label: list(row) for label in vocab}}
    change = draw(st.sampled_from(["none"] * 3 + ["vocab", "start", "next", "missing", "unknown", "label"]))
    if change == "vocab":
        body["vocab"] = draw(st.booleans().flatmap(lambda pick: st.sampled_from(
            [vocab[:1], [*vocab[:-1], vocab[0]], [*vocab[:-1], "x" * 17], [*vocab[:-1], ""]]) if pick else NOT_A_VOCABULARY))
    elif change == "start":
        body["start"] = draw(_or_junk([[1.5, -0.5] + [0] * (size - 2), ["1"] + row[1:], [True] + row[1:]]))
    elif change == "next":
        body["next"] = draw(_or_junk([{vocab[0]: row}, {**body["next"], vocab[0]: [2] + row[1:]}]))
    elif change == "missing":
        del body[draw(st.sampled_from(["vocab", "start", "next"]))]
    elif change == "unknown":
        body["rows"] = {}
    elif change == "label":
        body["next"] = {**body["next"], "x" * 17: row}
    return body


@SETTINGS
@given(tables())
def test_contract_and_parser_agree_on_model_tables(body):
    agree("ModelTableIn", parse_model, body)


# ---------------------------------------------------------------- bounds over HTTP


def _verdict(path: str, body: dict, field: str):
    response = APP.test_client().post(path, data=json.dumps(body), content_type="application/json")
    if response.status_code == 200:
        return True
    assert response.status_code == 422, response.data
    pointers = [e["pointer"] for e in response.get_json()["errors"]]
    assert field in pointers, (field, pointers)
    return False


SEED1 = {"draft": "biased", "seed": 1}
BOUNDS = [
    ("/v1/step", lambda v: {"config": {**SEED1, "width": v}}, "#/config/width", ("ConfigIn", "width")),
    ("/v1/step", lambda v: {"config": {**SEED1, "limit": v}}, "#/config/limit", ("ConfigIn", "limit")),
    ("/v1/step", lambda v: {"config": {**SEED1, "seed": v}}, "#/config/seed", ("ConfigIn", "seed")),
    ("/v1/step", lambda v: {"config": SEED1, "position": v}, "#/position", ("StateIn", "position")),
    ("/v1/runs", lambda v: {"config": {**SEED1, "width": v, "limit": 2}}, "#/config/width", ("ConfigIn", "width")),
    ("/v1/verify", lambda v: {"state": {"config": SEED1, "counters": {"discarded": v}}, "proposal": {"tokens": ["A"]}},
     "#/state/counters/discarded", ("CountersIn", "discarded")),
    ("/v1/analysis", lambda v: {"config": {"draft": "biased", "limit": 8}, "depth": v, "widths": [1]}, "#/depth",
     ("AnalysisIn", "depth")),
    ("/v1/analysis", lambda v: {"config": {"draft": "biased"}, "depth": 1, "widths": [1], "draft_cost": v},
     "#/draft_cost", ("AnalysisIn", "draft_cost")),
]
ROUTE_BODIES = {"/v1/step": "StateIn", "/v1/runs": "RunIn", "/v1/verify": "VerifyIn", "/v1/analysis": "AnalysisIn"}


@pytest.mark.parametrize("path, body_of, field, bound", BOUNDS)
def test_each_bound_is_served_as_the_contract_states_it(path, body_of, field, bound):
    """At each bound (read from the published component) the route accepts and the contract
    of its body does; one past it, both refuse, the route naming the field. (The largest
    position is a valid state with no room for a block's draws: read in process.)"""
    component, key = bound
    schema = COMPONENTS[component]["properties"][key]
    low, high = schema["minimum"], schema["maximum"]
    for value, accepted in ((low, True), (high, True), (low - 1, False), (high + 1, False)):
        body = body_of(value)
        assert contract(ROUTE_BODIES[path]).is_valid(body) is accepted, (key, value)
        if key == "position" and value == high:
            assert parse_state(body).position == high
            continue
        assert _verdict(path, body, field) is accepted, (key, value)


@pytest.mark.parametrize("path, body, field", [
    ("/v1/step", {"config": {**SEED1, "widths": 3}}, "#/config/widths"),
    ("/v1/step", {"config": SEED1, "committed": ["A"] * 257}, "#/committed"),
    ("/v1/verify", {"state": {"config": SEED1}, "proposal": {"tokens": ["A"] * 17}}, "#/proposal/tokens"),
    ("/v1/runs", {"config": SEED1, "trace": True}, "#/trace"),
    ("/v1/analysis", {"config": {"draft": "biased"}, "widths": list(range(1, 18))}, "#/widths"),
    ("/v1/analysis", {"config": {"draft": "biased"}, "widths": [2, 2]}, "#/widths/1"),
    ("/v1/step", {"config": {"draft": {**TABLE, "vocab": ["A", "B", "C" * 17]}, "seed": 1}}, "#/config/draft/vocab/2"),
])
def test_sizes_past_their_bounds_are_refused_naming_the_field(path, body, field):
    assert _verdict(path, body, field) is False


def _with(base: dict, path: tuple, value) -> dict:
    """A copy of ``base`` with the field at ``path`` set to ``value`` (``ABSENT``: removed)."""
    body = json.loads(json.dumps(base))
    node = body
    for key in path[:-1]:
        node = node[key]
    if value is ABSENT:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return body


ABSENT = object()
VALID = {
    "StateIn": (parse_state, {"config": {"draft": "biased", "seed": 1}, "committed": ["A"], "position": 3,
                              "counters": {"draws": 3}}),
    "VerifyIn": (parse_verify, {"state": {"config": {"draft": "biased", "seed": 1}}, "proposal": {"tokens": ["A"]}}),
    "RunIn": (parse_run, {"config": {"draft": "biased", "seed": 1}}),
    "AnalysisIn": (parse_analysis, {"config": {"draft": "biased"}, "depth": 2, "widths": [1, 2], "draft_cost": 0.5}),
    "ModelTableIn": (parse_model, TABLE),
}
ONE_FAULT = [
    ("StateIn", ("committed",), ["A", ""]), ("StateIn", ("committed",), ["A" * 17]), ("StateIn", ("committed",), [1]),
    ("StateIn", ("committed",), ["A"] * 257), ("StateIn", ("committed",), "A"), ("StateIn", ("position",), 1.5),
    ("StateIn", ("position",), True), ("StateIn", ("counters",), {"draws": -1}), ("StateIn", ("counters",), {"x": 1}),
    ("StateIn", ("counters",), []), ("StateIn", ("config",), ABSENT), ("StateIn", ("config",), []),
    ("StateIn", ("config", "seed"), ABSENT), ("StateIn", ("config", "mode"), "beam"), ("StateIn", ("config", "eos"), 3),
    ("StateIn", ("config", "eos"), "A" * 17), ("StateIn", ("config", "draft"), "gpt"),
    ("StateIn", ("config", "target"), 3), ("StateIn", ("extra",), 1),
    ("VerifyIn", ("proposal",), ABSENT), ("VerifyIn", ("proposal",), {"tokens": ["A"] * 17}),
    ("VerifyIn", ("proposal",), {"tokens": [""]}), ("VerifyIn", ("proposal",), {"tokens": ["A"], "x": 1}),
    ("VerifyIn", ("proposal",), {}), ("VerifyIn", ("state",), ABSENT), ("VerifyIn", ("state",), 3),
    ("VerifyIn", ("state", "position"), -1), ("VerifyIn", ("extra",), 1),
    ("RunIn", ("config",), ABSENT), ("RunIn", ("config",), "biased"), ("RunIn", ("config", "width"), 0),
    ("RunIn", ("extra",), 1),
    ("AnalysisIn", ("widths",), [2, 2]), ("AnalysisIn", ("widths",), [1, 3, 1]), ("AnalysisIn", ("widths",), []),
    ("AnalysisIn", ("widths",), list(range(1, 18))), ("AnalysisIn", ("widths",), [1.5]),
    ("AnalysisIn", ("widths",), [True]), ("AnalysisIn", ("depth",), 0), ("AnalysisIn", ("depth",), 9),
    ("AnalysisIn", ("draft_cost",), -0.5), ("AnalysisIn", ("draft_cost",), 100.5), ("AnalysisIn", ("draft_cost",), "1"),
    ("AnalysisIn", ("config", "seed"), -1), ("AnalysisIn", ("config", "x"), 1), ("AnalysisIn", ("config",), ABSENT),
    ("AnalysisIn", ("extra",), 1),
    ("ModelTableIn", ("vocab",), ["A", "A", "C"]), ("ModelTableIn", ("vocab",), ["A"]),
    ("ModelTableIn", ("vocab",), ["A", "B", "C" * 17]), ("ModelTableIn", ("start",), [0.5, 0.5, "0"]),
    ("ModelTableIn", ("start",), [1.5, -0.5, 0]), ("ModelTableIn", ("next", "A"), [0.5, 0.5, True]),
    ("ModelTableIn", ("next",), []), ("ModelTableIn", ("rows",), {}), ("ModelTableIn", ("next",), ABSENT),
]


@pytest.mark.parametrize("component", list(VALID))
def test_the_valid_bodies_are_accepted_by_both(component):
    parse, body = VALID[component]
    assert contract(component).is_valid(body)
    parse(read(body))


@pytest.mark.parametrize("component, path, value", ONE_FAULT)
def test_a_body_with_one_fault_is_refused_by_both_naming_it(component, path, value):
    """Each value the contract refuses, in an otherwise valid body: the parser refuses it
    too, and its faults point at the field (or under it)."""
    parse, base = VALID[component]
    body = _with(base, path, value)
    assert not contract(component).is_valid(body), body
    with pytest.raises(InvalidInput) as error:
        parse(read(body))
    where = pointer(path)
    assert any(pointer(f.path).startswith(where) for f in error.value.faults), (where, error.value.faults)


def test_a_label_of_digits_is_named_as_the_label_it_is():
    """jsonschema_rs gives the object name "0" as the integer 0 in its paths: the fault names
    the label (found by schemathesis: a 500 before)."""
    table = {"vocab": ["0", "1"], "start": [0.5, 0.5], "next": {"0": [1.5, 0], "1": [0.5, 0.5]}}
    with pytest.raises(InvalidInput) as error:
        parse_model(table)
    assert [(f.path, f.message) for f in error.value.faults] == [(("next", "0", 0), "must be a number from 0 to 1")]
    assert _verdict("/v1/runs", {"config": {"target": table, "draft": table, "seed": 1}}, "#/config/target/next/0/0") is False
