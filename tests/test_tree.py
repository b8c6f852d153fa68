"""Mode tree (SPEC section 11, several drafts) over HTTP: the worked example field by field,
verify with a caller's chains, the setting `drafts` (bounds, echo), EOS and the limit, and
every tree trace valid against trace.schema.json. The draw-for-draw comparison with the second
implementation is tests/test_spec_reference.py."""

from __future__ import annotations

import itertools

import jsonschema_rs
import pytest

from specdec_service import create_app
from specdec_service.engine import trace_schema

EXAMPLE = {"draft": "biased", "mode": "tree", "width": 2, "drafts": 2, "seed": 16}
VALIDATOR = jsonschema_rs.Draft202012Validator(trace_schema())


@pytest.fixture(scope="module")
def client():
    return create_app({"TESTING": True}).test_client()


def first_block(client, config):
    response = client.post("/v1/step", json={"config": config})
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def test_the_worked_example_of_section_11(client):
    body = first_block(client, EXAMPLE)
    block = body["block"]
    assert block["mode"] == "tree"
    assert block["proposal"]["chains"] == [["A", "A"], ["B", "A"]]
    assert block["proposal"]["tokens"] == ["A", "A", "B", "A"]
    assert [(s["chain"], s["index"], s["token"], round(s["draw"]["u"], 4)) for s in block["proposal"]["steps"]] == [
        (1, 1, "A", 0.3667), (1, 2, "A", 0.0795), (2, 1, "B", 0.8484), (2, 2, "A", 0.5908)]
    tests = block["verification"]
    assert [(t["depth"], t["chain"], t["token"], t["accepted"], t["alive"]) for t in tests] == [
        (1, 1, "A", False, [2]), (1, 2, "B", True, [2]), (2, 2, "A", True, [2])]
    assert [round(t["draw"]["u"], 4) for t in tests] == [0.6439, 0.2307, 0.3737]
    assert [t["draw"]["position"] for t in tests] == [4, 5, 6]
    # depth 1: chain 1's A against r = p (ratio 0.625), then r = [0, 1/2, 1/2] for chain 2's B
    assert tests[0]["r_exact"] == ["1/2", "3/10", "1/5"] and tests[0]["ratio"] == 0.625
    assert tests[0]["ratio_exact"] == "5/8"
    assert tests[1]["r_exact"] == ["0", "1/2", "1/2"] and tests[1]["r"] == [0.0, 0.5, 0.5]
    assert (tests[1]["r_token"], tests[1]["q_token"], tests[1]["ratio_exact"]) == (0.5, 0.15, "10/3")
    # depth 2: A after B against p (0.55 > u * 0.8)
    assert tests[2]["context"] == "B" and tests[2]["r_token"] == 0.55 and tests[2]["q_token"] == 0.8
    assert block["correction"] is None and block["no_bonus"] is None
    assert block["bonus"]["context"] == "A" and block["bonus"]["token"] == "A"
    assert block["bonus"]["draw"]["position"] == 7 and round(block["bonus"]["draw"]["u"], 5) == 0.00003
    assert block["discarded"] == ["A"]
    assert block["committed"] == ["B", "A", "A"] and block["next_position"] == 8
    assert block["counters"] == {"target_passes": 1, "draft_steps": 4, "accepted": 2, "rejected": 1,
                                 "discarded": 1, "bonus_tokens": 1, "committed": 3, "draws": 8}
    assert body["state"]["config"]["drafts"] == 2
    chain = first_block(client, {**EXAMPLE, "mode": "speculative"})["block"]
    assert chain["committed"] == ["C"]


def test_verify_takes_the_chains(client):
    state = {"config": EXAMPLE}
    step = client.post("/v1/step", json=state).get_json()
    draft = client.post("/v1/draft", json=state).get_json()
    assert draft["chains"] == [["A", "A"], ["B", "A"]]
    same = client.post("/v1/verify", json={"state": state, "proposal": {"chains": draft["chains"]}}).get_json()
    assert same == step
    other = client.post("/v1/verify", json={"state": state, "proposal": {"chains": [["B"], ["C", "C"]]}})
    assert other.status_code == 200, other.get_json()
    block = other.get_json()["block"]
    assert block["proposal"]["chains"] == [["B"], ["C", "C"]]
    # chain 1's draw 0 gives A, not B; chain 2's draws 1, 2 give A A, not C C
    assert [(s["chain"], s["draw"]["position"], s["drafted"]) for s in block["proposal"]["steps"]] == [
        (1, 0, False), (2, 1, False), (2, 2, False)]
    ends = (block["correction"] is not None) + (block["bonus"] is not None)
    assert block["next_position"] == block["counters"]["draws"] == 3 + len(block["verification"]) + ends


