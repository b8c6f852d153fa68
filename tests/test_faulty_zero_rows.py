"""Every faulty decoder the grader replays (each catalogued mistake's) decodes every config the API
accepts, rows with zeros included: it returns a trace, or raises the ``ValueError`` its docstring
promises when its rule is undefined there (``faulty_run``), never another exception.

The kind: a faulty rule that tests a token the draft row of the current context gives probability
0. ``tree-disagreeing-chains-continue`` does (a chain drafted after another token goes on), and
its ratio record divided by q(y) = 0: a ``ZeroDivisionError``, which the diagnosis of
``POST /v1/grade`` swallowed as "undefined", so a trace made with that very mistake was named by
nothing."""

import itertools
import json
from fractions import Fraction

import pytest

from specdec_service.engine import parse_config
from specdec_service.engine.distributions import Dist
from specdec_service.grading import CATALOGUE, faulty_run, grade
from specdec_service.grading.catalogue import BY_ID
from specdec_service.grading.faulty_tree import DisagreeingChainsContinue

# A target and a draft with zeros where the other is positive (both ways), and a 2-token pair of point masses.
ZERO_TARGET = {"vocab": ["A", "B", "C"], "start": [0.5, 0.5, 0.0],
               "next": {"A": [0.0, 1.0, 0.0], "B": [0.3, 0.0, 0.7], "C": [1.0, 0.0, 0.0]}}
ZERO_DRAFT = {"vocab": ["A", "B", "C"], "start": [0.0, 0.2, 0.8],
              "next": {"A": [1.0, 0.0, 0.0], "B": [0.0, 0.0, 1.0], "C": [0.5, 0.5, 0.0]}}
POINTS = {"vocab": ["A", "B"], "start": [1.0, 0.0], "next": {"A": [0.0, 1.0], "B": [1.0, 0.0]}}
MODELS = [(ZERO_TARGET, ZERO_DRAFT, None), (ZERO_DRAFT, ZERO_TARGET, "C"), (POINTS, POINTS, None), ("toy", "biased", None)]
SAMPLINGS = [None, {"temperature": 0}, {"temperature": 0.3333}, {"top_k": 1, "draft": "raw"}, {"top_p": 0.5, "min_p": 1}]


def _config(mistake, target, draft, eos, sampling, seed) -> dict:
    config = {"target": target, "draft": draft, "mode": mistake.mode, "width": 3, "seed": seed, "limit": 6,
              "eos": eos, "drafts": 3}
    if "tree" in mistake.example:  # a SPEC 12 mistake is a rule of its own shape and verifier
        config["tree"] = mistake.example["tree"]
    return config if sampling is None else {**config, "sampling": sampling}


@pytest.mark.parametrize("mistake", CATALOGUE, ids=lambda m: m.id)
def test_every_faulty_decoder_decodes_every_config_with_zeros(mistake):
    undefined = 0
    for (target, draft, eos), sampling, seed in itertools.product(MODELS, SAMPLINGS, range(3)):
        config = parse_config(_config(mistake, target, draft, eos, sampling, seed))
        try:
            trace = faulty_run(config, mistake.rules)
        except ValueError:
            undefined += 1  # documented: the rule is undefined for this config (a residual of zero mass)
            continue
        assert trace["blocks"], (mistake.id, config)
    assert undefined < len(MODELS) * len(SAMPLINGS) * 3


def _disagreeing(seed: int) -> dict:
    config = {"target": ZERO_TARGET, "draft": ZERO_DRAFT, "mode": "tree", "width": 3, "seed": seed, "limit": 6,
              "eos": None, "drafts": 3}
    return json.loads(json.dumps(faulty_run(parse_config(config), BY_ID["tree-disagreeing-chains-continue"].rules)))


def test_a_disagreeing_chain_token_of_draft_probability_zero_has_no_ratio_and_is_accepted_iff_r_is_positive():
    tests = [v for seed in range(6) for b in _disagreeing(seed)["blocks"] for v in b["verification"]]
    undefined = [v for v in tests if v["ratio"] is None]
    assert undefined, "the config must reach a candidate with q(y) = 0"
    for v in undefined:
        assert v["q_token"] == 0 and v["ratio_exact"] is None
        assert v["accepted"] is (v["r_token"] > 0)  # u * 0 < r(y)
    assert all(v["ratio_exact"] == str(Fraction(v["ratio_exact"])) for v in tests if v["ratio"] is not None)


def test_the_diagnosis_names_the_mistake_when_its_replay_meets_a_zero_draft_probability():
    # seed 1: the variant's blocks 0 and 1 have defined ratios; block 2 tests a token of q(y) = 0.
    trace = _disagreeing(1)
    for block in trace["blocks"]:
        for v in block["verification"]:
            if v["ratio"] is None:  # a trace must give a number: the student wrote 0
                v["ratio"], v["ratio_exact"] = 0, "0"
    report = grade(trace)
    assert not report["passed"]
    assert [(d["id"], d["exact"], d["agreement"]["blocks"]) for d in report["diagnosis"]] == [
        ("tree-disagreeing-chains-continue", False, 2)]


@pytest.mark.parametrize("target, accept", [([1, 0, 1], Fraction(0)), ([1, 1, 0], Fraction(1))])
def test_the_exact_depth_law_of_a_token_the_draft_never_gives(target, accept):
    p = Dist.of_weights(target)
    q = Dist.of_weights([1, 0, 0])
    assert DisagreeingChainsContinue().depth_law(p, q, [1])[0] == [accept]


def test_a_trace_with_the_null_ratio_of_that_mistake_is_graded_and_diagnosed():
    # issue 19: only the faulty tree decoder records a null ratio (q(y) = 0, engine.verifiers.tree);
    # the grader's relaxed schema (GradeTraceIn) admits it, so the very trace of that mistake gets
    # its diagnosis (exactly) instead of a 422, in process and over HTTP
    from specdec_service import create_app
    http = create_app({"TESTING": True}).test_client()
    with_nulls = 0
    for seed in range(3):
        trace = _disagreeing(seed)
        nulls = [v for b in trace["blocks"] for v in b["verification"] if v["ratio"] is None]
        with_nulls += bool(nulls)
        assert all(v["ratio_exact"] is None for v in nulls)
        report = grade(trace)
        assert not report["passed"]
        assert [(d["id"], d["exact"]) for d in report["diagnosis"]] == [("tree-disagreeing-chains-continue", True)]
        response = http.post("/v1/grade", json=trace)
        assert response.status_code == 200, response.get_json()
        assert [d["id"] for d in response.get_json()["diagnosis"]] == ["tree-disagreeing-chains-continue"]
    assert with_nulls >= 2  # seeds 0 and 1 test a token of draft probability 0
