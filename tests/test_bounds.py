"""Every input bound has one home (``engine/bounds.py``): the OpenAPI
contract, ``trace.schema.json`` and the engine's parsers state the same
value, and each parser accepts the bound and refuses one past it."""

import json
from pathlib import Path

import pytest
import yaml

from specdec_service.engine import InvalidInput, draw_slice, parse_config, parse_model, parse_state, trace_schema
from specdec_service.engine.bounds import (
    MAX_CELLS, MAX_COUNTER, MAX_DRAFTS, MAX_DRAWS_SLICE, MAX_LABEL, MAX_LIMIT, MAX_M, MAX_POSITION, MAX_SAMPLES,
    MAX_SEED, MAX_TRACES, MAX_VOCAB, MAX_WIDTH, MIN_DRAFTS, MIN_LABEL, MIN_LIMIT, MIN_VOCAB, MIN_WIDTH,
    MAX_TOP_K, MIN_TOP_K,
)
from specdec_service.grading import grade_distribution, grade_many

DOCUMENT = yaml.safe_load((Path(__file__).resolve().parents[1] / "openapi.yaml").read_text(encoding="utf-8"))
SCHEMAS = DOCUMENT["components"]["schemas"]
DRAWS = {p["name"]: p["schema"] for p in DOCUMENT["paths"]["/v1/draws"]["get"]["parameters"]}
TRACE = trace_schema()


def at(document, path: str):
    node = document
    for key in path.strip("/").split("/"):
        node = node[int(key)] if isinstance(node, list) else node[key]
    return node


CONTRACT = [  # (where in the contract, JSON Schema keyword pair, (low, high))
    (SCHEMAS["ConfigIn"]["properties"]["width"], ("minimum", "maximum"), (MIN_WIDTH, MAX_WIDTH)),
    (SCHEMAS["ConfigIn"]["properties"]["limit"], ("minimum", "maximum"), (MIN_LIMIT, MAX_LIMIT)),
    (SCHEMAS["ConfigIn"]["properties"]["seed"], ("minimum", "maximum"), (0, MAX_SEED)),
    (SCHEMAS["ModelTableIn"]["properties"]["vocab"], ("minItems", "maxItems"), (MIN_VOCAB, MAX_VOCAB)),
    (SCHEMAS["ModelTableIn"]["properties"]["vocab"]["items"], ("minLength", "maxLength"), (MIN_LABEL, MAX_LABEL)),
    (SCHEMAS["StateIn"]["properties"]["committed"], ("minItems", "maxItems"), (0, MAX_LIMIT)),
    (SCHEMAS["StateIn"]["properties"]["position"], ("minimum", "maximum"), (0, MAX_POSITION)),
    (SCHEMAS["CountersIn"]["properties"]["draws"], ("minimum", "maximum"), (0, MAX_COUNTER)),
    (SCHEMAS["ConfigIn"]["properties"]["drafts"], ("minimum", "maximum"), (MIN_DRAFTS, MAX_DRAFTS)),
    (SCHEMAS["ConfigIn"]["properties"]["sampling"]["properties"]["top_k"], ("minimum", "maximum"), (MIN_TOP_K, MAX_TOP_K)),
    # ProposalIn is a oneOf of its two whole forms: tokens, or (mode tree, SPEC 11) chains
    (SCHEMAS["ProposalTokensIn"]["properties"]["tokens"], ("minItems", "maxItems"), (0, MAX_WIDTH)),
    (SCHEMAS["ProposalChainsIn"]["properties"]["chains"], ("minItems", "maxItems"), (MIN_DRAFTS, MAX_DRAFTS)),
    (SCHEMAS["ProposalChainsIn"]["properties"]["chains"]["items"], ("minItems", "maxItems"), (0, MAX_WIDTH)),
    (DRAWS["count"], ("minimum", "maximum"), (1, MAX_DRAWS_SLICE)),
    (DRAWS["seed"], ("minimum", "maximum"), (0, MAX_SEED)),
    (DRAWS["position"], ("minimum", "maximum"), (0, MAX_POSITION)),
    (SCHEMAS["GradeBatchIn"]["properties"]["traces"], ("minItems", "maxItems"), (1, MAX_TRACES)),
    (SCHEMAS["DistributionSamplesIn"]["properties"]["m"], ("minimum", "maximum"), (1, MAX_M)),
    (SCHEMAS["DistributionSamplesIn"]["properties"]["samples"], ("minItems", "maxItems"), (1, MAX_SAMPLES)),
    (SCHEMAS["DistributionCountsIn"]["properties"]["counts"], ("minItems", "maxItems"), (1, MAX_CELLS)),
    (SCHEMAS["PrefixCountIn"]["properties"]["count"], ("minimum", "maximum"), (0, MAX_SAMPLES)),
    (at(TRACE, "/$defs/config/properties/width"), ("minimum", "maximum"), (MIN_WIDTH, MAX_WIDTH)),
    (at(TRACE, "/$defs/config/properties/limit"), ("minimum", "maximum"), (MIN_LIMIT, MAX_LIMIT)),
    (at(TRACE, "/$defs/config/properties/seed"), ("minimum", "maximum"), (0, MAX_SEED)),
    (at(TRACE, "/$defs/config/properties/drafts"), ("minimum", "maximum"), (MIN_DRAFTS, MAX_DRAFTS)),
    (at(TRACE, "/$defs/config/properties/sampling/properties/top_k"), ("minimum", "maximum"), (MIN_TOP_K, MAX_TOP_K)),
    (at(TRACE, "/$defs/token"), ("minLength", "maxLength"), (MIN_LABEL, MAX_LABEL)),
    (at(TRACE, "/$defs/distribution"), ("minItems", "maxItems"), (MIN_VOCAB, MAX_VOCAB)),
    (at(TRACE, "/$defs/model_table/properties/vocab"), ("minItems", "maxItems"), (MIN_VOCAB, MAX_VOCAB)),
    (at(TRACE, "/$defs/draw/properties/position"), ("minimum", "maximum"), (0, MAX_POSITION)),
    (at(TRACE, "/$defs/counters/properties/draws"), ("minimum", "maximum"), (0, MAX_COUNTER)),
    (at(TRACE, "/$defs/proposal/properties/tokens"), (None, "maxItems"), (None, MAX_WIDTH)),
]


