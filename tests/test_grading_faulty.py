"""The parametrised faulty block: with every switch off it is the engine, block for block."""

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_service.engine import State, parse_config, run, step
from specdec_service.grading import CORRECT, Faults, faulty_run, faulty_step
from specdec_service.grading.faulty import ACCEPTANCES, BONUSES, CORRECTIONS

INDEX = json.loads((Path(__file__).resolve().parent / "golden" / "index.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(INDEX))
def test_correct_faults_reproduce_the_engine_on_the_golden_matrix(name):
    config = parse_config(INDEX[name])
    assert faulty_run(config, CORRECT) == run(config)


@settings(max_examples=60, deadline=None)
@given(draft=st.sampled_from(["aligned", "biased"]), width=st.integers(1, 16), seed=st.integers(0, 2**53 - 1),
       limit=st.integers(1, 40))
def test_correct_faults_reproduce_the_engine_for_any_settings(draft, width, seed, limit):
    config = parse_config({"draft": draft, "width": width, "seed": seed, "limit": limit})
    assert faulty_run(config, CORRECT) == run(config)


def test_faulty_step_from_a_mid_session_state_equals_step():
    config = parse_config({"draft": "biased", "seed": 5, "limit": 20})
    state = State(config)
    while state.done is None:
        block, next_state, _ = faulty_step(state)
        expected = step(state)
        assert block == expected.block and next_state == expected.state
        state = next_state


def test_every_switch_changes_some_toy_trace():
    configs = [parse_config({"draft": d, "seed": s, "width": w, "limit": 4})
               for d, s, w in itertools.product(["aligned", "biased"], range(8), [3, 4])]
    switches = ([Faults(acceptance=a) for a in ACCEPTANCES[1:]] + [Faults(correction=c) for c in CORRECTIONS[1:]]
                + [Faults(bonus=b) for b in BONUSES[1:]]
                + [Faults(discard=False), Faults(draft_from_discarded=True), Faults(interleave=True),
                   Faults(verify_all=True), Faults(reuse_draw=True)])
    for faults in switches:
        assert any(faulty_run(c, faults) != run(c) for c in configs), faults


def test_bonus_past_limit_commits_one_token_too_many():
    config = parse_config({"draft": "aligned", "seed": 1, "width": 4, "limit": 4})
    trace = faulty_run(config, Faults(bonus="past-limit"))
    assert len(trace["output"]) == 5 and trace["blocks"][0]["bonus"] is not None
    assert len(run(config)["output"]) == 4


def test_unclipped_residual_records_negative_entries():
    config = parse_config({"draft": "biased", "seed": 1})
    correction = faulty_run(config, Faults(correction="unclipped"))["blocks"][0]["correction"]
    # after A: p = (0.2, 0.6, 0.2), q = (0.8, 0.15, 0.05); p - q over its positive mass 0.6
    assert correction["distribution"] == pytest.approx([-1.0, 0.75, 0.25])
