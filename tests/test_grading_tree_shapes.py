"""The catalogued SPEC 12 mistakes: their exact laws (the enumeration of engine/tree_law with one
rule swapped, grading/tree_laws.py) give the numbers SPEC 12 and the issue state, the correct
rules' laws stay the target's, and a trace of each mistake is named."""

import json
from fractions import Fraction

import pytest

from specdec_service.engine import parse_config, run
from specdec_service.engine.tree_law import TreeShapeLaw
from specdec_service.grading import CATALOGUE, faulty_run, grade
from specdec_service.grading.samples import grade_samples
from test_grading_samples import SAMPLER_MODULE
from specdec_service.grading.tree_laws import (
    SHAPE_LAWS, RepeatedChildTwice, ResidualKept, AgainstFixedQ, first_token_tv,
)


def config(tree, width=2, drafts=2, seed=0):
    return parse_config({"draft": "biased", "mode": "tree", "width": width, "drafts": drafts, "seed": seed,
                         "tree": tree})


DISTINCT = {"shape": "distinct", "verify": "residual", "branching": [2, 1]}
CHAINS_TO = {"shape": "chains", "verify": "target_only"}


@pytest.mark.parametrize("tree, law, exact", [
    (DISTINCT, AgainstFixedQ, Fraction(3, 40)),
    (DISTINCT, ResidualKept, Fraction(3, 40)),
    (CHAINS_TO, RepeatedChildTwice, Fraction(7053, 22400)),
])
def test_mistake_first_token_total_variation_is_exact(tree, law, exact):
    assert first_token_tv(config(tree), law) == exact


@pytest.mark.parametrize("tree", [DISTINCT, CHAINS_TO, {"shape": "beam", "verify": "target_only"},
                                  {"shape": "distinct", "verify": "target_only"}])
def test_correct_rule_and_dropping_q_are_lossless(tree):
    """Target-only never reads q: lossless (SPEC 12.4), not a mistake."""
    assert first_token_tv(config(tree)) == 0
    assert first_token_tv(config(tree, width=3, drafts=3)) == 0


def test_repeated_child_is_exact_at_first_token_for_three_drafts():
    """With 3 drafts a token can be drafted three times: the law grows further from p."""
    assert first_token_tv(config(CHAINS_TO, drafts=3), RepeatedChildTwice) == Fraction(455263, 1120000)


@pytest.mark.parametrize("mistake_id", sorted(SHAPE_LAWS))
def test_trace_of_mistake_is_named(mistake_id):
    mistake = next(m for m in CATALOGUE if m.id == mistake_id)
    cfg = parse_config(mistake.example)
    trace = json.loads(json.dumps(faulty_run(cfg, mistake.rules)))
    assert trace != json.loads(json.dumps(run(cfg)))
    report = grade(trace)
    assert report["passed"] is False
    assert mistake_id in [d["id"] for d in report["diagnosis"] if d["exact"]]


def test_mistake_laws_are_tree_shape_laws():
    assert all(issubclass(law, TreeShapeLaw) for law in SHAPE_LAWS.values())


# ---------------------------------------------------------------- grading by samples


def _sessions(settings, rules=None, n=2000):
    """The outputs of ``n`` sessions (seeds 0..n-1) of the engine, or of a planted mistake."""
    out = []
    for seed in range(n):
        cfg = parse_config({**settings, "seed": seed})
        out.append((run(cfg) if rules is None else faulty_run(cfg, rules))["output"])
    return out


SAMPLED = {"target": "toy", "draft": "biased", "mode": "tree", "width": 2, "drafts": 2, "limit": 4, "eos": None}
LOSSY = {"shape": "beam", "verify": "target_only", "threshold_acc": 0.5}


@pytest.mark.parametrize("tree", [DISTINCT, CHAINS_TO, {"shape": "beam", "verify": "target_only"}, LOSSY])
def test_correct_tree_samples_pass_lossy_against_spec_12_law(tree):
    """Correct samples pass; a lossy tree is graded against SPEC 12's law (tv 1/2 from the target)."""
    settings = {**SAMPLED, "tree": tree}
    report = grade_samples({"config": settings, "samples": _sessions(settings)})
    assert report["passed"] is True, report["reason"]


