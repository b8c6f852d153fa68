"""The setting `tree` of mode tree (SPEC section 12) over HTTP: the worked examples of SPEC 12.6
field by field, the refusals (422 naming the field), the echo (only when sent, so every config
without it keeps its bytes), every trace of every shape x verifier valid against
trace.schema.json with the counters of SPEC 12.5, and `POST /v1/runs` against the second
implementation (tests/spec_reference.py) draw for draw on a seeded matrix and on custom models."""

from __future__ import annotations

import itertools
import json

import jsonschema_rs
import pytest
from hypothesis import given, settings, strategies as st

import spec_reference as R
from specdec_service.engine import trace_schema
from test_spec_reference import SAMPLINGS, custom_configs
import test_tree
from test_tree import first_block

EXAMPLE = {"draft": "biased", "mode": "tree", "width": 2, "drafts": 2}
VALIDATOR = jsonschema_rs.Draft202012Validator(trace_schema())
COMBINATIONS = [{"verify": "target_only"}, {"shape": "distinct"}, {"shape": "distinct", "verify": "target_only"},
                {"shape": "beam", "verify": "target_only"}, {"shape": "chains", "verify": "residual"}]
"""Every (shape, verify) pair SPEC 12 allows."""
VARIANTS = [{"shape": "distinct", "branching": [3, 2]}, {"shape": "distinct", "branching": [1, 1, 4]},
            {"shape": "distinct", "verify": "target_only", "branching": [2, 2, 2], "threshold_acc": 0.7},
            {"verify": "target_only", "threshold_single": 0.25},
            {"shape": "beam", "verify": "target_only", "threshold_acc": 0.5, "threshold_single": 0.4}]
"""Branching lists and thresholds below 1 (SGLang's lossy settings)."""


client = test_tree.client
"""The app's test client (a fixture of tests/test_tree.py)."""


def block_of(client, config):
    """The record of the first block of ``config``."""
    return first_block(client, config)["block"]


def u4(record):
    return round(record["draw"]["u"], 4)


# ------------------------------------------------------------------ SPEC 12.6, the worked examples


def test_chains_with_target_only_seed_16(client):
    block = block_of(client, {**EXAMPLE, "seed": 16, "tree": {"verify": "target_only"}})
    assert block["proposal"]["chains"] == [["A", "A"], ["B", "A"]]
    # the trie A{A}, B{A}: node 1 = A, node 2 = A after A, node 3 = B, node 4 = A after B
    assert [(n["node"], n["parent"], n["depth"], n["token"]) for n in block["proposal"]["nodes"]] == [
        (1, 0, 1, "A"), (2, 1, 2, "A"), (3, 0, 1, "B"), (4, 3, 2, "A")]
    assert block["proposal"]["nodes"][2]["law_exact"] == ["4/5", "3/20", "1/20"]  # q, B's proposal law
    tests = block["verification"]
    # root: u = 0.6439 is not below acc_1 = 0.5, and is below acc_2 = 0.8: B; node B: u = 0.2307 < 0.55: A
    assert [(t["depth"], t["token"], u4(t), t["acc_exact"], t["accepted"], t["by"]) for t in tests] == [
        (1, "A", 0.6439, "1/2", False, None), (1, "B", 0.6439, "4/5", True, "acc"), (2, "A", 0.2307, "11/20", True, "acc")]
    assert tests[0]["draw"]["position"] == tests[1]["draw"]["position"] == 4  # one draw a node
    assert tests[0]["u_acc"] == tests[0]["draw"]["u"] and tests[0]["threshold_acc"] == 1
    assert block["bonus"]["context"] == "A" and u4(block["bonus"]) == 0.3737 and block["bonus"]["token"] == "B"
    assert block["committed"] == ["B", "A", "B"] and block["next_position"] == 7
    assert block["counters"] == {"target_passes": 1, "draft_steps": 4, "accepted": 2, "rejected": 1,
                                 "discarded": 1, "bonus_tokens": 1, "committed": 3, "draws": 7}
    assert block["discarded"] == ["A"]


