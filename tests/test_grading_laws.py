"""Exact laws of the catalogued mistakes by enumeration of one block (grading/laws.py, issue 20):
the correct programs give the target's law, each mistake's program gives the law of the engine's
own faulty decoder (seeded traces), and samplers that make the mistake with their own random
numbers get it named. Statistical tests: fixed seeds, stated N and alpha."""

import random

import pytest
from specdec_service.engine import parse_config
from specdec_service.grading import grade_samples
from specdec_service.grading.catalogue import (
    BY_ID,
    CATALOGUE,
    FLAT_DRAFT,
    TREE_EOS_DRAFT,
    TREE_EOS_TARGET,
)
from specdec_service.grading.faulty import faulty_run
from specdec_service.grading.laws import (
    CORRECT,
    PROGRAMS,
    TARGETS_LAW,
    UNSTATED,
    Path,
    enumerate_block,
    law_of_program,
)
from specdec_service.grading.samples import (
    END,
    _law_computable,
    family_test,
    target_law,
    transition_counts,
)
from students import planted
from test_grading_samples import SAMPLER_MODULE, sample_configs

N = 2000
"""Samples per planted sampler: every mistake below is named at this N (seed 7), except the
unscaled block residual (:data:`N_BY_MISTAKE`)."""
N_BY_MISTAKE = {"block-unscaled-residual": 8000}
"""The unscaled residual moves the law by at most 0.057 in one row: it passes at N = 4000 (seed
7) and is named at N = 8000."""
ALPHA = 0.001

SPEC_TOY = {"target": "toy", "draft": "biased", "mode": "speculative", "width": 3, "limit": 8, "eos": None}
BLOCK_TOY = {**SPEC_TOY, "mode": "block", "width": 3}
BLOCK_FLAT = {**BLOCK_TOY, "draft": FLAT_DRAFT}
TREE_TOY = {**SPEC_TOY, "mode": "tree", "width": 2, "drafts": 2}
CONTEXT_DRAFT = {"vocab": ["A", "B", "C"], "start": [0.6, 0.2, 0.2],
                 "next": {"A": [0.1, 0.1, 0.8], "B": [0.7, 0.2, 0.1], "C": [0.2, 0.7, 0.1]}}
"""A draft whose rows depend on the context (the biased draft's do not)."""
UNSCALED_DRAFT = {"vocab": ["A", "B", "C"], "start": [0.36, 0.28, 0.36],
                  "next": {"A": [0.29, 0.36, 0.35], "B": [0.33, 0.38, 0.29], "C": [0.08, 0.62, 0.3]}}
"""A draft under which the unscaled block residual moves some row of the law by 0.057 (found by a
seeded search over drafts; FLAT_DRAFT moves none by more than 0.02)."""
TREE_EOS = {"target": TREE_EOS_TARGET, "draft": TREE_EOS_DRAFT, "mode": "tree", "width": 2, "drafts": 2,
            "limit": 6, "eos": "$"}

CASES = [
    ("keep-after-rejection", SPEC_TOY),
    ("reused-rejection-draw", SPEC_TOY),
    ("residual-not-clipped", SPEC_TOY),
    ("block-first-failing-eta", BLOCK_TOY),
    ("block-unscaled-residual", {**BLOCK_TOY, "draft": UNSCALED_DRAFT, "width": 2, "limit": 6}),
    ("block-cumprod-acceptance", BLOCK_TOY),
    ("block-cumprod-scaled-residual", BLOCK_TOY),
    ("block-thresholds-row-early", BLOCK_TOY),
    ("tree-residual-not-updated", TREE_TOY),
    ("tree-tested-against-draft-row", TREE_TOY),
    ("tree-disagreeing-chains-continue", {**TREE_TOY, "draft": CONTEXT_DRAFT}),
    ("tree-shared-draws", TREE_TOY),
]
"""Each mistake whose law grading/laws.py states, with a config where it shows."""


def _config(raw: dict, seed: int = 0):
    return parse_config({**raw, "seed": seed})


