"""One parse path for ``POST /v1/grade/distribution``: the contract and the parser agree.

The body is stated once (``grading/submissions.py``, ``DISTRIBUTION_REQUEST``); the parser checks
its top level against it and the contract (``openapi.yaml``, ``DistributionIn``) is produced
from it. These tests hold the two ends against each other:

- a hypothesis property: bodies whose top-level fields are drawn within the bounds the
  contract states (read from the published document) or are arbitrary JSON, boundary numbers
  among them, present or absent, with unknown fields and entries the contract refuses (a
  sample or count entry of the wrong shape) now and then, are accepted by the
  contract (``jsonschema_rs`` on the whole published document) exactly when ``grade_distribution``
  accepts them (``hypothesis-jsonschema`` 0.23 cannot draw objects under hypothesis 6.170);
- each bound, on both sides of it, over HTTP: accepted (200), or refused (422) with the
  pointer of the field in ``errors``, the same verdict as the contract's.

Config and entries are kept valid (a config of the toy vocabulary, samples and prefixes of its
labels of the right length), so every verdict is about the top level: the rules no JSON Schema
states (a prefix of min(m, limit) tokens, ``accepted <= draft_steps``) are kept true, as the
contract test excuses them (tests/test_openapi.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, note, settings, strategies as st
from jsonschema_rs import Draft202012Validator

from specdec_service import create_app
from specdec_service.engine import InvalidInput, pointer
from specdec_service.engine.bounds import MAX_CELLS, MAX_COUNTER, MAX_M, MAX_SAMPLES
from specdec_service.grading import grade_distribution
from specdec_service.grading.submissions import MAX_OUTPUT

DOCUMENT = yaml.safe_load((Path(__file__).resolve().parents[1] / "openapi.yaml").read_text(encoding="utf-8"))
COMPONENTS = DOCUMENT["components"]["schemas"]
CONTRACT = Draft202012Validator({"$ref": "#/components/schemas/DistributionIn", "components": DOCUMENT["components"]})
"""The published contract of the body, its references resolved in the document."""
FORMS = [COMPONENTS[form["$ref"].rsplit("/", 1)[1]] for form in COMPONENTS["DistributionIn"]["oneOf"]]
"""The body's forms in the contract (one with ``samples``, one with ``counts``: api/openapi.py's
``exactly_one_forms``), which the parser's one schema with its ``oneOf`` of ``required`` must equal."""
PROPERTIES = {name: schema for form in FORMS for name, schema in form["properties"].items()}
APP = create_app({"TESTING": True})

LABELS = ["A", "B", "C"]
CONFIGS = [{"draft": "biased", "seed": 0}, {"draft": "aligned", "seed": 3, "limit": 2, "mode": "autoregressive"}]
BASE = {"config": CONFIGS[0], "m": 2, "samples": [["A", "B", "C", "A"]] * 20}


def contract_accepts(body) -> bool:
    return CONTRACT.is_valid(body)


def parser_faults(body) -> list[tuple[str, str]]:
    """The parser's faults as (pointer, message); empty when it accepts the body."""
    try:
        grade_distribution(body)
    except InvalidInput as error:
        return [(pointer(f.path), f.message) for f in error.faults]
    return []


JUNK = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 6), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0, 1, 0.0, 1.0, 2.0, -0.0, 1e-300, 0.999, MAX_M + 1]), st.text(max_size=3),
    st.lists(st.sampled_from(LABELS), max_size=2), st.dictionaries(st.sampled_from(LABELS + ["x"]), st.integers(0, 3), max_size=2),
)
"""Arbitrary JSON values, boundary numbers among them."""


def _ordered(counters):
    """Counters with ``accepted <= draft_steps`` (the one rule of them no JSON Schema states)."""
    if isinstance(counters, dict):
        low, high = sorted((counters["accepted"], counters["draft_steps"]))
        return {**counters, "accepted": low, "draft_steps": high}
    return counters


def _integer(schema: dict):
    return st.integers(schema["minimum"], schema["maximum"])