@pytest.mark.parametrize("proposal, pointer", [
    ({"tokens": ["A"]}, "#/proposal/tokens"),
    ({"chains": [["A"]]}, "#/proposal/chains"),
    ({"chains": [["A"], ["A"], ["A"]]}, "#/proposal/chains"),
    ({"chains": [["A"], ["A", "A", "A"]]}, "#/proposal/chains/1"),
    ({"chains": [["A"], []]}, "#/proposal/chains/1"),
    ({"chains": [["A"], ["Z"]]}, "#/proposal/chains/1/0"),
    ({"tokens": ["A"], "chains": [["A"], ["A"]]}, "#/proposal/tokens"),
])
def test_verify_refuses_bad_chains(client, proposal, pointer):
    response = client.post("/v1/verify", json={"state": {"config": EXAMPLE}, "proposal": proposal})
    assert response.status_code == 422, response.get_json()
    assert pointer in [e["pointer"] for e in response.get_json()["errors"]]


def test_chains_only_in_mode_tree(client):
    config = {**EXAMPLE, "mode": "speculative"}
    response = client.post("/v1/verify", json={"state": {"config": config}, "proposal": {"chains": [["A"], ["B"]]}})
    assert response.status_code == 422
    assert [e["pointer"] for e in response.get_json()["errors"]] == ["#/proposal/chains"]


@pytest.mark.parametrize("drafts", [0, 9, -1, "2", 2.5, None, True])
def test_drafts_is_bounded(client, drafts):
    response = client.post("/v1/runs", json={"config": {**EXAMPLE, "drafts": drafts}})
    assert response.status_code == 422, response.get_json()
    assert [e["pointer"] for e in response.get_json()["errors"]] == ["#/config/drafts"]


def test_drafts_is_echoed_only_when_sent_or_in_mode_tree(client):
    def config_of(config):
        return client.post("/v1/runs", json={"config": config}).get_json()["config"]
    assert "drafts" not in config_of({"draft": "biased", "seed": 1})
    assert config_of({"draft": "biased", "seed": 1, "drafts": 3})["drafts"] == 3
    assert config_of({"draft": "biased", "seed": 1, "mode": "tree"})["drafts"] == 1
    # ignored by the other modes: the same run with or without it
    plain = client.post("/v1/runs", json={"config": {"draft": "biased", "seed": 1}}).get_json()
    sent = client.post("/v1/runs", json={"config": {"draft": "biased", "seed": 1, "drafts": 5}}).get_json()
    assert {**sent, "config": plain["config"]} == plain


def test_tree_traces_are_valid_and_end_at_eos_or_the_limit(client):
    for seed, drafts, width, eos in itertools.product(range(6), (1, 3, 8), (1, 4), (None, "C")):
        config = {"draft": "aligned" if seed % 2 else "biased", "mode": "tree", "drafts": drafts, "width": width,
                  "seed": seed, "limit": 12, "eos": eos}
        trace = client.post("/v1/runs", json={"config": config}).get_json()
        errors = [f"{list(e.path)}: {e.message}" for e in VALIDATOR.iter_errors(trace)]
        assert errors == [], (config, errors[:3])
        assert trace["done"] == ("eos" if trace["output"][-1:] == [eos] else "limit")
        for block in trace["blocks"]:
            c = block["counters"]
            assert c["draft_steps"] == c["accepted"] + c["rejected"] + c["discarded"], config
            assert len(block["proposal"]["chains"]) == drafts
            if eos is not None:
                for chain in block["proposal"]["chains"]:
                    assert eos not in chain[:-1]


def test_the_sdk_reads_a_tree_trace(client):
    from specdec_client import Trace, TreeTest

    trace = Trace.from_dict(client.post("/v1/runs", json={"config": EXAMPLE}).get_json())
    block = trace.blocks[0]
    assert block.proposal.chains == (("A", "A"), ("B", "A"))
    assert [s.chain for s in block.proposal.steps] == [1, 1, 2, 2]
    assert all(isinstance(t, TreeTest) for t in block.verification)
    assert block.verification[1].r_exact == ("0", "1/2", "1/2") and block.rejected.chain == 1
    assert trace.config.drafts == 2


def test_grading_a_tree_trace_and_mixed_up_modes(client):
    trace = client.post("/v1/runs", json={"config": EXAMPLE}).get_json()
    report = client.post("/v1/grade", json=trace).get_json()
    assert report["passed"] is True and report["score"] == 1.0
    chain = client.post("/v1/runs", json={"config": {**EXAMPLE, "mode": "speculative"}}).get_json()
    for config, blocks in ((EXAMPLE, chain["blocks"]), ({**EXAMPLE, "mode": "speculative"}, trace["blocks"])):
        mixed = {**trace, "config": {**trace["config"], **config}, "blocks": blocks}
        response = client.post("/v1/grade", json=mixed)
        assert response.status_code == 200, response.get_json()
        assert response.get_json()["passed"] is False


def test_grading_costs_count_every_chain():
    from specdec_service.engine import parse_config
    from specdec_service.grading.grader import reference_cost, trace_cost

    one = parse_config({**EXAMPLE, "drafts": 1})
    eight = parse_config({**EXAMPLE, "drafts": 8})
    # block units (D * width + 8) * (V + 64): a tree block drafts D chains of the width
    assert reference_cost(eight) / reference_cost(one) == (8 * 2 + 8) / (2 + 8)
    assert trace_cost(eight, 3) > trace_cost(one, 3)
