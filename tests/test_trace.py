"""Whole runs and the trace format specdec-trace/1 with its JSON Schema."""

import itertools
import json

import jsonschema
import pytest

from specdec_service.engine import TRACE_FORMAT, TRACE_SCHEMA_PATH, parse_config, run, run_json, trace_schema
from test_block import EOS_DRAFT, EOS_TARGET

VALIDATOR = jsonschema.Draft202012Validator(trace_schema(), format_checker=jsonschema.FormatChecker())


def test_the_schema_is_a_valid_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(trace_schema())
    assert json.loads(TRACE_SCHEMA_PATH.read_text())["title"] == TRACE_FORMAT == "specdec-trace/1"


def test_top_level_keys():
    trace = run_json({"draft": "biased", "seed": 1})
    assert list(trace) == ["format", "config", "blocks", "output", "counters", "position", "done"]
    assert trace["output"] == ["A", "C", "B", "A", "B", "A", "B", "B"]
    assert trace["position"] == 21 and trace["done"] == "limit"
    assert trace["counters"] == {"target_passes": 4, "draft_steps": 10, "accepted": 5, "rejected": 3, "discarded": 2, "bonus_tokens": 0, "committed": 8, "draws": 21}


def test_blocks_chain():
    trace = run_json({"draft": "biased", "seed": 11, "width": 4, "limit": 30})
    committed = []
    for before, after in zip(trace["blocks"], trace["blocks"][1:]):
        assert after["position"] == before["next_position"]
        committed += before["committed"]
        assert after["prefix"] == committed


MATRIX = [
    {"draft": draft, "seed": seed, "width": width, "mode": mode}
    for draft, seed, width, mode in itertools.product(["aligned", "biased"], [0, 1, 2**53 - 1], [1, 3, 16], ["speculative", "greedy", "autoregressive", "block"])
] + [
    {"target": EOS_TARGET, "draft": EOS_DRAFT, "eos": "<eos>", "seed": seed, "width": 5, "limit": 256, "mode": mode}
    for seed, mode in itertools.product(range(20), ["speculative", "block"])
] + [{"draft": "biased", "seed": 5, "width": 16, "limit": 256}]


@pytest.mark.parametrize("config", MATRIX)
def test_every_trace_validates_against_the_schema(config):
    trace = run(parse_config(config))
    errors = sorted(VALIDATOR.iter_errors(trace), key=lambda e: list(e.path))
    assert not errors, errors[0]
    assert json.loads(json.dumps(trace)) == trace  # plain JSON, nothing lost


def test_the_schema_rejects_a_broken_trace():
    trace = run_json({"draft": "biased", "seed": 1})
    trace["blocks"][0]["verification"][0]["draw"]["hex"] = "XYZ"
    del trace["blocks"][1]["counters"]["draws"]
    trace["done"] = "finished"
    paths = {tuple(e.path) for e in VALIDATOR.iter_errors(trace)}
    assert ("blocks", 0, "verification", 0, "draw") in paths  # the draw is neither a valid draw nor null
    assert ("blocks", 1, "counters") in paths
    assert ("done",) in paths
