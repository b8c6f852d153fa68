"""Block verification, mode ``block`` (SPEC section 10; Sun et al. 2025, algorithm 2), through the
service: the worked example beside token-wise verification of the same draws, the records of every
step (weights, thresholds, eta draws, tau, scaled residual), EOS, the limit, custom models, and the
trace schema tying those records to the mode."""

from __future__ import annotations

import itertools
from fractions import Fraction as F

import jsonschema
import pytest
from hypothesis import given, settings, strategies as st

from specdec_service import create_app
from specdec_service.engine import COUNTER_NAMES, parse_config, parse_state, run, step, trace_schema, verify, draft
from specdec_service.engine.verifiers.block import scaled_residual, weights_and_thresholds
from specdec_service.engine.models import TOY, BIASED
from test_block import EOS_DRAFT, EOS_TARGET

VALIDATOR = jsonschema.Draft202012Validator(trace_schema())


@pytest.fixture(scope="module")
def client():
    return create_app({"TESTING": True}).test_client()


def first_block(client, **config):
    response = client.post("/v1/step", json={"config": {"draft": "biased", **config}})
    assert response.status_code == 200, response.get_json()
    return response.get_json()["block"]


def test_worked_example_of_section_10_beside_token_wise(client):
    """SPEC 10: toy/biased, width 2, seed 4: A B committed plus the bonus A, position 5; token-wise
    verification of the same draws rejects A (0.8591 >= 0.625) and commits only B."""
    block = first_block(client, mode="block", width=2, seed=4)
    assert block["proposal"]["tokens"] == ["A", "B"]
    assert [round(s["draw"]["u"], 4) for s in block["proposal"]["steps"]] == [0.4315, 0.8924]
    first, second = block["verification"]
    assert (first["weight"], first["weight_exact"], first["threshold"], first["threshold_exact"]) == (
        0.625, "5/8", 4 / 9, "4/9")
    assert (second["weight"], second["weight_exact"], second["threshold"], second["threshold_exact"]) == (
        1.0, "1", 1.0, "1")
    assert [(v["draw"]["position"], round(v["draw"]["u"], 4)) for v in block["verification"]] == [(2, 0.8591), (3, 0.4918)]
    assert [v["below_threshold"] for v in block["verification"]] == [False, True]
    assert [v["accepted"] for v in block["verification"]] == [True, True]  # A passes with B: tau = 2
    assert first["ratio"] == 0.625 and second["ratio"] == 4.0
    assert block["tau"] == 2
    assert block["correction"] is None and block["discarded"] == [] and block["no_bonus"] is None
    assert block["bonus"]["context"] == "B" and round(block["bonus"]["draw"]["u"], 4) == 0.3946
    assert block["bonus"]["draw"]["position"] == 4 and block["bonus"]["token"] == "A"
    assert block["committed"] == ["A", "B", "A"] and block["next_position"] == 5
    assert block["counters"] == dict(target_passes=1, draft_steps=2, accepted=2, rejected=0, discarded=0,
                                     bonus_tokens=1, committed=3, draws=5)
    assert list(block) == ["mode", "prefix", "position", "proposal", "verification", "tau", "correction",
                           "discarded", "bonus", "no_bonus", "sample", "committed", "counters", "next_position", "done"]

    tokenwise = first_block(client, mode="speculative", width=2, seed=4)
    assert tokenwise["proposal"] == block["proposal"]
    assert [v["draw"] for v in tokenwise["verification"]] == [block["verification"][0]["draw"]]
    assert tokenwise["verification"][0]["accepted"] is False  # 0.8591 >= 0.625
    assert tokenwise["correction"]["draw"] == block["verification"][1]["draw"]  # draw 3
    assert tokenwise["committed"] == ["B"] and tokenwise["next_position"] == 4
    assert "tau" not in tokenwise


FLAT_DRAFT = {"vocab": ["A", "B", "C"], "start": [0.6, 0.2, 0.2],
              "next": {"A": [0.6, 0.2, 0.2], "B": [0.6, 0.2, 0.2], "C": [0.6, 0.2, 0.2]}}
"""A draft (against the toy target) under which scaling the residual by w_tau < 1 shows."""