def test_beam_with_target_only_seed_3(client):
    block = block_of(client, {**EXAMPLE, "seed": 3, "tree": {"shape": "beam", "verify": "target_only"}})
    assert block["proposal"]["steps"] == []  # no draws
    nodes = block["proposal"]["nodes"]
    # A{A, B}, B{}: after A, A scores 0.64; A B and B A tie at 0.12 and the earlier parent wins
    assert [(n["parent"], n["token"], n["score_exact"], n["law"]) for n in nodes] == [
        (0, "A", "4/5", None), (0, "B", "3/20", None), (1, "A", "16/25", None), (1, "B", "3/25", None)]
    tests = block["verification"]
    assert [(t["token"], u4(t), t["acc_exact"], t["accepted"]) for t in tests] == [
        ("A", 0.1135, "1/2", True), ("A", 0.7003, "1/5", False), ("B", 0.7003, "4/5", True)]
    assert block["bonus"]["context"] == "B" and u4(block["bonus"]) == 0.6130 and block["bonus"]["token"] == "B"
    assert block["committed"] == ["A", "B", "B"] and block["next_position"] == 3


def test_beam_with_target_only_seed_0_rejects_both_children(client):
    block = block_of(client, {**EXAMPLE, "seed": 0, "tree": {"shape": "beam", "verify": "target_only"}})
    tests = block["verification"]
    assert [(t["token"], u4(t), t["acc"], t["accepted"]) for t in tests] == [("A", 0.8833, 0.5, False),
                                                                            ("B", 0.8833, 0.8, False)]
    correction = block["correction"]
    assert correction["distribution"] == [0, 0, 1] and u4(correction) == 0.4315 and correction["token"] == "C"
    assert block["committed"] == ["C"] and block["next_position"] == 2
    assert block["counters"]["rejected"] == 2 and block["counters"]["discarded"] == 2


def test_beam_with_threshold_acc_one_half_seed_1(client):
    lossy = block_of(client, {**EXAMPLE, "seed": 1,
                                 "tree": {"shape": "beam", "verify": "target_only", "threshold_acc": 0.5}})
    tests = lossy["verification"]
    # u = 0.5666, 0.5666 * 1/2 < 0.5: A (lossless: B); u = 0.7458: B; bonus u = 0.9710: C
    assert [(t["token"], u4(t), round(t["u_acc"], 4), t["accepted"]) for t in tests] == [
        ("A", 0.5666, 0.2833, True), ("A", 0.7458, 0.3729, False), ("B", 0.7458, 0.3729, True)]
    assert tests[0]["threshold_acc"] == 0.5
    assert lossy["committed"] == ["A", "B", "C"] and lossy["next_position"] == 3
    lossless = block_of(client, {**EXAMPLE, "seed": 1, "tree": {"shape": "beam", "verify": "target_only"}})
    assert lossless["committed"] == ["B", "C"] and lossless["next_position"] == 2


def test_distinct_with_residual_seed_16(client):
    block = block_of(client, {**EXAMPLE, "seed": 16, "tree": {"shape": "distinct", "branching": [2, 1]}})
    steps = block["proposal"]["steps"]
    # root draws 0.3667 -> A, 0.0795 from s_2 = [0, 3/4, 1/4] -> B; A's child 0.8484 -> B; B's 0.5908 -> A
    assert [(s["node"], s["parent"], s["token"], round(s["draw"]["u"], 4)) for s in steps] == [
        (1, 0, "A", 0.3667), (2, 0, "B", 0.0795), (3, 1, "B", 0.8484), (4, 2, "A", 0.5908)]
    assert block["proposal"]["nodes"][1]["law_exact"] == ["0", "3/4", "1/4"]
    tests = block["verification"]
    assert [(t["token"], u4(t), t["accepted"]) for t in tests] == [("A", 0.6439, False), ("B", 0.2307, True),
                                                                   ("A", 0.3737, True)]
    # A: 0.6439 * 0.8 is not below 0.5; r = [0, 1/2, 1/2]; B against s_2: 0.2307 * 3/4 < 1/2
    assert round(tests[0]["u_s"], 4) == 0.5151 and tests[0]["r_token"] == 0.5
    assert tests[0]["residual_exact"] == ["0", "1/2", "1/2"] and tests[1]["r_exact"] == ["0", "1/2", "1/2"]
    assert tests[1]["s_token"] == 0.75 and round(tests[1]["u_s"], 4) == 0.1731 and tests[1]["residual"] is None
    assert block["bonus"]["context"] == "A" and round(block["bonus"]["draw"]["u"], 5) == 0.00003
    assert block["committed"] == ["B", "A", "A"] and block["next_position"] == 8