def _samples(raw: dict, mistake: str, n: int = N, seed: int = 7) -> list:
    target, draft = SAMPLER_MODULE.model_of(raw["target"]), SAMPLER_MODULE.model_of(raw["draft"])
    rng = random.Random(seed)
    args = (target, draft, raw["width"])
    if raw["mode"] == "tree":
        return [planted.tree_decode(*args, raw["drafts"], raw["limit"], raw["eos"], rng, mistake) for _ in range(n)]
    decode = planted.block_decode if raw["mode"] == "block" else planted.speculative_decode
    return [decode(*args, raw["limit"], raw["eos"], rng, mistake) for _ in range(n)]


def _law(law: dict):
    return lambda row: law.get(row, {END: 1.0})


def test_a_draw_is_an_interval_split_by_each_decision():
    """sample(d, u) then the test u < 1/2 on the same u: P(token 0 and u < 1/2) = 1/4 for
    d = [1/4, 3/4] (u in [0, 1/4)), P(token 1 and u < 1/2) = 1/4 (u in [1/4, 1/2))."""
    from fractions import Fraction as F

    def program(run):
        u = run.draw()
        return run.sample(u, (F(1, 4), F(3, 4))), run.below(u, F(1, 2))
    assert enumerate_block(program) == {(0, True): F(1, 4), (1, True): F(1, 4), (1, False): F(1, 2)}
    run = Path(())
    u = run.draw()
    assert run.below(u, F(1, 3)) and run.p == F(1, 3)
    assert run.below(u, F(1, 3)) and run.arity == [2]  # asked again: one answer, no branch


def test_the_correct_programs_give_the_targets_law():
    """Speculative sampling, block verification and tree verification are exact: the enumerated
    law of each mode's correct block program is the target chain at every row, to 1e-12 (the
    suite's configs of those modes and the cases above)."""
    configs = [e.config for e in sample_configs() if e.config["mode"] in CORRECT]
    configs += [raw for _, raw in CASES]
    for raw in configs:
        config = _config(raw)
        law, target = law_of_program(config, CORRECT[config.mode], "", 10**6), target_law(config)
        for row, outcomes in law.items():
            want = target(row)
            assert set(outcomes) == set(want), (raw, row)
            for y, p in outcomes.items():
                assert p == pytest.approx(want[y], abs=1e-12), (raw, row, y)


@pytest.mark.parametrize("mistake, raw", CASES, ids=[c[0] for c in CASES])
def test_each_law_is_the_engines_faulty_decoder(mistake, raw):
    """The enumerated law of each mistake fits the engine's own faulty decoder (the catalogue's
    rules): 600 traces, seeds 0..599, tested as samples against the law (Holm family at alpha =
    0.001), and differs from the target's law somewhere by more than 0.01."""
    config = _config(raw)
    law = law_of_program(config, PROGRAMS[mistake], mistake)
    outputs = [tuple(config.vocab.index(t) for t in faulty_run(_config(raw, seed), BY_ID[mistake].rules)["output"])
               for seed in range(600)]
    fit = family_test(transition_counts(outputs), _law(law))
    assert not fit["impossible"] and fit["p_value"] > ALPHA, (mistake, fit["p_value"])
    target = target_law(config)
    assert max(abs(p - target(row).get(y, 0.0)) for row, cell in law.items() for y, p in cell.items()) > 0.01


@pytest.mark.parametrize("mistake, raw", CASES, ids=[c[0] for c in CASES])
def test_a_sampler_making_the_mistake_gets_it_named(mistake, raw):
    """A student's sampler with its own random.Random (tests/students/planted.py), N = 2000,
    seed 7: the grade fails and names the mistake (keep-after-rejection's law is
    committed-and-discarded's too: the reason says so)."""
    report = grade_samples({"config": raw, "samples": _samples(raw, mistake, N_BY_MISTAKE.get(mistake, N))})
    assert not report["passed"]
    named = report["mistake"]["named"]
    assert named is not None, report["reason"]
    assert named["id"] == mistake, report["mistake"]
    assert named["fits"] and named["p_value"] > ALPHA
    assert f"[{mistake}]" in report["reason"]
    if mistake == "keep-after-rejection":
        assert "equals that of committed-and-discarded" in report["mistake"]["reason"]


@pytest.mark.parametrize("raw", [BLOCK_TOY, TREE_TOY, TREE_EOS], ids=["block", "tree", "tree-eos"])
def test_the_correct_samplers_of_modes_block_and_tree_pass(raw):
    """N = 2000, seed 8. (Seed 7 makes the block sampler a false fail: Holm-adjusted p = 0.00093,
    the 1-in-1000 event alpha allows; at N = 20000, seed 3, the same sampler gives p = 0.106.)"""
    assert grade_samples({"config": raw, "samples": _samples(raw, "", seed=8)})["passed"]