def scaled_rejection(seeds=range(300)):
    """The first block (toy / FLAT_DRAFT, width 3, empty prefix) whose correction is drawn from a
    residual that scaling by w_tau < 1 changes, with its config's rows."""
    for seed in seeds:
        config = parse_config({"draft": FLAT_DRAFT, "mode": "block", "width": 3, "seed": seed})
        block = step(parse_state({"config": config.to_json()})).block
        correction, rows = block["correction"], config.model_rows
        if correction is not None and correction["weight_exact"] != "1":
            tau = block["tau"]
            context = None if tau == 0 else ("A", "B", "C").index(block["proposal"]["tokens"][tau - 1])
            if correction["distribution"] != scaled_residual(rows.target(context), rows.draft(context), F(1)).to_json():
                return block, rows
    pytest.fail("no such block")


def test_a_rejection_records_the_scaled_residual():
    block, rows = scaled_rejection()
    tau, tokens = block["tau"], [("A", "B", "C").index(t) for t in block["proposal"]["tokens"]]
    contexts = [None, *tokens[:-1]]
    ps, qs = [rows.target(c) for c in contexts], [rows.draft(c) for c in contexts]
    w, h = weights_and_thresholds(ps, qs, tokens)
    assert [v["weight_exact"] for v in block["verification"]] == [str(x) for x in w[1:]]
    assert [v["threshold_exact"] for v in block["verification"]] == [str(x) for x in h]
    assert [v["accepted"] for v in block["verification"]] == [i < tau for i in range(len(tokens))]
    correction = block["correction"]
    assert correction["index"] == tau + 1 and correction["weight_exact"] == str(w[tau]) and w[tau] < 1
    assert correction["distribution"] == scaled_residual(ps[tau], qs[tau], w[tau]).to_json()
    assert block["discarded"] == block["proposal"]["tokens"][tau + 1:]
    assert block["committed"] == block["proposal"]["tokens"][:tau] + [correction["token"]]
    assert block["no_bonus"] == "rejection" and block["bonus"] is None
    c = block["counters"]
    assert (c["accepted"], c["rejected"], c["discarded"], c["draws"]) == (tau, 1, len(tokens) - tau - 1, 2 * len(tokens) + 1)


def test_eos_and_the_limit():
    for seed in range(30):
        trace = run(parse_config({"target": EOS_TARGET, "draft": EOS_DRAFT, "eos": "<eos>", "mode": "block",
                                  "seed": seed, "width": 5, "limit": 256}))
        assert trace["done"] == "eos" and trace["output"][-1] == "<eos>"
        last = trace["blocks"][-1]
        if last["tau"] == len(last["proposal"]["tokens"]) and last["proposal"]["tokens"][-1] == "<eos>":
            assert last["bonus"] is None and last["no_bonus"] == "eos"
    trace = run(parse_config({"draft": "aligned", "mode": "block", "seed": 1, "width": 4, "limit": 4}))
    (block,) = trace["blocks"]
    assert block["tau"] == 4 and block["no_bonus"] == "limit" and block["bonus"] is None
    assert trace["output"] == block["committed"] and len(trace["output"]) == 4 and trace["position"] == 8


def test_custom_models_and_the_service_route(client):
    target = {"vocab": ["x", "y"], "start": [0.25, 0.75], "next": {"x": [0.5, 0.5], "y": [0.9, 0.1]}}
    draft_ = {"vocab": ["x", "y"], "start": [0.5, 0.5], "next": {"x": [0.1, 0.9], "y": [0.5, 0.5]}}
    response = client.post("/v1/runs", json={"config": {"target": target, "draft": draft_, "mode": "block",
                                                         "seed": 7, "width": 4, "limit": 12}})
    assert response.status_code == 200, response.get_json()
    trace = response.get_json()
    assert trace["config"]["mode"] == "block" and len(trace["output"]) == 12
    assert not list(VALIDATOR.iter_errors(trace))


def test_the_schema_ties_the_records_to_the_mode():
    block_trace = run(parse_config({"draft": "biased", "mode": "block", "seed": 4, "width": 2}))
    assert not list(VALIDATOR.iter_errors(block_trace))
    del block_trace["blocks"][0]["tau"]
    assert list(VALIDATOR.iter_errors(block_trace))
    tokenwise = run(parse_config({"draft": "biased", "seed": 4, "width": 2}))
    tokenwise["blocks"][0]["tau"] = 0
    assert list(VALIDATOR.iter_errors(tokenwise))
    tokenwise = run(parse_config({"draft": "biased", "seed": 4, "width": 2}))
    tokenwise["config"]["mode"] = "block"
    for b in tokenwise["blocks"]:
        b["mode"], b["tau"] = "block", 0
    assert list(VALIDATOR.iter_errors(tokenwise))  # token-wise records are not mode block's


