"""specdec_client.types: typed views that keep exactly what the server sent."""

import pytest

from specdec_client import Block, Config, Counters, Proposal, State, StepResult, Trace
from specdec_client.types import as_config, tokens_of

from .service_backend import run_body, step_body


def test_a_trace_round_trips_exactly():
    body = run_body({"draft": "biased", "seed": 1})
    trace = Trace.from_dict(body)
    assert trace.to_dict() == body
    assert [b.to_dict() for b in trace.blocks] == body["blocks"]
    assert trace.config.to_dict() == body["config"]


def test_the_worked_example_block_is_typed():
    block = Trace.from_dict(run_body({"draft": "biased", "seed": 1})).blocks[0]  # SPEC section 4
    assert block.proposal.tokens == ("A", "A", "C")
    first, second = block.verification
    assert (first.p_token, first.q_token, first.ratio, first.accepted) == (0.5, 0.8, 0.625, True)
    assert (second.ratio, second.accepted, second.draw.position) == (0.25, False, 4)
    assert block.rejected is second
    assert block.correction.distribution == (0.0, 0.75, 0.25)
    assert block.correction.token == "C" and block.correction.draw.u == pytest.approx(0.7629, abs=5e-5)
    assert block.discarded == ("C",) and block.bonus is None and block.no_bonus == "rejection"
    assert block.committed == ("A", "C") and block.next_position == 6
    assert block.counters == Counters(1, 3, 1, 1, 1, 0, 2, 6)


def test_unknown_keys_are_kept():
    body = step_body({"config": {"draft": "aligned", "seed": 0}})
    body["block"]["future_field"] = {"x": 1}
    body["extra"] = [1, 2]
    result = StepResult.from_dict(body)
    assert result.to_dict() == body
    assert result.block.to_dict()["future_field"] == {"x": 1}


def test_to_dict_is_a_copy():
    body = step_body({"config": {"draft": "aligned", "seed": 0}})
    block = Block.from_dict(body["block"])
    block.to_dict()["committed"].append("Z")
    assert block.to_dict() == body["block"]


def test_hand_made_objects_serialise_their_fields():
    state = State(Config("biased", 5, width=2))
    assert state.to_dict() == {
        "config": {"target": "toy", "draft": "biased", "mode": "speculative", "width": 2, "seed": 5, "limit": 8,
                   "eos": None},
        "committed": [], "position": 0,
        "counters": {"target_passes": 0, "draft_steps": 0, "accepted": 0, "rejected": 0, "discarded": 0,
                     "bonus_tokens": 0, "committed": 0, "draws": 0}}


def test_counters_add_field_by_field():
    assert Counters(1, 2, 3, 4, 5, 6, 7, 8) + Counters(1, 1, 1, 1, 1, 1, 1, 1) == Counters(2, 3, 4, 5, 6, 7, 8, 9)


def test_config_helpers():
    assert as_config({"draft": "biased", "seed": 1}, width=4) == Config("biased", 1, width=4)
    assert Config("biased", 1).replace(seed=2).seed == 2
    custom = {"vocab": ["x", "y"], "start": [0.5, 0.5], "next": {"x": [1, 0], "y": [0, 1]}}
    assert Config(custom, 0, target=custom).vocab() == ("x", "y")
    assert Config("biased", 0).vocab() is None
    with pytest.raises(TypeError, match="unknown settings"):
        as_config(draft="biased", seed=1, temperature=2)
    with pytest.raises(TypeError, match="missing required settings: seed"):
        as_config(draft="biased")
    with pytest.raises(ValueError, match="unknown settings"):
        Config.from_dict({"draft": "biased", "seed": 1, "wdth": 3})


def test_tokens_of():
    proposal = Proposal.from_dict({"tokens": ["A", "B"], "steps": []})
    assert tokens_of(proposal) == ["A", "B"] and tokens_of(("C",)) == ["C"]
    with pytest.raises(TypeError):
        tokens_of("AB")


def test_a_trace_of_another_format_is_refused():
    body = run_body({"draft": "aligned", "seed": 0})
    with pytest.raises(ValueError, match="specdec-trace/1"):
        Trace.from_dict({**body, "format": "specdec-trace/0"})