def _stated(name: str):
    """Values of the top-level field ``name`` within what the contract states of it."""
    schema = PROPERTIES[name]
    if name == "alpha":
        return st.floats(schema["exclusiveMinimum"], schema["exclusiveMaximum"], exclude_min=True, exclude_max=True)
    if name == "counters":
        counters = schema["properties"]
        required = {key: _integer(counters[key]) for key in schema["required"]}
        optional = {key: _integer(value) for key, value in counters.items() if key not in required}
        return st.fixed_dictionaries(required, optional=optional).map(_ordered)
    return _integer(schema)


BAD_ENTRIES = {
    "samples": st.one_of(
        st.none(), st.integers(), st.text(max_size=2), st.just([]), st.just(["A", ""]), st.just(["A" * 17]),
        st.lists(st.integers(), min_size=1, max_size=2), st.just([["A"]]), st.just(["A"] * (MAX_OUTPUT + 1)),
        st.just(["A", "B", "C", "A", 5]), st.just(["A", "B", "C", "A", ""])),
    "counts": st.one_of(
        st.none(), st.text(max_size=2), st.just({}), st.just({"prefix": ["A"]}), st.just({"count": 1}),
        st.fixed_dictionaries({"prefix": st.just(["A"]), "count": st.one_of(
            st.integers(max_value=-1), st.integers(min_value=MAX_SAMPLES + 1), st.booleans(), st.just(0.5), st.none())}),
        st.just({"prefix": [], "count": 1}), st.just({"prefix": ["A"] * (MAX_M + 1), "count": 1}),
        st.just({"prefix": [1], "count": 1}), st.just({"prefix": ["A"], "count": 1, "n": 0})),
}
"""Entries the contract refuses (its ``SAMPLE`` and ``PrefixCountIn``): the parser must refuse them too."""
FIELDS = {
    "config": st.sampled_from(CONFIGS),
    "m": _stated("m"),
    "alpha": _stated("alpha"),
    "counters": st.one_of(_stated("counters"), st.none()),
}
"""Each plain top-level field within what the contract states of it."""
OFTEN = ["stated"] * 6 + ["junk", "absent"]
SOMETIMES = ["stated"] * 3 + ["junk"] + ["absent"] * 4


def _field(draw, strategy, how: str):
    return draw(strategy) if how == "stated" else draw(JUNK)


@st.composite
def bodies(draw):
    """A body with each top-level field stated by the contract, any JSON value, or absent
    (required fields are mostly there, optional ones often absent), one of samples and counts
    mostly, both or neither sometimes, now and then an entry the contract refuses among them,
    and an unknown field now and then."""
    body = {}
    for key, strategy in FIELDS.items():
        how = draw(st.sampled_from(OFTEN if key in ("config", "m") else SOMETIMES))
        if how != "absent":
            body[key] = _field(draw, strategy, how)
    config = body.get("config") if body.get("config") in CONFIGS else CONFIGS[0]
    m = body.get("m")
    length = min(int(m), config.get("limit", 8)) if type(m) in (int, float) and 1 <= m <= MAX_M else 1
    prefixes = st.lists(st.tuples(*[st.sampled_from(LABELS)] * length), unique=True, min_size=1, max_size=3)
    entries = {
        "samples": st.lists(st.just(["A", "B", "C", "A"]), min_size=1, max_size=3),
        "counts": prefixes.flatmap(lambda ps: st.tuples(*[st.integers(1, 50)] * len(ps)).map(
            lambda ns: [{"prefix": list(p), "count": n} for p, n in zip(ps, ns)])),
    }
    for key in draw(st.sampled_from([("samples",), ("counts",)] * 4 + [("samples", "counts"), ()])):
        body[key] = _field(draw, entries[key], draw(st.sampled_from(OFTEN[:-1])))
        if isinstance(body[key], list) and draw(st.integers(0, 3)) == 0:  # one entry the contract refuses
            body[key].insert(draw(st.integers(0, len(body[key]))), draw(BAD_ENTRIES[key]))
    if draw(st.integers(0, 5)) == 0:
        body[draw(st.sampled_from(["x", "M", "sample", "count", "alpha "]))] = draw(JUNK)
    return body


@given(bodies())
@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_contract_accepts_a_body_exactly_when_the_parser_does(body):
    faults = parser_faults(body)
    note(f"parser faults: {faults}; contract errors: {[e.message for e in CONTRACT.iter_errors(body)]}")
    assert contract_accepts(body) == (not faults)


