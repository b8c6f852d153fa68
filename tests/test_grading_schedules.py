"""Mistakes named whatever the block schedule (grading/laws.py ``SCHEDULES``), the closest law
shown as a guess when none fits, and public implementations (re-implemented from their
descriptions in tests/students/public_impls.py) graded as ``--python`` functions under their own
schedules. A correct sampler's output has the target's law under every schedule; a mistake's
law depends on it. Statistical tests: N = 2000 samples, fixed seeds, alpha = 0.001."""

import random
import sys
from pathlib import Path

import pytest
from specdec_client import Client
from specdec_service.engine import parse_config
from specdec_service.grading import grade_samples
from specdec_service.grading.laws import SCHEDULES, block_shape
from specdec_service.grading.samples import mistake_laws
from students import planted
from test_grading_samples import SAMPLER_MODULE
from test_grading_samples_cli import BASE, service  # noqa: F401  (the fixture)

sys.path.insert(0, str(Path(__file__).resolve().parent / "students"))
import public_impls  # noqa: E402

N = 2000
ALPHA = 0.001
SPEC_TOY = {"target": "toy", "draft": "biased", "mode": "speculative", "width": 3, "limit": 8, "eos": None, "seed": 0}
BLOCK_TOY = {**SPEC_TOY, "mode": "block"}


def _samples(raw: dict, mistake: str, schedule: str, seed: int = 7) -> list:
    target, draft = SAMPLER_MODULE.model_of(raw["target"]), SAMPLER_MODULE.model_of(raw["draft"])
    rng = random.Random(seed)
    decode = planted.block_decode if raw["mode"] == "block" else planted.speculative_decode
    return [decode(target, draft, raw["width"], raw["limit"], raw["eos"], rng, mistake, schedule) for _ in range(N)]


def test_the_schedules_shape_blocks_as_real_code_does():
    """toy, width 3, limit 8: SPEC clips k at the limit with no bonus there; Hugging Face keeps one
    token for the target; llama.cpp samples the first token from the target."""
    assert [block_shape("spec", 3, 8, n) for n in (0, 5, 6, 7)] == [(3, True), (3, False), (2, False), (1, False)]
    assert [block_shape("last-from-target", 3, 8, n) for n in (0, 4, 5, 7)] == [(3, True), (3, True), (2, True), (0, True)]
    assert [block_shape("target-first", 3, 8, n) for n in (0, 1, 5)] == [(0, True), (3, True), (3, False)]
    assert set(SCHEDULES) == {"spec", "last-from-target", "target-first"}


@pytest.mark.parametrize("schedule", list(SCHEDULES))
@pytest.mark.parametrize("raw", [SPEC_TOY, BLOCK_TOY], ids=["speculative", "block"])
def test_a_correct_sampler_passes_under_every_schedule(raw, schedule):
    assert grade_samples({"config": raw, "samples": _samples(raw, "", schedule, seed=8)})["passed"]


@pytest.mark.parametrize("raw, mistake, schedule", [
    (SPEC_TOY, "resample-from-p", "spec"),
    (SPEC_TOY, "resample-from-p", "last-from-target"),
    (SPEC_TOY, "resample-from-p", "target-first"),
    (SPEC_TOY, "argmax-proposals-tested-as-samples", "target-first"),
    (BLOCK_TOY, "block-cumprod-acceptance", "last-from-target"),
    (BLOCK_TOY, "block-thresholds-row-early", "target-first"),
], ids=lambda x: x if isinstance(x, str) else x["mode"])
def test_a_planted_mistake_is_named_under_its_own_schedule(raw, mistake, schedule):
    report = grade_samples({"config": raw, "samples": _samples(raw, mistake, schedule)})
    assert not report["passed"]
    named = report["mistake"]["named"]
    assert named is not None, report["reason"]
    assert (named["id"], named["schedule"]) == (mistake, schedule), report["mistake"]["candidates"]
    assert named["fits"] and named["p_value"] > ALPHA and named["schedule_rule"] == SCHEDULES[schedule]
    assert f"under the schedule {schedule}" in report["mistake"]["reason"] and report["mistake"]["closest"] is None


