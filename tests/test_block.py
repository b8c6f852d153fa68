"""One block: draft, verify, step (SPEC sections 4-6), with real values."""

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

from specdec_service.engine import (
    COUNTER_NAMES, InvalidInput, SessionDone, State, draft, parse_config, parse_state, run, step, verify,
)
from specdec_service.engine.errors import pointer


def state(**config):
    return State(parse_config({"seed": 1, **config}))


def test_worked_example_biased_seed_1_first_block():
    """SPEC section 4, worked example."""
    block = step(state(draft="biased", width=3)).block
    proposal = block["proposal"]
    assert proposal["tokens"] == ["A", "A", "C"]
    assert [s["draw"]["u"] for s in proposal["steps"]] == [0.5665615751722809, 0.7457817572627011, 0.9710027535867962]
    assert [s["q"] for s in proposal["steps"]] == [[0.8, 0.15, 0.05]] * 3
    assert [s["context"] for s in proposal["steps"]] == [None, "A", "A"]
    first, second = block["verification"]
    assert (first["context"], first["token"], first["p_token"], first["q_token"], first["ratio"]) == (None, "A", 0.5, 0.8, 0.625)
    assert first["draw"] == {"position": 3, "u": 0.4443592170557721, "hex": "71c18690ee42c90b"}
    assert first["accepted"] is True
    assert (second["context"], second["p_token"], second["q_token"], second["ratio"]) == ("A", 0.2, 0.8, 0.25)
    assert round(second["draw"]["u"], 4) == 0.4443 and second["accepted"] is False
    correction = block["correction"]
    assert correction["distribution"] == [0.0, 0.75, 0.25]
    assert round(correction["draw"]["u"], 4) == 0.7629 and correction["draw"]["position"] == 5
    assert correction["token"] == "C"
    assert block["discarded"] == ["C"]
    assert block["bonus"] is None and block["no_bonus"] == "rejection"
    assert block["committed"] == ["A", "C"]
    assert block["next_position"] == 6
    assert block["counters"] == {"target_passes": 1, "draft_steps": 3, "accepted": 1, "rejected": 1, "discarded": 1, "bonus_tokens": 0, "committed": 2, "draws": 6}


def test_next_state_of_the_worked_example():
    result = step(state(draft="biased"))
    assert result.state.to_json()["committed"] == ["A", "C"]
    assert result.state.position == 6
    assert result.done is None and result.block["done"] is None


def test_aligned_accepts_all_three_and_adds_a_bonus():
    """SPEC section 4: four tokens after one target pass."""
    block = step(state(draft="aligned", width=3)).block
    assert [v["ratio"] for v in block["verification"]] == [1.0, 1.0, 1.0]
    assert all(v["accepted"] for v in block["verification"])
    assert block["bonus"] is not None and block["bonus"]["draw"]["position"] == 6
    assert len(block["committed"]) == 4
    assert block["counters"]["target_passes"] == 1 and block["counters"]["bonus_tokens"] == 1


def test_correction_at_the_empty_prefix_is_exactly_zero_half_half():
    for seed in range(200):
        block = step(state(draft="biased", seed=seed)).block
        if not block["verification"][0]["accepted"]:
            assert block["correction"]["context"] is None
            assert block["correction"]["distribution"] == [0.0, 0.5, 0.5]
            assert block["correction"]["token"] in ("B", "C")
            return
    pytest.fail("no first-position rejection in 200 seeds")


def test_last_block_is_clipped_to_the_room_left():
    """aligned, width 5, limit 8: 6 tokens then 2, no bonus at the boundary."""
    trace = run(parse_config({"draft": "aligned", "seed": 1, "width": 5, "limit": 8}))
    first, last = trace["blocks"]
    assert len(first["committed"]) == 6 and first["bonus"] is not None
    assert len(last["proposal"]["tokens"]) == 2
    assert len(last["committed"]) == 2
    assert last["bonus"] is None and last["no_bonus"] == "limit"
    assert len(trace["output"]) == 8 and trace["done"] == "limit"


def test_greedy_biased_alternates():
    """SPEC section 5: the draft proposes A, the target's argmax after A is B."""
    trace = run(parse_config({"draft": "biased", "seed": 1, "mode": "greedy"}))
    assert trace["output"] == ["A", "B", "A", "B", "A", "B", "A", "B"]
    assert trace["position"] == 0 and trace["counters"]["draws"] == 0
    block = trace["blocks"][0]
    assert all(v["draw"] is None and v["ratio"] is None for v in block["verification"])
    assert block["correction"] == {"index": 2, "context": "A", "distribution": [0.2, 0.6, 0.2], "draw": None, "token": "B"}


def test_greedy_with_aligned_draft_accepts_all_and_adds_argmax_bonus():
    block = step(state(draft="aligned", mode="greedy")).block
    assert block["proposal"]["tokens"] == ["A", "B", "A"]
    assert all(v["accepted"] for v in block["verification"])
    assert block["bonus"]["token"] == "B" and block["bonus"]["draw"] is None


