"""Sample grading (issue 20): whole sessions, every position tested, one error rate, the mistake
named from exact laws. Statistical tests use fixed seeds; the thresholds are stated."""

import importlib.util
import json
import random
from collections import Counter
from pathlib import Path

import pytest
from specdec_service.engine import SPECULATIVE, InvalidInput, parse_config
from specdec_service.grading import grade_samples
from specdec_service.grading.samples import (
    END,
    check_lengths,
    holm,
    law_of_rules,
    mistake_laws,
    target_law,
    transition_counts,
)
from specdec_service.grading.suites import suite

SAMPLER = Path(__file__).parent / "students" / "sampler.py"
N = 2000
"""Samples per config: every planted mistake below fails at this N (docs/grading.md, the minimum N table)."""


def _load_sampler():
    spec = importlib.util.spec_from_file_location("student_sampler", SAMPLER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SAMPLER_MODULE = _load_sampler()


def sample_configs():
    """The distinct configs of the ``all`` suite (every rule family) that have an output law (not
    greedy; the seed does not matter) and no sampling parameters (a sampler is handed the raw
    tables, as the SDK's)."""
    seen = {}
    for entry in suite("all").configs:
        if entry.config["mode"] != "greedy" and "sampling" not in entry.config:
            seen.setdefault(json.dumps({k: v for k, v in entry.config.items() if k != "seed"}, sort_keys=True), entry)
    return list(seen.values())


def draw_samples(config: dict, mistake: str = "", n: int = N, seed: int = 7) -> list:
    module = SAMPLER_MODULE
    module.MISTAKE = mistake
    try:
        target, draft = module.model_of(config["target"]), module.model_of(config["draft"])
        rng = random.Random(seed)
        width = config["width"] if config["mode"] == "speculative" else 0
        out = []
        for _ in range(n):
            if width:
                out.append(module.speculative_decode(target, draft, width, config["limit"], config["eos"], rng))
            else:
                s = []
                while len(s) < config["limit"] and (not s or s[-1] != config["eos"]):
                    s.append(target.vocab[module._pick(target(s), rng.random())])
                out.append(s)
        return out
    finally:
        module.MISTAKE = ""


TOY = {"target": "toy", "draft": "biased", "mode": "speculative", "width": 3, "limit": 8, "eos": None}
EOS = {**{k: v for k, v in next(e.config for e in sample_configs() if e.config["eos"] is not None).items()
          if k != "drafts"}, "mode": "speculative"}
"""A speculative config whose EOS ends sessions early: the suite's first config with an EOS, in
mode speculative (the catalogue's speculative mistakes are planted in it)."""


# ---------------------------------------------------------------- lengths (item 4)


def test_lengths_say_how_many_are_too_long_or_too_short_and_by_how_much():
    config = parse_config({**TOY, "seed": 0, "limit": 4})
    samples = [(0, 1, 2, 0)] * 5 + [(0, 1, 2, 0, 1)] * 3 + [(0,) * 7] + [(0, 1)] * 2
    report = check_lengths(samples, config)
    assert (report["complete"], report["too_long"], report["too_short"]) == (5, 4, 2)
    assert report["too_long_by"] == {"1": 3, "3": 1} and report["too_short_by"] == {"2": 2}
    assert report["message"] == ("4 of 11 samples are too long: 3 by 1 token, 1 by 3 tokens; 2 of 11 samples are too "
                                 "short without ending in the EOS: 2 by 2 tokens. A session has exactly limit = 4 tokens.")


def test_a_sample_going_on_after_the_eos_is_too_long():
    config = parse_config(EOS)
    eos = config.eos
    report = check_lengths([(0, eos), (0, eos, 1), (eos,)], config)
    assert (report["complete"], report["too_long"], report["after_eos"]) == (2, 1, 1)


def test_an_overshooting_sampler_fails_on_its_lengths_and_no_mistake_is_named():
    report = grade_samples({"config": TOY, "samples": draw_samples(TOY, "overshoot")})
    assert not report["passed"] and report["reason"].startswith("Incomplete sessions: ")
    assert report["lengths"]["too_long"] > 0 and set(report["lengths"]["too_long_by"]) <= {"1", "2"}
    assert report["mistake"]["named"] is None
    assert "no catalogued mistake explains" in report["reason"].lower()


# ---------------------------------------------------------------- every position (item 3)


def test_transition_counts_per_position_and_context():
    counts = transition_counts([(0, 1), (0, 2), (1,)])
    assert counts[(0, None)] == {0: 2, 1: 1}
    assert counts[(1, 0)] == {1: 1, 2: 1}
    assert counts[(1, 1)] == {END: 1} and counts[(2, 1)] == {END: 1}


def test_transition_counts_equal_a_plain_count_of_every_token():
    rng = random.Random(5)
    samples = [tuple(rng.randrange(4) for _ in range(rng.randrange(1, 9))) for _ in range(500)]
    expected = {}
    for s in samples:
        c = None
        for t, y in enumerate(s):
            expected.setdefault((t, c), Counter())[y] += 1
            c = y
        expected.setdefault((len(s), c), Counter())[END] += 1
    assert transition_counts(samples) == expected
    assert transition_counts(Counter(samples)) == expected


def test_holm_adjusted_p_values():
    assert holm([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.09, 0.09, 0.5])


def _lossy(config: dict) -> bool:
    """A SPEC 12 tree with a threshold below 1: its output law is not the target's."""
    tree = config.get("tree") or {}
    return min(float(tree.get("threshold_single", 1)), float(tree.get("threshold_acc", 1))) < 1


@pytest.mark.parametrize("entry", sample_configs(), ids=lambda e: e.id)
def test_a_correct_sampler_passes_every_config_of_the_suite(entry):
    """The target's law passes every lossless config; a lossy one (SPEC 12 thresholds) is graded
    against its own law, which the target's samples fail (a correct lossy sampler passes it in
    tests/test_grading_tree_shapes.py)."""
    report = grade_samples({"config": entry.config, "samples": draw_samples(entry.config)})
    if _lossy(entry.config):
        assert not report["passed"]
        return
    assert report["passed"] and report["reason"] is None and report["conclusive"]
    assert report["p_value"] > 0.001 and report["lengths"]["complete"] == N
    assert report["mistake"]["named"] is None


def test_every_position_is_tested_not_only_the_first_tokens():
    """Samples correct in their first five tokens, then drawn from the draft's row: the first-m
    test (m <= 4) passes them, the whole-session test fails them at a late position."""
    rng = random.Random(3)
    biased = SAMPLER_MODULE.model_of("biased")
    samples = []
    for s in draw_samples(TOY):
        s = s[:5]
        while len(s) < 8:
            s.append(biased.vocab[SAMPLER_MODULE._pick(biased(s), rng.random())])
        samples.append(s)
    from specdec_service.grading import grade_distribution
    assert all(grade_distribution({"config": {**TOY, "seed": 0}, "m": m, "samples": samples})["passed"] for m in (1, 2, 3, 4))
    report = grade_samples({"config": TOY, "samples": samples})
    assert not report["passed"] and report["most_deviating"]["position"] >= 5
    assert report["tests"] >= 20  # rows of positions 0..7 and contexts, pooled rows, the global test


# ---------------------------------------------------------------- the mistake named (item 5)


def test_the_law_of_the_correct_rules_is_the_target_chain():
    """Speculative sampling is exact: the forward pass over blocks gives the target's rows at
    every position (the theorem on these configs, to 1e-12; configs of modes block and tree are
    passed through the token-wise rules at their width, whose law is the same target chain)."""
    for entry in sample_configs():
        config = parse_config(entry.config)
        law, target = law_of_rules(config, None if config.mode == "autoregressive" else SPECULATIVE), target_law(config)
        for row, outcomes in law.items():
            want = target(row)
            assert set(outcomes) == set(want), (entry.id, row)
            for y, p in outcomes.items():
                assert p == pytest.approx(want[y], abs=1e-12), (entry.id, row, y)


@pytest.mark.parametrize("planted, named, config", [
    ("correction-from-p", "resample-from-p", TOY),
    ("correction-from-p", "resample-from-p", EOS),
    ("argmax-proposals", "argmax-proposals-tested-as-samples", TOY),
    ("bonus-at-limit", "bonus-past-limit", TOY),
    ("bonus-at-limit", "bonus-past-limit", EOS),
])
def test_planted_catalogued_mistakes_fail_and_are_named(planted, named, config):
    report = grade_samples({"config": config, "samples": draw_samples(config, planted)})
    assert not report["passed"]
    assert report["mistake"]["named"]["id"] == named
    evidence = report["mistake"]["named"]
    assert evidence["fits"] and evidence["p_value"] > 0.001
    assert evidence["log_likelihood_ratio"] is None or evidence["log_likelihood_ratio"] > 10
    assert f"[{named}]" in report["reason"]


def test_a_mistake_outside_the_catalogue_fails_without_a_name():
    """One acceptance draw reused for the whole session: fails, and no catalogued law fits."""
    report = grade_samples({"config": TOY, "samples": draw_samples(TOY, "one-draw")})
    assert not report["passed"] and report["mistake"]["named"] is None
    assert "No catalogued mistake explains the samples" in report["reason"]


def test_no_bonus_keeps_the_targets_law_and_passes():
    """Forgetting the bonus costs speed, not exactness: the next block proposes that token instead."""
    report = grade_samples({"config": TOY, "samples": draw_samples(TOY, "no-bonus")})
    assert report["passed"]


def test_mistakes_whose_law_is_not_stated_are_left_out_with_a_reason():
    laws, why = mistake_laws(parse_config({**TOY, "seed": 0}))
    ids = {m.id for m, _ in laws}
    assert {"resample-from-p", "argmax-proposals-tested-as-samples", "bonus-past-limit", "inverted-ratio"} <= ids
    assert "interleaved-draws" not in ids and why is None
    assert mistake_laws(parse_config({**TOY, "seed": 0}), has_draft=False)[1].startswith("no draft")


# ---------------------------------------------------------------- only what matters (item 6)


def test_draft_seed_and_counters_are_optional():
    config = {"target": "toy", "limit": 8}
    report = grade_samples({"config": config, "samples": draw_samples({**TOY}, n=500)})
    assert report["passed"] and report["acceptance"] is None


def test_the_acceptance_rate_only_when_asked_with_its_schedule():
    report = grade_samples({"config": TOY, "samples": [["A"] * 8] * 10,
                            "counters": {"accepted": 40, "draft_steps": 60}})
    assert report["acceptance"]["observed_rate"] == pytest.approx(40 / 60)
    assert report["acceptance"]["schedule"].startswith("k = min(width, limit - L)")
    with pytest.raises(InvalidInput) as error:
        grade_samples({"config": {"target": "toy"}, "samples": [["A"] * 8],
                       "counters": {"accepted": 1, "draft_steps": 2}})
    assert [f.path for f in error.value.faults] == [("config", "draft")]


def test_passed_false_always_carries_a_reason():
    for samples in ([["A"]], [["A"] * 8], [["A"] * 9] * 50):
        report = grade_samples({"config": TOY, "samples": samples})
        assert not report["passed"] and report["reason"]


def test_malformed_samples_are_a_422_naming_the_field():
    with pytest.raises(InvalidInput) as error:
        grade_samples({"config": TOY, "samples": [["A"] * 8, ["A", "Z"]]})
    assert [f.path for f in error.value.faults] == [("samples", 1, 1)]


def test_the_route(client):
    response = client.post("/v1/grade/samples", json={"config": TOY, "samples": draw_samples(TOY, n=300)})
    assert response.status_code == 200
    body = response.get_json()
    assert body["passed"] and body["samples"] == 300
    response = client.post("/v1/grade/samples", json={"config": TOY, "samples": [["A", 3]]})
    assert response.status_code == 422


@pytest.mark.slow
def test_false_fail_rate_of_a_correct_sampler():
    """200 independent runs of the correct sampler at N = 2000 on the toy config: the family-wise
    error rate is at most alpha (Holm). At alpha = 0.05, the failures are Binomial(200, <= 0.05):
    at most 20 (P(X > 20) < 0.002 for a true rate of 0.05). Measured: docs/grading.md."""
    failures = sum(not grade_samples({"config": TOY, "samples": draw_samples(TOY, seed=1000 + run), "alpha": 0.05})["passed"]
                   for run in range(200))
    assert failures <= 20
