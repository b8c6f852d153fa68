"""Faulty variants are the engine's one block with one rule changed: with a mode's correct rules
they are the engine, block for block, and every mistaken rule changes some trace."""

import dataclasses
import itertools
import json
from pathlib import Path

import pytest

from specdec_service.engine.trees import decoder_of
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_service.engine import MODE_RULES, SPECULATIVE, State, parse_config, run, step
from specdec_service.grading import CATALOGUE, CORRECT, faulty_run, faulty_step, swapped
from specdec_service.grading import faulty

INDEX = json.loads((Path(__file__).resolve().parent / "golden" / "index.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(INDEX))
def test_correct_rules_reproduce_the_engine_on_the_golden_matrix(name):
    config = parse_config(INDEX[name])
    assert faulty_run(config, MODE_RULES[config.mode]) == run(config)
    assert faulty_run(config, CORRECT) == run(config)  # another mode's rules: the config's mode's own


@settings(max_examples=60, deadline=None)
@given(draft=st.sampled_from(["aligned", "biased"]), width=st.integers(1, 16), seed=st.integers(0, 2**53 - 1),
       limit=st.integers(1, 40))
def test_correct_rules_reproduce_the_engine_for_any_settings(draft, width, seed, limit):
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


def changed_rules(rules, correct) -> list[str]:
    """The rules of a decoder that differ from the correct one's: its row reader, proposal rule,
    verifier (another class), or a part of its verifier (acceptance, correction, bonus, discard)."""
    changed = [f for f in ("rows", "proposal") if getattr(rules, f) != getattr(correct, f)]
    verifier, right = rules.verifier, correct.verifier
    if type(verifier) is not type(right):  # another verifier: it is the one rule swapped (its parts are its own)
        return changed + ["verifier"]
    parts = [f.name for f in dataclasses.fields(right) if f.name != "name"]
    return changed + [part for part in parts if getattr(verifier, part) != getattr(right, part)]


@pytest.mark.parametrize("mistake", CATALOGUE, ids=[m.id for m in CATALOGUE])
def test_every_mistake_is_its_modes_rules_with_one_rule_swapped_and_changes_some_trace(mistake):
    correct = decoder_of(parse_config(mistake.example))  # a SPEC 12 tree's decoder for its mistakes
    swapped_rules = changed_rules(mistake.rules, correct)
    # the greedy test comes with its correction; vllm-ascend's block verifiers come with theirs (an
    # arg max over a residual of no mass, which SPEC's test never reaches: SPEC's correction elsewhere)
    two = {"greedy-acceptance", "block-cumprod-acceptance", "block-cumprod-scaled-residual",
           "block-thresholds-row-early"}
    expected = 2 if mistake.id in two else 1
    assert len(swapped_rules) == expected, (mistake.id, swapped_rules)
    tree = {"tree": mistake.example["tree"]} if "tree" in mistake.example else {}
    configs = [parse_config({"draft": d, "seed": s, "width": w, "limit": 4, "mode": mistake.mode, **tree})
               for d, s, w in itertools.product(["aligned", "biased"], range(8), [1, 3, 4])]
    configs.append(parse_config(mistake.example))
    assert any(faulty_run(c, mistake.rules) != run(c) for c in configs), mistake.id


def test_bonus_past_limit_commits_one_token_too_many():
    config = parse_config({"draft": "aligned", "seed": 1, "width": 4, "limit": 4})
    trace = faulty_run(config, swapped(SPECULATIVE, bonus=faulty.BONUS_PAST_LIMIT))
    assert len(trace["output"]) == 5 and trace["blocks"][0]["bonus"] is not None
    assert len(run(config)["output"]) == 4


def test_unclipped_residual_records_negative_entries():
    config = parse_config({"draft": "biased", "seed": 1})
    correction = faulty_run(config, swapped(SPECULATIVE, correction=faulty.UnclippedResidual()))["blocks"][0]["correction"]
    # after A: p = (0.2, 0.6, 0.2), q = (0.8, 0.15, 0.05); p - q over its positive mass 0.6
    assert correction["distribution"] == pytest.approx([-1.0, 0.75, 0.25])


def test_sample_weights_is_sample_on_a_distribution_and_falls_through_to_the_last_token():
    from specdec_service.engine import draw, sample
    from specdec_service.engine.distributions import Dist

    r = Dist.of_weights((0, 3, 1))
    for n in range(200):
        assert faulty.sample_weights(r, draw(7, n)) == sample(r, draw(7, n))
    short = faulty.Weights((1, 1, 0), 10)  # sums to 0.2: any u >= 0.2 falls through
    assert [faulty.sample_weights(short, draw(0, n)) for n in range(4)] == [2, 2, 0, 2]  # u = 0.88, 0.43, 0.026, 0.97


@settings(max_examples=80, deadline=None)
@given(draft=st.sampled_from(["aligned", "biased"]), width=st.integers(1, 5), seed=st.integers(0, 2**53 - 1),
       limit=st.integers(1, 12), mistake=st.sampled_from(CATALOGUE))
def test_a_variant_trace_is_gradable_and_never_passes_when_it_differs(draft, width, seed, limit, mistake):
    """Any toy config in the mistake's mode: the variant's trace (unless the swapped rule is
    undefined there) satisfies the grading schema, and fails grading exactly when it differs
    from the reference."""
    from specdec_service.grading import grade, validate_trace

    config = parse_config({"draft": draft, "width": width, "seed": seed, "limit": limit, "mode": mistake.mode})
    try:
        trace = json.loads(json.dumps(faulty_run(config, mistake.rules)))
    except ValueError:
        return
    validate_trace(trace)
    assert grade(trace, diagnose=False)["passed"] is (trace == run(config))