@st.composite
def entry_bodies(draw):
    """A valid top level whose samples or counts hold, half of the time, one entry the
    contract refuses."""
    config = draw(st.sampled_from(CONFIGS))
    m = draw(_stated("m"))
    length = min(m, config.get("limit", 8))
    if draw(st.booleans()):
        key = "samples"
        entries = draw(st.lists(st.lists(st.sampled_from(LABELS), min_size=length, max_size=length + 3),
                                min_size=1, max_size=4))
    else:
        key = "counts"
        prefixes = draw(st.lists(st.tuples(*[st.sampled_from(LABELS)] * length), unique=True, min_size=1, max_size=4))
        entries = [{"prefix": list(p), "count": draw(st.integers(1, 50))} for p in prefixes]
    if draw(st.booleans()):
        entries.insert(draw(st.integers(0, len(entries))), draw(BAD_ENTRIES[key]))
    return {"config": config, "m": m, key: entries}


@given(entry_bodies())
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_contract_accepts_the_entries_exactly_when_the_parser_does(body):
    """The entries' fast path and full check refuse every entry the contract refuses (and,
    with labels of the vocabulary and min(m, limit) tokens, accept the rest)."""
    faults = parser_faults(body)
    note(f"parser faults: {faults}; contract errors: {[e.message for e in CONTRACT.iter_errors(body)]}")
    assert contract_accepts(body) == (not faults)


def test_the_generated_bodies_reach_both_verdicts():
    """The property above is not vacuous: the strategy yields accepted and refused bodies."""
    verdicts = set()

    @given(bodies())
    @settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    def collect(body):
        verdicts.add(contract_accepts(body))

    collect()
    assert verdicts == {True, False}


BIG = ["A"]  # 10^6 of them: a body of 7 MB, under the route's 8 MiB
BOUNDS = [  # (what the body changes, the pointer of the refusal or None when accepted)
    ({"m": 0}, "#/m"),
    ({"m": 1}, None),
    ({"m": MAX_M}, None),
    ({"m": MAX_M + 1}, "#/m"),
    ({"m": 2.0}, None),
    ({"m": 1.5}, "#/m"),
    ({"m": True}, "#/m"),
    ({"alpha": 0}, "#/alpha"),
    ({"alpha": 1e-300}, None),
    ({"alpha": 0.999}, None),
    ({"alpha": 1}, "#/alpha"),
    ({"alpha": "0.5"}, "#/alpha"),
    ({"x": 1}, "#/x"),
    ({"counts": [{"prefix": ["A", "B"], "count": 3}]}, "#/samples"),  # both samples and counts
    ({"samples": ...}, "#/samples"),  # neither
    ({"samples": []}, "#/samples"),
    ({"m": 1, "samples": [BIG] * MAX_SAMPLES}, None),  # m 1: within the work budget
    ({"m": 1, "samples": [BIG] * (MAX_SAMPLES + 1)}, "#/samples"),
    ({"config": None}, "#/config"),
    ({"config": "biased"}, "#/config"),
    ({"m": None}, "#/m"),
    ({"counters": None}, None),
    ({"counters": {"accepted": MAX_COUNTER, "draft_steps": MAX_COUNTER}}, None),
    ({"counters": {"accepted": 0, "draft_steps": MAX_COUNTER + 1}}, "#/counters/draft_steps"),
    ({"counters": {"accepted": 0}}, "#/counters/draft_steps"),
    ({"counters": {"accepted": 0, "draft_steps": 0, "speed": 1}}, "#/counters/speed"),
    ({"counters": []}, "#/counters"),
]


@pytest.mark.parametrize("change, where", BOUNDS, ids=lambda v: repr(v)[:50])
def test_each_bound_on_both_sides(change, where):
    """``BASE`` with ``change`` (``...``: the field removed) against the contract, the parser
    and the route."""
    body = {key: value for key, value in {**BASE, **change}.items() if value is not ...}
    assert contract_accepts(body) == (where is None)
    faults = parser_faults(body)
    assert [p for p, _ in faults][:1] == ([] if where is None else [where])
    response = APP.test_client().post("/v1/grade/distribution", json=body)
    if where is None:
        assert response.status_code == 200, response.get_json()
    else:
        problem = response.get_json()
        assert response.status_code == 422 and response.mimetype == "application/problem+json"
        assert problem["errors"][0] == {"pointer": where, "detail": faults[0][1]}