def test_the_default_tree_is_section_11(client):
    # absent, {} or chains + residual: SPEC 11 exactly; only the echo differs
    plain = client.post("/v1/runs", json={"config": {**EXAMPLE, "seed": 16}}).get_json()
    assert "tree" not in plain["config"]
    for tree in ({}, {"shape": "chains"}, {"shape": "chains", "verify": "residual"}):
        sent = client.post("/v1/runs", json={"config": {**EXAMPLE, "seed": 16, "tree": tree}}).get_json()
        assert sent["config"].pop("tree") == tree
        assert sent == plain


def test_the_echo_is_as_sent(client):
    tree = {"verify": "target_only", "threshold_single": 0.25, "threshold_acc": 1}
    body = client.post("/v1/step", json={"config": {**EXAMPLE, "seed": 1, "tree": tree}}).get_json()
    assert body["state"]["config"]["tree"] == {"verify": "target_only", "threshold_single": 0.25, "threshold_acc": 1}
    again = client.post("/v1/step", json=body["state"])  # the echoed state is read back as the same session
    assert again.status_code in (200, 409), again.get_json()


def test_distinct_with_one_child_a_depth_is_section_4_draw_for_draw(client):
    for seed, width in itertools.product(range(0, 60, 7), (1, 3, 5)):
        config = {"draft": "biased", "seed": seed, "width": width}
        chain = client.post("/v1/runs", json={"config": config}).get_json()
        tree = client.post("/v1/runs", json={"config": {**config, "mode": "tree", "tree": {"shape": "distinct"}}})
        tree = tree.get_json()
        assert (tree["output"], tree["position"], tree["counters"]) == (
            chain["output"], chain["position"], chain["counters"]), config


# ------------------------------------------------------------------ refusals


@pytest.mark.parametrize("config, pointer, words", [
    ({"mode": "speculative", "tree": {}}, "#/config/tree", "only in mode tree"),
    ({"tree": {"shape": "beam"}}, "#/config/tree/verify", '"target_only" with shape "beam"'),
    ({"tree": {"shape": "beam", "verify": "residual"}}, "#/config/tree/verify", "no draft law"),
    ({"tree": {"branching": [2, 1]}}, "#/config/tree/branching", 'only with shape "distinct"'),
    ({"tree": {"shape": "beam", "verify": "target_only", "branching": [2]}}, "#/config/tree/branching", "distinct"),
    ({"tree": {"threshold_acc": 0.5}}, "#/config/tree/threshold_acc", 'only with verify "target_only"'),
    ({"tree": {"shape": "distinct", "threshold_single": 0.5}}, "#/config/tree/threshold_single", "target_only"),
    ({"tree": {"verify": "target_only", "threshold_acc": 0}}, "#/config/tree/threshold_acc", "above 0"),
    ({"tree": {"verify": "target_only", "threshold_single": 1.01}}, "#/config/tree/threshold_single", "at most 1"),
    ({"tree": {"shape": "distinct", "branching": []}}, "#/config/tree/branching", "1 to 16"),
    ({"tree": {"shape": "distinct", "branching": [9]}}, "#/config/tree/branching/0", "1 to 8"),
    ({"tree": {"shape": "distinct", "branching": [1] * 17}}, "#/config/tree/branching", "1 to 16"),
    ({"tree": {"shape": "circle"}}, "#/config/tree/shape", "chains, distinct, beam"),
    ({"tree": {"verify": "greedy"}}, "#/config/tree/verify", "residual, target_only"),
    ({"tree": {"depth": 2}}, "#/config/tree/depth", "unknown field"),
    ({"tree": []}, "#/config/tree", "object"),
    # the sum over i = 1..K of b_1 * ... * b_i, K = min(width, limit): 8 + 64 * 15 = 968 > 256
    ({"width": 16, "limit": 256, "tree": {"shape": "distinct", "branching": [8, 8]}}, "#/config/tree/branching",
     "968 nodes"),
    # K = min(4, 3) = 3: 8 + 64 + 192 = 264 > 256
    ({"width": 4, "limit": 3, "tree": {"shape": "distinct", "branching": [8, 8, 3]}}, "#/config/tree/branching",
     "264 nodes"),
])
def test_refusals_name_the_field(client, config, pointer, words):
    body = {"config": {"draft": "biased", "seed": 1, "mode": "tree", **config}}
    for route in ("/v1/runs", "/v1/step"):
        response = client.post(route, json=body)
        assert response.status_code == 422, response.get_json()
        problem = response.get_json()
        assert response.headers["Content-Type"].startswith("application/problem+json")
        errors = {e["pointer"]: e["detail"] for e in problem["errors"]}
        assert pointer in errors and words in errors[pointer], errors