def test_lossless_samples_fail_a_lossy_config():
    """The lossy law is not the target's: the target's samples fail the lossy config's grade."""
    lossless = _sessions({**SAMPLED, "tree": {"shape": "beam", "verify": "target_only"}})
    report = grade_samples({"config": {**SAMPLED, "tree": LOSSY}, "samples": lossless})
    assert report["passed"] is False


@pytest.mark.parametrize("mistake_id", sorted(SHAPE_LAWS))
def test_planted_sampler_mistake_is_named_from_samples(mistake_id):
    mistake = next(m for m in CATALOGUE if m.id == mistake_id)
    settings = {**SAMPLED, "tree": mistake.example["tree"]}
    report = grade_samples({"config": settings, "samples": _sessions(settings, mistake.rules)})
    assert report["passed"] is False
    assert report["mistake"]["named"]["id"] == mistake_id


# ---------------------------------------------------------------- a sampler that drops q


_sample = SAMPLER_MODULE._pick
"""SPEC 3's inverse CDF over float rows, the students' sampler's (tests/students/sampler.py)."""


def target_only_sampler(target, draft, width, limit, eos, rng, mode, drafts, tree):
    """Chains of the draft's tokens merged into a trie, each node tested with one u against the
    target's cumulative probability of its children: the draft's probabilities are never read
    past drafting (SPEC 12.4). Written from SPEC 12 alone for this test."""
    out, eos = [], None if eos is None else target.vocab.index(eos)

    def row(model, tokens):
        return model([target.vocab[i] for i in tokens])
    while len(out) < limit:
        k = min(width, limit - len(out))
        chains = []
        for _ in range(drafts):
            chain = []
            for _ in range(k):
                y = _sample(row(draft, out + chain), rng.random())
                chain.append(y)
                if y == eos:
                    break
            chains.append(chain)
        prefix, alive = [], chains
        while len(out) < limit:
            children = list(dict.fromkeys(c[len(prefix)] for c in alive if len(c) > len(prefix)))
            p = row(target, out)
            if not children:
                out.append(_sample(p, rng.random()))  # the bonus
                break
            u, acc, chosen = rng.random(), 0.0, None
            for y in children:
                acc += p[y]
                if p[y] > 0 and u < acc:
                    chosen = y
                    break
            if chosen is None:
                rest = [0.0 if y in children else x for y, x in enumerate(p)]
                out.append(_sample([x / sum(rest) for x in rest], rng.random()))
                break
            out.append(chosen)
            prefix.append(chosen)
            alive = [c for c in alive if c[:len(prefix)] == prefix]
            if chosen == eos:
                return out
    return out


def test_sampler_dropping_q_passes():
    """Dropping the draft's probabilities is lossless (SPEC 12.4), not a mistake: it passes."""
    import random

    from specdec_client.sampler_grading import ModelView, sampler_arguments
    from specdec_service.engine import builtin_models

    settings = {**SAMPLED, "tree": CHAINS_TO}
    kwargs, problem = sampler_arguments(target_only_sampler, settings)
    assert problem is None and kwargs["tree"] == CHAINS_TO and kwargs["drafts"] == 2
    tables = {m["name"]: m for m in builtin_models()}
    target, draft = ModelView(tables["toy"], None), ModelView(tables["biased"], None)
    rng = random.Random(7)
    samples = [[target.vocab[y] for y in target_only_sampler(target, draft, rng=rng, **kwargs)] for _ in range(3000)]
    assert grade_samples({"config": settings, "samples": samples})["passed"] is True


def test_function_without_tree_parameter_fails_a_tree_config_with_a_sentence():
    from specdec_client.sampler_grading import sampler_arguments

    def old(target, draft, width, limit, eos, rng, mode, drafts):
        return []

    _, problem = sampler_arguments(old, {**SAMPLED, "tree": CHAINS_TO})
    assert problem is not None and "'tree'" in problem and "tree=None" in problem
    assert sampler_arguments(old, SAMPLED)[1] is None  # without tree: SPEC 11, as before