def test_counts_at_the_bound_of_entries():
    prefixes = [[a, b, c, d] for a in LABELS for b in LABELS for c in LABELS for d in LABELS]
    body = {"config": CONFIGS[0], "m": 4, "counts": [{"prefix": p, "count": 1} for p in prefixes]}
    assert contract_accepts(body) and not parser_faults(body)
    too_many = {**body, "counts": body["counts"] * (MAX_CELLS // len(prefixes) + 1)}
    assert len(too_many["counts"]) > MAX_CELLS
    assert not contract_accepts(too_many)
    assert parser_faults(too_many) == [("#/counts", f"must be a list of 1 to {MAX_CELLS} prefix counts")]


def test_every_top_level_fault_is_named_at_once():
    """A body wrong in several fields gets one error per field, in the schema's field order."""
    body = {"m": 0, "alpha": 1, "samples": [["A"]], "counts": [], "extra": 1}
    assert parser_faults(body) == [
        ("#/config", "is required"),
        ("#/m", f"must be an integer from 1 to {MAX_M}"),
        ("#/samples", "give exactly one of samples and counts"),
        ("#/counts", f"must be a list of 1 to {MAX_CELLS} prefix counts"),
        ("#/alpha", "must be a number between 0 and 1 (exclusive)"),
        ("#/extra", "unknown field: the fields are alpha, config, counters, counts, m, samples"),
    ]



@pytest.mark.parametrize("body", [[BASE], "x", 5, None, True])
def test_a_body_that_is_not_an_object_gets_one_fault(body):
    """Nothing about the content of a value of the wrong type (here the whole body)."""
    assert not contract_accepts(body)
    fault = ("#", "must be an object with config, m and samples or counts")
    assert parser_faults(body) == [fault]
    response = APP.test_client().post("/v1/grade/distribution", data=json.dumps(body), content_type="application/json")
    problem = response.get_json()
    assert problem["status"] == 422 and problem["errors"] == [{"pointer": fault[0], "detail": fault[1]}]

EOS_CONFIG = {"draft": "biased", "seed": 0, "eos": "C"}


@pytest.mark.parametrize("entries, where", [
    ({"samples": [["A"] * MAX_OUTPUT, ["C"], ["B", "C"], ["A", "B", "C", "B"]]}, None),
    ({"samples": [["A", "B", "C", 5]]}, "#/samples/0/3"),
    ({"samples": [["A", "B", "A", "D"]]}, "#/samples/0/3"),
    ({"samples": [["A"] * (MAX_OUTPUT + 1)]}, "#/samples/0"),
    ({"samples": [["A", "B"], ["A"]]}, "#/samples/1"),
    ({"samples": [["A", "B"], ["A", 5]]}, "#/samples/1/1"),
    ({"counts": [{"prefix": ["C"], "count": 2}, {"prefix": ["A", "C"], "count": 1}, {"prefix": ["A", "B"], "count": 0}]}, None),
    ({"counts": [{"prefix": ["C", "A"], "count": 2}]}, "#/counts/0/prefix"),
    ({"counts": [{"prefix": ["A", "C"], "count": 2}, {"prefix": ["A", "C"], "count": 2}]}, "#/counts/1/prefix"),
    ({"counts": [{"prefix": ["A"], "count": 2}]}, "#/counts/0/prefix"),
    ({"counts": [{"prefix": ["A", "B"], "count": 2, "n": 1}]}, "#/counts/0/n"),
])
def test_each_entry_is_read_as_its_schema_and_the_vocabulary_say(entries, where):
    """Entries take a fast path or the full check (``SAMPLE``, ``PREFIX_COUNT``, then the
    vocabulary, the EOS and min(m, limit)); either way the same verdict. Every token of a sample
    is a label of the vocabulary, those past its first min(m, limit) too (the contract says a
    string of 1-16 characters, the vocabulary rule is excused in tests/test_openapi.py)."""
    body = {"config": EOS_CONFIG, "m": 2, **entries}
    faults = parser_faults(body)
    assert [p for p, _ in faults][:1] == ([] if where is None else [where])
    if where is None:
        assert grade_distribution(body)["samples"] == (4 if "samples" in entries else 3)