def test_the_node_bound_is_inclusive(client):
    # K = min(width, limit) = 3: 4 + 4 * 7 + 4 * 7 * 8 = 256 nodes is within the bound (a node
    # of a 3-token vocabulary draws at most 3 distinct children); K = 11: 1 + 4 + 28 * 9 = 257 is not
    at = {"draft": "biased", "seed": 1, "mode": "tree", "width": 3, "tree": {"shape": "distinct", "branching": [4, 7, 8]}}
    assert client.post("/v1/step", json={"config": at}).status_code == 200
    over = {**at, "width": 11, "limit": 11, "tree": {"shape": "distinct", "branching": [1, 4, 7]}}
    response = client.post("/v1/step", json={"config": over})
    assert response.status_code == 422 and "257 nodes" in response.get_json()["detail"]
    # the depth is min(width, limit): the same list within a shorter limit is taken
    assert client.post("/v1/step", json={"config": {**over, "limit": 10}}).status_code == 200


def test_the_caller_proposes_chains_only_for_shape_chains(client):
    for tree in ({"shape": "distinct"}, {"shape": "beam", "verify": "target_only"}):
        state = {"config": {"draft": "biased", "seed": 1, "mode": "tree", "tree": tree}}
        response = client.post("/v1/verify", json={"state": state, "proposal": {"chains": [["A"]]}})
        assert response.status_code == 422
        assert [e["pointer"] for e in response.get_json()["errors"]] == ["#/proposal/chains"]
    state = {"config": {**EXAMPLE, "seed": 16, "tree": {"verify": "target_only"}}}
    step = client.post("/v1/step", json=state).get_json()
    same = client.post("/v1/verify", json={"state": state, "proposal": {"chains": [["A", "A"], ["B", "A"]]}})
    assert same.get_json() == step


def test_the_analysis_of_a_tree_setting_says_whether_it_is_lossy(client):
    """Every shape x verifier is analysed exactly (engine.tree_law): a lossless one with verdict
    lossless, a threshold below 1 lossy; SPEC 11's default without the field."""
    response = client.post("/v1/analysis", json={"config": {"draft": "biased", "mode": "tree", "width": 2,
                                                            "drafts": 2, "tree": {"shape": "distinct"}},
                                                 "widths": [2]})
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["tree"]["verdict"] == "lossless"
    lossy = client.post("/v1/analysis", json={"config": {"draft": "biased", "mode": "tree", "width": 2, "drafts": 2,
                                                         "tree": {"shape": "beam", "verify": "target_only",
                                                                  "threshold_acc": 0.5}}, "widths": [2]})
    assert lossy.status_code == 200, lossy.get_json()
    assert lossy.get_json()["tree"]["verdict"] == "lossy"


# ------------------------------------------------------------------ traces and counters