@pytest.mark.parametrize("schema, keywords, bounds", CONTRACT)
def test_the_contract_states_the_bound(schema, keywords, bounds):
    for keyword, value in zip(keywords, bounds):
        if keyword is not None:
            assert schema[keyword] == value
            assert type(schema[keyword]) is int


def refused(parse, value) -> bool:
    try:
        parse(value)
    except InvalidInput:
        return True
    return False


CONFIG = {"draft": "biased", "seed": 1}


def config_with(key: str):
    return lambda value: parse_config({**CONFIG, key: value})


def vocab_of(n: int):
    labels = [f"t{i}" for i in range(n)]
    row = [1 / n] * n
    return {"vocab": labels, "start": row, "next": {label: row for label in labels}}


@pytest.mark.parametrize("parse, low, high", [
    (config_with("width"), MIN_WIDTH, MAX_WIDTH),
    (config_with("limit"), MIN_LIMIT, MAX_LIMIT),
    (config_with("seed"), 0, MAX_SEED),
    (config_with("drafts"), MIN_DRAFTS, MAX_DRAFTS),
    (lambda k: parse_config({**CONFIG, "sampling": {"top_k": k}}), MIN_TOP_K, MAX_TOP_K),
    (lambda n: parse_model(vocab_of(n)), MIN_VOCAB, MAX_VOCAB),
    (lambda n: parse_model({"vocab": ["A" * n, "B"], "start": [0.5, 0.5],
                            "next": {"A" * n: [0.5, 0.5], "B": [0.5, 0.5]}}), MIN_LABEL, MAX_LABEL),
    (lambda n: parse_state({"config": CONFIG, "position": n}), 0, MAX_POSITION),
    (lambda n: parse_state({"config": CONFIG, "counters": {"draws": n}}), 0, MAX_COUNTER),
    (lambda n: draw_slice(1, 0, n), 1, MAX_DRAWS_SLICE),
    (lambda n: draw_slice(n, 0, 1), 0, MAX_SEED),
    (lambda m: grade_distribution({"config": CONFIG, "m": m, "counts": [{"prefix": ["A"] * max(m, 1), "count": 1}]}),
     1, MAX_M),
    (lambda n: grade_distribution({"config": CONFIG, "m": 1, "counts": [{"prefix": ["A"], "count": n}]}), 1, MAX_SAMPLES),
])
def test_the_parser_accepts_the_bound_and_refuses_one_past_it(parse, low, high):
    assert not refused(parse, low) and not refused(parse, high)
    assert refused(parse, low - 1) and refused(parse, high + 1)


SAMPLING_VALUES = {  # SPEC 9: (taken, refused) values of each number of `sampling`
    "temperature": ([0, 0.05, 0.5, 1, 20], [-0.01, 0.01, 0.0499999, 20.000001]),
    "top_p": ([1e-9, 0.8, 1], [0, -0.1, 1.0000001]),
    "min_p": ([0, 0.2, 1], [-1e-9, 1.0000001]),
}


@pytest.mark.parametrize("key", SAMPLING_VALUES)
def test_the_contract_the_trace_schema_and_the_parser_agree_on_sampling_numbers(key):
    import jsonschema_rs

    contract = jsonschema_rs.Draft202012Validator(SCHEMAS["ConfigIn"]["properties"]["sampling"]["properties"][key])
    trace = jsonschema_rs.Draft202012Validator(at(TRACE, f"/$defs/config/properties/sampling/properties/{key}"))
    taken, past = SAMPLING_VALUES[key]
    for value in taken + past:
        parser = not refused(config_with("sampling"), {key: value})
        assert contract.is_valid(value) == trace.is_valid(value) == parser == (value in taken), (key, value)


def test_a_batch_of_more_traces_than_the_bound_is_refused():
    with pytest.raises(InvalidInput) as error:
        grade_many([{}] * (MAX_TRACES + 1))
    assert str(MAX_TRACES) in str(error.value)


def test_the_trace_schema_file_is_the_one_the_engine_reads():
    path = Path(__file__).resolve().parents[1] / "service/specdec_service/engine/trace.schema.json"
    assert json.loads(path.read_text(encoding="utf-8")) == TRACE