@st.composite
def open_block_states(draw):
    eos = draw(st.booleans())
    config = {"draft": draw(st.sampled_from(["aligned", "biased"])), "mode": "block",
              "seed": draw(st.integers(0, 2**53 - 1)), "width": draw(st.integers(1, 16)),
              "limit": draw(st.integers(1, 40))}
    vocab = ["A", "B", "C"]
    if eos:
        config.update(target=EOS_TARGET, draft=EOS_DRAFT, eos="<eos>")
        vocab = ["a", "b"]
    committed = draw(st.lists(st.sampled_from(vocab), max_size=config["limit"] - 1))
    return parse_state({"config": config, "committed": committed, "position": draw(st.integers(0, 2**53 - 200))})


@settings(max_examples=200, deadline=None)
@given(open_block_states())
def test_block_invariants(s):
    assert verify(s, draft(s)["tokens"]).to_json() == step(s).to_json()
    result = step(s)
    block, k = result.block, len(result.block["proposal"]["tokens"])
    tau = block["tau"]
    draws = [x["draw"] for x in block["proposal"]["steps"] + block["verification"]]
    draws += [block[key]["draw"] for key in ("correction", "bonus") if block[key] is not None]
    assert [d["position"] for d in draws] == list(range(s.position, result.state.position))
    assert len(block["verification"]) == k  # all k eta draws are taken
    below = [v["below_threshold"] for v in block["verification"]]
    assert tau == max((i + 1 for i, b in enumerate(below) if b), default=0)
    assert [v["accepted"] for v in block["verification"]] == [i < tau for i in range(k)]
    assert block["verification"][-1]["threshold"] == block["verification"][-1]["weight"]  # h_k = w_k
    c = block["counters"]
    assert c["draft_steps"] == k == c["accepted"] + c["rejected"] + c["discarded"] and c["accepted"] == tau
    assert (block["correction"] is None) == (tau == k)
    assert c["committed"] == len(block["committed"]) >= 1 and len(result.state.committed) <= s.config.limit
    assert result.state.counters.to_json() == {n: s.counters.to_json()[n] + c[n] for n in COUNTER_NAMES}


def test_weights_never_rise_and_thresholds_are_probabilities():
    for tokens in itertools.product(range(3), repeat=4):
        contexts = [None, *tokens[:-1]]
        ps, qs = [TOY.after(c) for c in contexts], [BIASED.after(c) for c in contexts]
        w, h = weights_and_thresholds(ps, qs, list(tokens))
        assert w[0] == 1 and all(0 <= b <= a * (ps[i].probability(tokens[i]) / qs[i].probability(tokens[i]))
                                 for i, (a, b) in enumerate(zip(w, w[1:])))
        assert all(0 <= x <= 1 for x in h) and h[-1] == w[-1]


def test_grading_a_block_proposal_the_draft_cannot_make_is_a_grade_not_a_crash(client):
    """A submitted block whose proposal has draft probability 0 (no weight exists): graded."""
    target = {"vocab": ["a", "b", "c"], "start": [0.5, 0.3, 0.2],
              "next": {"a": [0.2, 0.6, 0.2], "b": [0.5, 0.3, 0.2], "c": [0.3, 0.3, 0.4]}}
    draft_ = {"vocab": ["a", "b", "c"], "start": [0.5, 0.5, 0.0],
              "next": {"a": [0.5, 0.5, 0.0], "b": [0.5, 0.5, 0.0], "c": [0.5, 0.5, 0.0]}}
    for seed in range(20):
        trace = client.post("/v1/runs", json={"config": {"target": target, "draft": draft_, "mode": "block",
                                                         "seed": seed, "width": 3}}).get_json()
        if 1 <= trace["blocks"][0]["tau"] < 3:
            break
    trace["blocks"][0]["proposal"]["tokens"][0] = "c"
    response = client.post("/v1/grade", json=trace)
    assert response.status_code == 200, response.get_json()
    assert not response.get_json()["passed"]