@pytest.mark.parametrize("tree", COMBINATIONS + VARIANTS, ids=str)
def test_every_trace_is_valid_and_counts_as_section_12_5(client, tree):
    for draft, width, drafts, seed in itertools.product(("biased", "aligned"), (1, 3, 16), (1, 3, 8), range(2)):
        config = {"draft": draft, "mode": "tree", "width": width, "drafts": drafts, "seed": seed, "limit": 12,
                  "tree": tree}
        response = client.post("/v1/runs", json={"config": config})
        if response.status_code == 422:  # a branching list over 256 nodes at this width
            assert "nodes over min(width, limit)" in response.get_json()["detail"], config
            continue
        trace = response.get_json()
        errors = [str(e) for e in VALIDATOR.iter_errors(trace)]
        assert not errors, (config, errors[:2])
        for block in trace["blocks"]:
            c = block["counters"]
            assert c["draft_steps"] == c["accepted"] + c["rejected"] + c["discarded"] == len(block["proposal"]["tokens"])
            assert c["rejected"] == sum(1 for t in block["verification"] if not t["accepted"])
            assert len(block["discarded"]) == c["discarded"]
            if "nodes" in block["proposal"]:
                ids = [n["node"] for n in block["proposal"]["nodes"]]
                assert ids == list(range(1, len(ids) + 1))
                assert all(n["parent"] < n["node"] for n in block["proposal"]["nodes"])


def test_siblings_are_distinct_and_their_laws_shrink(client):
    config = {"draft": "biased", "mode": "tree", "width": 3, "drafts": 3, "seed": 5,
              "tree": {"shape": "distinct", "branching": [3, 2]}}
    nodes = block_of(client, config)["proposal"]["nodes"]
    by_parent: dict = {}
    for node in nodes:
        by_parent.setdefault(node["parent"], []).append(node)
    for siblings in by_parent.values():
        tokens = [n["token"] for n in siblings]
        assert len(set(tokens)) == len(tokens)
        for earlier, later in zip(siblings, siblings[1:]):  # s_(j+1) is s_j without y_j
            assert later["law"][["A", "B", "C"].index(earlier["token"])] == 0
    assert [len(by_parent[0])] == [3] and all(len(by_parent[n["node"]]) == 2 for n in nodes if n["depth"] == 1)


# ------------------------------------------------------------------ against the second implementation


def block_draws(block):
    """Every draw a block of a tree trace records, (role, position, u), in the order used: the
    draft steps', the tests' (one a node under target_only: its children share it), the
    correction's or the bonus's."""
    found = [("draft", s["draw"]["position"], s["draw"]["u"]) for s in block["proposal"]["steps"] if s["draw"]]
    seen: set = set()
    for test in block["verification"]:
        if test["draw"]["position"] not in seen:
            seen.add(test["draw"]["position"])
            found.append(("verify", test["draw"]["position"], test["draw"]["u"]))
    found += [(key, block[key]["draw"]["position"], block[key]["draw"]["u"])
              for key in ("correction", "bonus") if block[key] is not None]
    return found


def assert_matches_reference(client, config):
    response = client.post("/v1/runs", json={"config": config})
    assert response.status_code == 200, (config, response.get_json())
    trace, ref = response.get_json(), R.run(config)
    assert (trace["output"], trace["position"], trace["counters"]) == (ref.output, ref.position, ref.counters), config
    assert len(trace["blocks"]) == len(ref.blocks), config
    for i, (got, want) in enumerate(zip(trace["blocks"], ref.blocks)):
        where = f"blocks/{i} of {config}"
        assert (got["position"], got["committed"], got["counters"]) == (want.position, want.committed,
                                                                        want.counters), where
        assert got["proposal"]["tokens"] == [t for part in want.proposal for t in part], where
        assert block_draws(got) == [(role, n, float(u)) for role, n, u in want.draws], where