def test_autoregressive_uses_one_draw_and_one_pass_per_token():
    trace = run(parse_config({"draft": "biased", "seed": 1, "mode": "autoregressive"}))
    assert len(trace["blocks"]) == 8
    assert trace["counters"]["target_passes"] == 8 and trace["counters"]["draws"] == 8
    assert trace["counters"]["draft_steps"] == 0
    for n, block in enumerate(trace["blocks"]):
        assert block["sample"]["draw"]["position"] == n
        assert block["proposal"] == {"tokens": [], "steps": []}
        assert block["committed"] == [block["sample"]["token"]]
    assert trace["blocks"][0]["sample"]["token"] == "B"  # u = 0.5666 falls in B's interval [0.5, 0.8)


EOS_TARGET = {"vocab": ["a", "b", "<eos>"], "start": [0.5, 0.4, 0.1], "next": {"a": [0.3, 0.3, 0.4], "b": [0.6, 0.2, 0.2], "<eos>": [0, 0, 1]}}
EOS_DRAFT = {"vocab": ["a", "b", "<eos>"], "start": [0.4, 0.4, 0.2], "next": {"a": [0.2, 0.2, 0.6], "b": [0.5, 0.3, 0.2], "<eos>": [0, 0, 1]}}


def eos_state(seed, **more):
    return State(parse_config({"target": EOS_TARGET, "draft": EOS_DRAFT, "eos": "<eos>", "seed": seed, "width": 4, "limit": 16, **more}))


def test_eos_stops_drafting_verification_and_the_session():
    """SPEC section 6, over many seeds."""
    seen_accepted_eos = 0
    for seed in range(300):
        trace = run(eos_state(seed).config)
        for block in trace["blocks"]:
            tokens = block["proposal"]["tokens"]
            assert "<eos>" not in tokens[:-1]  # drafting stops right after an EOS
            if tokens and tokens[-1] == "<eos>" and all(v["accepted"] for v in block["verification"]):
                seen_accepted_eos += 1
                assert block["bonus"] is None and block["no_bonus"] == "eos"
        if "<eos>" in trace["output"]:
            assert trace["output"][-1] == "<eos>" and trace["done"] == "eos"
        else:
            assert len(trace["output"]) == 16 and trace["done"] == "limit"
    assert seen_accepted_eos > 10


def test_step_on_an_ended_session_is_refused():
    done = State(parse_config({"draft": "biased", "seed": 1, "limit": 2}), (0, 2))
    for call in (step, draft, lambda s: verify(s, ["A"])):
        with pytest.raises(SessionDone) as error:
            call(done)
        assert error.value.reason == "limit"


def test_no_draw_past_the_end_of_the_stream():
    """SPEC section 2: positions stop at 2^53-1."""
    config = {"config": {"draft": "biased", "seed": 1}}
    for call in (draft, step):
        with pytest.raises(InvalidInput) as error:
            call(parse_state({**config, "position": 2**53 - 3}))
        assert "past 2^53-1" in str(error.value) and error.value.faults[0].path == ("position",)
    assert len(draft(parse_state({**config, "position": 2**53 - 4}))["tokens"]) == 3
    last = step(parse_state({**config, "config": {"draft": "biased", "seed": 1, "mode": "autoregressive"}, "position": 2**53 - 2}))
    assert last.state.position == 2**53 - 1


def test_verify_a_caller_proposal():
    s = state(draft="biased")
    block = verify(s, ["B", "A"]).block
    assert [p["drafted"] for p in block["proposal"]["steps"]] == [False, True]
    assert block["proposal"]["steps"][0]["draw"]["position"] == 0
    assert block["verification"][0]["draw"]["position"] == 2  # after the 2 draft draws
    assert block["verification"][0]["ratio"] == 2.0 and block["verification"][0]["accepted"]


def refused(s, tokens):
    with pytest.raises(InvalidInput) as error:
        verify(s, tokens)
    return {pointer(f.path): f.message for f in error.value.faults}


def test_verify_refuses_a_proposal_the_draft_cannot_produce():
    zero_q = {"vocab": ["A", "B", "C"], "start": [1, 0, 0], "next": {"A": [1, 0, 0], "B": [1, 0, 0], "C": [1, 0, 0]}}
    s = State(parse_config({"draft": zero_q, "seed": 1}))
    found = refused(s, ["A", "C"])
    assert "probability 0 after 'A'" in found["#/tokens/1"]


def test_verify_refuses_bad_proposals():
    s = state(draft="biased", limit=8)
    assert "1 to 3 tokens" in refused(s, [])["#/tokens"]
    assert "1 to 3 tokens" in refused(s, ["A"] * 4)["#/tokens"]
    assert "not a token" in refused(s, ["A", "Q"])["#/tokens/1"]
    assert "must be empty" in refused(state(draft="biased", mode="autoregressive"), ["A"])["#/tokens"]
    near_limit = State(s.config, (0,) * 7)
    assert "1 to 1 tokens" in refused(near_limit, ["A", "A"])["#/tokens"]
    eos = eos_state(1)
    assert "after the EOS" in refused(eos, ["<eos>", "a"])["#/tokens"]