def _correction_from_draft(target, draft, width, limit, eos, rng):
    """A mistake outside the catalogue: the correction sampled from the draft row q."""
    vocab, out = target.vocab, []
    while len(out) < limit:
        proposal = []
        for _ in range(min(width, limit - len(out))):
            proposal.append(vocab[planted.pick(draft(out + proposal), rng.random())])
        for label in proposal:
            p, q, x = target(out), draft(out), vocab.index(label)
            if rng.random() < p[x] / q[x]:
                out.append(label)
                continue
            out.append(vocab[planted.pick(q, rng.random())])
            break
        else:
            if len(out) < limit:
                out.append(vocab[planted.pick(target(out), rng.random())])
    return out


def test_when_no_law_fits_the_closest_is_shown_as_a_guess():
    """The correction drawn from q is no catalogued mistake: nothing is named; the most likely law
    more likely than the target's is shown with its evidence, marked as a guess, in the JSON and
    in the reason."""
    target, draft = SAMPLER_MODULE.model_of("toy"), SAMPLER_MODULE.model_of("biased")
    rng = random.Random(7)
    samples = [_correction_from_draft(target, draft, 3, 8, None, rng) for _ in range(N)]
    report = grade_samples({"config": SPEC_TOY, "samples": samples})
    mistake = report["mistake"]
    assert not report["passed"] and mistake["named"] is None
    closest = mistake["closest"]
    assert closest is not None and closest["guess"] is True and not closest["fits"]
    assert closest["log_likelihood_ratio"] > 0 and closest["id"] == mistake["candidates"][0]["id"]
    assert f"the closest law is {closest['id']}'s" in report["reason"] and "a guess, not a diagnosis" in report["reason"]


def test_a_law_equal_to_the_targets_is_never_a_candidate():
    """block-unscaled-residual on toy/biased: w_tau < 1 never reshapes the residual there, its law
    is the target's (log-likelihood ratio 0), so it is left out of the laws, the candidates and
    the closest, under every schedule."""
    laws, why = mistake_laws(parse_config(BLOCK_TOY))
    ids = {m.id for m, _ in laws}
    assert why is None and "block-unscaled-residual" not in ids
    assert {"block-first-failing-eta", "block-cumprod-acceptance", "block-thresholds-row-early"} <= ids
    report = grade_samples({"config": BLOCK_TOY, "samples": _samples(BLOCK_TOY, "block-first-failing-eta", "spec")})
    shown = [c["id"] for c in report["mistake"]["candidates"]]
    assert "block-unscaled-residual" not in shown and report["mistake"]["named"]["id"] == "block-first-failing-eta"


PUBLIC = [
    ("hf-speculative-sampling", public_impls.hf_speculative_sampling, SPEC_TOY, None),
    ("llama.cpp-speculative", public_impls.llamacpp_speculative, SPEC_TOY,
     ("argmax-proposals-tested-as-samples", "target-first")),
    ("mlx-lm-speculative", public_impls.mlx_lm_speculative, SPEC_TOY, None),
    ("sglang-target-only", public_impls.sglang_target_only, SPEC_TOY, None),
    ("eagle2-evaluate-posterior", public_impls.eagle2_evaluate_posterior, SPEC_TOY, None),
    ("vllm-ascend-magicmtp-v1", public_impls.vllm_ascend_magicmtp_v1, BLOCK_TOY, ("block-cumprod-acceptance", "spec")),
    ("vllm-ascend-magicmtp", public_impls.vllm_ascend_magicmtp, BLOCK_TOY, ("block-cumprod-scaled-residual", "spec")),
    ("vllm-ascend-pr7808", public_impls.vllm_ascend_pr7808, BLOCK_TOY, ("block-thresholds-row-early", "spec")),
]