@pytest.mark.parametrize("tree", COMBINATIONS + VARIANTS, ids=str)
def test_the_service_matches_the_reference_on_a_seeded_matrix(client, tree):
    # D 1-8, widths 1-16, both drafts, limits 1-20, an EOS, sampling parameters: 48 runs a tree
    for i, (drafts, width) in enumerate(itertools.product((1, 2, 5, 8), (1, 2, 3, 7, 11, 16))):
        config = {"draft": ("biased", "aligned")[i % 2], "mode": "tree", "width": width, "drafts": drafts,
                  "seed": 7919 * i, "limit": (8, 1, 3, 20, 5)[i % 5], "tree": tree}
        if i % 3 == 1:
            config["eos"] = "C"
        if i % 4 == 2:
            config["sampling"] = SAMPLINGS[i % len(SAMPLINGS)]
        response = client.post("/v1/runs", json={"config": config})
        if response.status_code == 422 and "nodes over" in response.get_json()["detail"]:
            continue
        assert_matches_reference(client, config)


@st.composite
def tree_configs(draw):
    """A custom target and draft (2-5 tokens, optional EOS, any sampling of the comparison), D
    1-4, and any tree SPEC 12 allows: shape, verify, a branching list, thresholds."""
    config = draw(custom_configs(modes=("tree",)))
    shape = draw(st.sampled_from(["chains", "distinct", "beam"]))
    verify = "target_only" if shape == "beam" else draw(st.sampled_from(["residual", "target_only"]))
    tree: dict = {"shape": shape, "verify": verify}
    if shape == "distinct" and draw(st.booleans()):
        tree["branching"] = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    if verify == "target_only":
        for key in ("threshold_single", "threshold_acc"):
            if draw(st.booleans()):
                tree[key] = draw(st.sampled_from([1, 0.9, 0.5, 0.25, 0.01]))
    config["tree"] = tree
    return config


@settings(max_examples=120, deadline=None)
@given(tree_configs())
def test_the_service_matches_the_reference_on_custom_models(client, config):
    assert_matches_reference(client, config)


# ------------------------------------------------------------------ SPEC 12.6, the figures
#
# Expected committed tokens per target pass from the empty prefix of the toy, no limit: every
# tree a shape can draft (with its probability), walked exactly (the probability of each child's
# acceptance), written from SPEC 12 with the second implementation's rows. The sampled trees are
# then held against the service: the mean of its first blocks over many seeds stays within five
# standard errors of the exact figure.

ONE = F = R.Fraction


def rows(model, path):
    return R.row_after(model, [R.TOY_VOCAB[t] for t in path])


def chains_trees(draft, width, drafts):
    """(probability, trie) of every D chains of ``width`` tokens (SPEC 11.1, 12.1.1): a trie is
    ``{token: subtrie}`` in order of first appearance."""
    chains = [(ONE(1), ())]
    for _ in range(width):
        chains = [(pr * q, path + (y,)) for pr, path in chains
                  for y, q in enumerate(rows(draft, path)) if q > 0]
    for combo in itertools.product(chains, repeat=drafts):
        trie: dict = {}
        for _, path in combo:
            node = trie
            for y in path:
                node = node.setdefault(y, {})
        pr = ONE(1)
        for p, _ in combo:
            pr *= p
        yield pr, trie


def distinct_trees(draft, width, branching):
    """(probability, tree) of every distinct tree (SPEC 12.1.2): ``{token: (law, subtree)}``."""
    def grow(path, depth):
        if depth > width:
            yield ONE(1), {}
            return
        b = branching[depth - 1] if depth <= len(branching) else 1
        for pr, picks in siblings(rows(draft, path), b):
            subtrees = [list(grow(path + (y,), depth + 1)) for y, _ in picks]
            for combo in itertools.product(*subtrees):
                total = pr
                for p, _ in combo:
                    total *= p
                yield total, {y: (law, sub) for (y, law), (_, sub) in zip(picks, combo)}

    def siblings(law, b):
        if b == 0 or sum(law) == 0:
            yield ONE(1), []
            return
        for y, s in enumerate(law):
            if s > 0:
                rest = tuple(ONE(0) if x == y else v for x, v in enumerate(law))
                rest = R.normalised(rest) if sum(rest) else rest
                for pr, more in siblings(rest, b - 1):
                    yield s * pr, [(y, law)] + more
    yield from grow((), 1)


