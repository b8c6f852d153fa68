"""Session settings and state (SPEC sections 6-8)."""

import pytest

from specdec_service.engine import (
    BIASED, TOY, Counters, InvalidInput, State, parse_config, parse_state,
)
from specdec_service.engine.errors import pointer


def faults(parse, obj):
    with pytest.raises(InvalidInput) as error:
        parse(obj)
    return {pointer(f.path): f.message for f in error.value.faults}


def test_defaults_are_filled_in():
    config = parse_config({"draft": "biased", "seed": 1})
    assert (config.target, config.draft, config.mode, config.width, config.limit, config.eos) == (TOY, BIASED, "speculative", 3, 8, None)
    assert config.to_json() == {"target": "toy", "draft": "biased", "mode": "speculative", "width": 3, "seed": 1, "limit": 8, "eos": None}


def test_state_round_trips_through_json():
    state = parse_state({"config": {"draft": "biased", "seed": 1}, "committed": ["A", "C"], "position": 6, "counters": {"target_passes": 1, "draws": 6}})
    assert state.committed == (0, 2) and state.position == 6
    assert state.counters == Counters(target_passes=1, draws=6)
    assert parse_state(state.to_json()) == state


@pytest.mark.parametrize(
    "config, where, says",
    [
        ({"seed": 1}, "#/draft", "required"),
        ({"draft": "biased"}, "#/seed", "required"),
        ({"draft": "gpt", "seed": 1}, "#/draft", "unknown draft model 'gpt'"),
        ({"draft": "biased", "target": "biased", "seed": 1}, "#/target", "unknown target model"),
        ({"draft": "biased", "seed": 2**53}, "#/seed", "0 to 2^53-1"),
        ({"draft": "biased", "seed": -1}, "#/seed", "0 to 2^53-1"),
        ({"draft": "biased", "seed": 1.5}, "#/seed", "integer"),
        ({"draft": "biased", "seed": 1, "width": 0}, "#/width", "1 to 16"),
        ({"draft": "biased", "seed": 1, "width": 17}, "#/width", "1 to 16"),
        ({"draft": "biased", "seed": 1, "limit": 257}, "#/limit", "1 to 256"),
        ({"draft": "biased", "seed": 1, "mode": "beam"}, "#/mode", "speculative, greedy, autoregressive, block"),
        ({"draft": "biased", "seed": 1, "eos": "Z"}, "#/eos", "token of the vocabulary"),
        ({"draft": "biased", "seed": 1, "temperature": 1}, "#/temperature", "unknown field"),
        ({"draft": {"vocab": ["A", "B"], "start": [0.5, 0.5], "next": {"A": [1, 0], "B": [0, 1]}}, "seed": 1}, "#/draft/vocab", "differs from the target"),
        ({"draft": {"vocab": ["A"], "start": [1], "next": {"A": [1]}}, "seed": 1}, "#/draft/vocab", "2 to 64"),
    ],
)
def test_config_faults(config, where, says):
    found = faults(parse_config, config)
    assert where in found, found
    assert says in found[where]


CONFIG = {"draft": "biased", "seed": 1}


@pytest.mark.parametrize(
    "state, where, says",
    [
        ({}, "#/config", "required"),
        ({"config": {"draft": "biased"}}, "#/config/seed", "required"),
        ({"config": CONFIG, "committed": ["A", "Z"]}, "#/committed/1", "not a token"),
        ({"config": {**CONFIG, "limit": 2}, "committed": ["A", "B", "C"]}, "#/committed", "more than the limit"),
        ({"config": {**CONFIG, "eos": "C"}, "committed": ["A", "C", "B"]}, "#/committed", "after the EOS"),
        ({"config": CONFIG, "committed": ["A"] * 300}, "#/committed", "0 to 256 token labels"),
        ({"config": CONFIG, "position": -1}, "#/position", "0 to 2^53-1"),
        ({"config": CONFIG, "position": 2**53}, "#/position", "0 to 2^53-1"),
        ({"config": CONFIG, "counters": {"accepted": -1}}, "#/counters/accepted", "0 to 2^53-1"),
        ({"config": CONFIG, "counters": {"speed": 1}}, "#/counters/speed", "unknown field"),
        ({"config": CONFIG, "done": True}, "#/done", "unknown field"),
    ],
)
def test_state_faults(state, where, says):
    found = faults(parse_state, state)
    assert where in found, found
    assert says in found[where]


def test_done_reasons():
    config = parse_config({**CONFIG, "limit": 2, "eos": "C"})
    assert State(config, (0,)).done is None
    assert State(config, (0, 1)).done == "limit"
    assert State(config, (2,)).done == "eos"