@pytest.mark.parametrize("name, fn, config, expected", PUBLIC, ids=[p[0] for p in PUBLIC])
def test_public_implementations_wrapped_as_functions_are_named_right(service, name, fn, config, expected):  # noqa: F811
    """Each public decoder, graded as a ``--python`` function (``Client.grade_sampler``, N = 2000):
    the correct ones pass, the others fail with their mistake named under their own schedule."""
    [test] = Client(BASE).grade_sampler(fn, configs=[(name, config)], samples=N)
    if expected is None:
        assert test.passed, test.message()
        return
    assert not test.passed
    named = test.report["mistake"]["named"]
    assert named is not None, test.message()
    assert (named["id"], named["schedule"]) == expected
    assert f"[{expected[0]}]" in test.message()


def test_hf_with_the_correction_from_p_is_named_under_its_schedule(service, monkeypatch):  # noqa: F811
    """The case that went unnamed under SPEC's schedule alone: Hugging Face's schedule with the
    correction planted from p is named resample-from-p under last-from-target."""
    monkeypatch.setattr(public_impls, "PLANT_FROM_P", True)
    [test] = Client(BASE).grade_sampler(public_impls.hf_speculative_sampling, configs=[("hf", SPEC_TOY)], samples=N)
    named = test.report["mistake"]["named"]
    assert not test.passed and (named["id"], named["schedule"]) == ("resample-from-p", "last-from-target")


def test_the_commands_mistake_column_shows_the_schedule_and_the_guess():
    """``specdec grade --samples``: the MISTAKE cell names a non-SPEC schedule, or marks the closest
    law as a guess (the reports of the tests above, in their JSON form)."""
    from specdec_client.sampling_cli import mistake_cell
    hf = {"mistake": {"named": {"id": "resample-from-p", "schedule": "last-from-target"}, "closest": None}}
    spec = {"mistake": {"named": {"id": "resample-from-p", "schedule": "spec"}, "closest": None}}
    guess = {"mistake": {"named": None, "closest": {"id": "inverted-ratio", "schedule": "spec", "guess": True}}}
    assert mistake_cell(hf) == "resample-from-p (schedule last-from-target)"
    assert mistake_cell(spec) == "resample-from-p"
    assert mistake_cell(guess) == "closest: inverted-ratio (a guess)"
    assert mistake_cell({}) == ""


ONE_HOT = {"vocab": ["A", "B", "C"], "start": [1, 0, 0],
           "next": {"A": [0, 1, 0], "B": [0, 0, 1], "C": [1, 0, 0]}}
"""A deterministic draft (each row a point mass): its samples are its argmax tokens with q(x) = 1,
the proposals EAGLE-2's verifier is written for."""


@pytest.mark.parametrize("plant", [False, True], ids=["correct", "p-not-zeroed"])
def test_eagle2_on_a_deterministic_draft_passes_and_its_planted_mistake_is_named(service, monkeypatch, plant):  # noqa: F811
    """EAGLE-2's evaluate_posterior on the config it expresses exactly (a deterministic draft,
    width 3, limit 8): it passes; with the line that zeroes p(x) after a rejection forgotten, the
    correction comes from p, named resample-from-p under its schedule (the target samples the
    first token: target-first)."""
    monkeypatch.setattr(public_impls, "PLANT_EAGLE_KEEPS_P", plant)
    config = {**SPEC_TOY, "draft": ONE_HOT}
    [test] = Client(BASE).grade_sampler(public_impls.eagle2_evaluate_posterior, configs=[("eagle2", config)], samples=N)
    assert test.passed is not plant, test.message()
    if plant:
        named = test.report["mistake"]["named"]
        assert named is not None, test.message()
        assert (named["id"], named["schedule"]) == ("resample-from-p", "target-first")