def beam_tree(draft, width, drafts):
    """The one beam tree (SPEC 12.1.3) as ``{token: subtree}``."""
    root: dict = {}
    level = [((), ONE(1), root)]
    for _ in range(width):
        offers = []
        for rank, (path, score, node) in enumerate(level):
            q = rows(draft, path)
            best = sorted((y for y in range(3) if q[y] > 0), key=lambda y: (-q[y], y))[:drafts]
            offers += [(score * q[y], rank, y, path, node) for y in best]
        offers.sort(key=lambda o: (-o[0], o[1], o[2]))
        level = []
        for score, _, y, path, node in offers[:drafts]:
            node[y] = {}
            level.append((path + (y,), score, node[y]))
    return root


WALKED: dict = {}
"""target_only_pass's answers by (tree, path, threshold): the D chains of SPEC 11 form the same
tries again and again."""


def target_only_pass(tree, path=(), acc_threshold=ONE(1)):
    """Expected committed tokens of a target-only walk (SPEC 12.4, threshold_single 1)."""
    if not tree:
        return ONE(1)  # the bonus
    key = (repr(tree), path, acc_threshold)
    if key not in WALKED:
        WALKED[key] = _target_only_pass(tree, path, acc_threshold)
    return WALKED[key]


def _target_only_pass(tree, path, acc_threshold):
    p, acc, below, total = rows(R.TOY, path), ONE(0), ONE(0), ONE(0)
    for y, sub in tree.items():
        acc += p[y]
        reach = min(ONE(1), acc / acc_threshold)
        chance = reach - below if p[y] > 0 else ONE(0)
        below = max(below, reach)
        total += chance * (1 + target_only_pass(sub, path + (y,), acc_threshold))
    return total + (1 - below)  # the correction


def residual_pass(tree, path=()):
    """Expected committed tokens of a residual walk (SPEC 12.3) over ``{token: (law, subtree)}``."""
    if not tree:
        return ONE(1)
    r, left, total = rows(R.TOY, path), ONE(1), ONE(0)
    for y, (law, sub) in tree.items():
        a = min(ONE(1), r[y] / law[y])
        total += left * a * (1 + residual_pass(sub, path + (y,)))
        left *= 1 - a
        if a < 1:
            r = R.residual(r, law)
    return total + left


def expected(shape, verify, draft, width, drafts):
    if shape == "beam":
        return target_only_pass(beam_tree(draft, width, drafts))
    if shape == "chains":
        return sum(pr * target_only_pass(trie) for pr, trie in chains_trees(draft, width, drafts))
    trees = distinct_trees(draft, width, [drafts])
    if verify == "residual":
        return sum(pr * residual_pass(tree) for pr, tree in trees)
    return sum(pr * target_only_pass(without_laws(tree)) for pr, tree in trees)


def without_laws(tree):
    """A distinct tree ``{token: (law, subtree)}`` as ``{token: subtree}``."""
    return {y: without_laws(sub) for y, (_, sub) in tree.items()}


def test_the_figures_of_section_12_6():
    biased, aligned = R.BIASED, R.ALIGNED
    assert expected("distinct", "residual", biased, 2, 2) == F(77, 32)
    assert round(float(expected("chains", "target_only", biased, 2, 2)), 3) == 1.791
    assert expected("beam", "target_only", biased, 2, 2) == F(11, 5)
    assert expected("distinct", "residual", biased, 3, 3) == F(347, 125)
    assert round(float(expected("chains", "target_only", biased, 3, 3)), 3) == 2.012
    assert expected("beam", "target_only", biased, 3, 3) == F(281, 100)
    assert expected("distinct", "residual", aligned, 2, 2) == 3
    assert round(float(expected("chains", "target_only", aligned, 2, 2)), 3) == 1.889
    assert round(float(expected("beam", "target_only", aligned, 2, 2)), 3) == 2.265
    assert target_only_pass(beam_tree(biased, 2, 2), acc_threshold=F(1, 2)) == 3


@pytest.mark.parametrize("draft", ["biased", "aligned"])
@pytest.mark.parametrize("shape, verify", [("distinct", "residual"), ("chains", "target_only"),
                                           ("distinct", "target_only"), ("beam", "target_only")])