def test_every_mistake_of_the_catalogue_has_a_law_or_a_reason():
    """Sample grading states the law of every catalogued mistake of modes speculative, block and
    tree (by enumeration or by rows), or says why its output has the target's law."""
    for mistake in CATALOGUE:
        if mistake.mode in ("speculative", "block", "tree"):
            assert mistake.id in PROGRAMS or mistake.id in UNSTATED or _law_computable(mistake) is None, mistake.id
            assert not (mistake.id in PROGRAMS and mistake.id in UNSTATED)


@pytest.mark.parametrize("mistake, raw", [
    ("draft-from-discarded", {**SPEC_TOY, "draft": CONTEXT_DRAFT}),
    ("tree-bonus-while-a-chain-goes-on", {**TREE_EOS, "width": 3}),
], ids=["draft-from-discarded", "tree-bonus-while-a-chain-goes-on"])
def test_mistakes_said_to_keep_the_targets_law_do(mistake, raw):
    """The two mistakes UNSTATED calls exact, enumerated as block programs: the target's law
    at every row to 1e-12 (so samples cannot name them; their traces do), and they fail nothing."""
    config = _config(raw)
    law, target = law_of_program(config, TARGETS_LAW[mistake], mistake), target_law(config)
    for row, outcomes in law.items():
        assert set(outcomes) == set(target(row)), row
        for y, p in outcomes.items():
            assert p == pytest.approx(target(row)[y], abs=1e-12), (row, y)
    assert mistake in UNSTATED


def test_a_config_too_large_to_enumerate_says_which_laws_were_left_out():
    """D = 4, w = 4: the tree mistakes' laws need more paths than a grade's budget (about 8 s of
    CPU spent, measured): the grade still fails the samples and says which laws it left out."""
    report = grade_samples({"config": {**TREE_TOY, "width": 4, "drafts": 4}, "samples": [["A"] * 8] * 50})
    assert not report["passed"] and report["mistake"]["named"] is None
    assert "laws not computed for this config: tree-" in report["reason"]
    assert "enumerated paths left to it" in report["reason"]


def test_a_draft_row_with_zeros_is_no_division_by_zero():
    """A disagreeing chain's token may have draft probability 0 in the accepted context: the test
    u * q < r then accepts iff r > 0 (as the engine's exact test does), and the grade answers."""
    zero_draft = {"vocab": ["A", "B", "C"], "start": [0.5, 0.5, 0],
                  "next": {"A": [0, 0.5, 0.5], "B": [0.5, 0, 0.5], "C": [0.5, 0.5, 0]}}
    raw = {**TREE_TOY, "draft": zero_draft}
    law = law_of_program(_config(raw), PROGRAMS["tree-disagreeing-chains-continue"], "tree-disagreeing-chains-continue")
    assert all(abs(sum(cell.values()) - 1) < 1e-12 for cell in law.values())
    report = grade_samples({"config": raw, "samples": [["A", "B"] * 4] * 20})
    assert not report["passed"] and report["reason"]


@pytest.mark.parametrize("raw", [TREE_TOY, {**TREE_EOS, "drafts": 3}], ids=["toy", "eos-d3"])
def test_the_tree_law_by_depths_equals_the_law_path_by_path(raw):
    """tree_law (a memoised recursion over depths) and tree_block (every path of the whole block)
    give the same exact block law, for the correct rule and each fresh-draw mistake."""
    from specdec_service.grading.laws import Models, tree_block, tree_law
    m = Models(_config(raw))
    for variant in ("", "tree-residual-not-updated", "tree-tested-against-draft-row", "tree-disagreeing-chains-continue"):
        for last, k, room in ((None, 2, True), (0, 1, False), (1, 2, False)):
            by_paths = {}
            for (tokens, _), chance in enumerate_block(tree_block, m, last, None, k, room, variant).items():
                by_paths[tokens] = by_paths.get(tokens, 0) + chance
            assert tree_law(m, last, k, room, variant) == by_paths, (variant, last, k, room)