# ------------------------------------------------------------ properties

configs = st.fixed_dictionaries({
    "draft": st.sampled_from(["biased", "aligned"]),
    "seed": st.integers(0, 2**53 - 1),
    "width": st.integers(1, 16),
    "limit": st.integers(1, 40),
    "mode": st.sampled_from(["speculative", "speculative", "greedy", "autoregressive"]),
})


eos_configs = st.fixed_dictionaries({
    "target": st.just(EOS_TARGET),
    "draft": st.just(EOS_DRAFT),
    "eos": st.just("<eos>"),
    "seed": st.integers(0, 2**53 - 1),
    "width": st.integers(1, 16),
    "limit": st.integers(1, 40),
    "mode": st.sampled_from(["speculative", "greedy", "autoregressive"]),
})


@st.composite
def open_states(draw):
    config = draw(st.one_of(configs, eos_configs))
    vocab = ["a", "b"] if "eos" in config else ["A", "B", "C"]
    committed = draw(st.lists(st.sampled_from(vocab), max_size=config["limit"] - 1))
    counters = draw(st.fixed_dictionaries({name: st.integers(0, 1000) for name in COUNTER_NAMES}))
    position = draw(st.integers(0, 2**53 - 200))
    return parse_state({"config": config, "committed": committed, "position": position, "counters": counters})


def recorded_draws(block):
    draws = [s["draw"] for s in block["proposal"]["steps"]] + [v["draw"] for v in block["verification"]]
    draws += [(block[k] or {}).get("draw") for k in ("correction", "bonus", "sample")]
    return [d for d in draws if d is not None]


@settings(max_examples=300, deadline=None)
@given(open_states())
def test_verify_of_the_draft_equals_step(s):
    assert verify(s, draft(s)["tokens"]).to_json() == step(s).to_json()


@settings(max_examples=300, deadline=None)
@given(open_states())
def test_block_invariants(s):
    result = step(s)
    block = result.block
    draws = recorded_draws(block)
    # the position advances by exactly the number of draws the block records, in order
    assert [d["position"] for d in draws] == list(range(s.position, result.state.position))
    assert block["counters"]["draws"] == len(draws) == block["next_position"] - block["position"]
    # the accepted count is the accepted prefix: all accepted but possibly the last
    decisions = [v["accepted"] for v in block["verification"]]
    assert decisions == [True] * block["counters"]["accepted"] + [False] * block["counters"]["rejected"]
    # never more tokens than the limit
    assert len(result.state.committed) <= s.config.limit
    assert block["committed"] == result.state.to_json()["committed"][len(s.committed):]
    assert block["counters"]["committed"] == len(block["committed"]) >= 1
    assert block["counters"]["draft_steps"] == len(block["proposal"]["tokens"])
    assert block["counters"]["discarded"] == len(block["discarded"])
    assert result.state.counters.to_json() == {k: s.counters.to_json()[k] + block["counters"][k] for k in COUNTER_NAMES}
    if block["bonus"] is not None:
        assert len(s.committed) + block["counters"]["accepted"] < s.config.limit
    # same state in, identical block out
    assert step(s).to_json() == result.to_json()


@settings(max_examples=60, deadline=None)
@given(configs)
def test_a_run_never_exceeds_the_limit(config):
    trace = run(parse_config(config))
    assert len(trace["output"]) == config["limit"]
    assert trace["counters"]["committed"] == config["limit"]
    assert sum(len(b["committed"]) for b in trace["blocks"]) == config["limit"]


def test_identical_in_a_fresh_process():
    code = (
        "import json; from specdec_service.engine import run_json;"
        "print(json.dumps(run_json({'draft': 'biased', 'seed': 7, 'width': 4, 'limit': 32}), sort_keys=True))"
    )
    fresh = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    here = json.dumps(run(parse_config({"draft": "biased", "seed": 7, "width": 4, "limit": 32})), sort_keys=True)
    assert fresh.strip() == here


def test_a_block_that_would_push_a_counter_past_2_53_is_refused():
    """SPEC section 7 counters stay exact JSON integers: each named, the state unchanged."""
    from specdec_service.engine import Counters

    big = 2**53 - 1
    s = State(parse_config({"draft": "biased", "seed": 1}), counters=Counters(target_passes=big, draws=big - 5))
    with pytest.raises(InvalidInput) as error:
        step(s)
    assert [f.path for f in error.value.faults] == [("counters", "target_passes"), ("counters", "draws")]
    ok = State(parse_config({"draft": "biased", "seed": 1}), counters=Counters(target_passes=big - 1, draws=big - 6))
    assert step(ok).state.counters.draws == big  # the first block uses six draws: exactly the bound