def test_the_analysis_agrees_with_this_enumeration(client, draft, shape, verify):
    """The service's exact analysis (engine/tree_law.py, one enumeration of its own walk) against
    the enumeration above, written from SPEC 12 alone: every width 1-3 and D 1-3 (``tree_sweep``:
    one block from the empty prefix, no limit), exactly. Chains with target_only from width 2 (its sweep
    over D = 1-8 merges up to 8 chains into tries) is over the analysis budget: width 1 there."""
    model = {"biased": R.BIASED, "aligned": R.ALIGNED}[draft]
    for width in (1,) if shape == "chains" else (1, 2, 3):
        body = {"config": {"draft": draft, "mode": "tree", "width": width, "drafts": 2, "limit": width,
                           "tree": {"shape": shape, "verify": verify}}, "widths": [width]}
        response = client.post("/v1/analysis", json=body)
        assert response.status_code == 200, response.get_json()
        sweep = {(c["drafts"], c["width"]): F(c["committed_per_pass_exact"]) for c in response.get_json()["tree_sweep"]}
        for drafts in (1, 2, 3):
            assert sweep[(drafts, width)] == expected(shape, verify, model, width, drafts), (width, drafts)


@pytest.mark.parametrize("tree, figure", [
    ({"shape": "distinct"}, F(77, 32)), ({"verify": "target_only"}, None),
    ({"shape": "distinct", "verify": "target_only"}, None), ({"shape": "beam", "verify": "target_only"}, F(11, 5))])
def test_the_service_samples_the_figures(client, tree, figure):
    # 200 first blocks (width 2, D 2, biased, no limit within a block: limit 8 > 3); the
    # committed count of one block is 1 to 3, so its standard deviation is at most 1
    exact = expected(tree.get("shape", "chains"), tree.get("verify", "residual"), R.BIASED, 2, 2)
    assert figure is None or exact == figure
    counts = [block_of(client, {**EXAMPLE, "seed": seed, "tree": tree})["counters"]["committed"]
              for seed in range(0, 200 * 7919, 7919)]
    assert abs(sum(counts) / len(counts) - float(exact)) < 5 / 200 ** 0.5


@pytest.mark.parametrize("tree", COMBINATIONS, ids=str)
def test_the_grader_reads_every_tree_trace(client, tree):
    # the reference trace passes; a changed decision, token, draw or node fails with a report,
    # never a 500 (the SPEC 12 rule checks themselves are the grader's to add)
    trace = client.post("/v1/runs", json={"config": {**EXAMPLE, "seed": 5, "tree": tree}}).get_json()
    assert client.post("/v1/grade", json=trace).get_json()["passed"] is True
    for change in ("accepted", "token", "draw", "committed"):
        changed = json.loads(json.dumps(trace))
        first = changed["blocks"][0]
        test = first["verification"][-1]
        if change == "accepted":
            test["accepted"] = not test["accepted"]
        elif change == "token":
            test["token"] = "C" if test["token"] != "C" else "A"
        elif change == "draw":
            test["draw"]["u"] = 0.5
        else:
            first["committed"] = ["C"]
        response = client.post("/v1/grade", json=changed)
        assert response.status_code == 200 and response.get_json()["passed"] is False, (change, response.get_json())


@pytest.mark.parametrize("shape, verify", [("distinct", "residual"), ("beam", "target_only")])
@pytest.mark.parametrize("proposal", [{"tokens": ["A"]}, {"chains": [["A"], ["B"]]}], ids=["tokens", "chains"])
def test_a_tree_the_service_drafts_is_verified_by_step_whatever_the_proposal(client, shape, verify, proposal):
    """A distinct or beam tree has no caller proposal: /v1/verify names /v1/step for tokens and for
    chains alike (not "give chains")."""
    config = {"draft": "biased", "seed": 1, "mode": "tree", "drafts": 2, "tree": {"shape": shape, "verify": verify}}
    response = client.post("/v1/verify", json={"state": {"config": config}, "proposal": proposal})
    assert response.status_code == 422
    [error] = response.get_json()["errors"]
    assert error["pointer"] == f"#/proposal/{next(iter(proposal))}"
    assert error["detail"] == f'shape "{shape}" drafts its own tree: use /v1/step (SPEC section 12)'
