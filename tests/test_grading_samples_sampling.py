"""Sample grading with sampling parameters (SPEC 9, issue 20 item 3): with ``config.sampling``
the target's law is p' (the processed rows), so a correct sampler processes the rows (target
and draft) before speculative sampling, and one that forgets to fails, with a reason. Fixed
seeds, N = 2000, alpha 0.001."""

import random

import pytest
from specdec_service.engine import InvalidInput, parse_config
from specdec_service.grading import grade_samples
from specdec_service.grading.samples import target_law

from students import planted
from test_grading_samples import SAMPLER_MODULE

SAMPLING = {"temperature": 0.5, "top_k": 2}
"""SPEC 9's worked example without its top_p (float code and exact code agree away from a
boundary): p' at the empty prefix is [25/34, 9/34, 0]."""
CONFIG = {"target": "toy", "draft": "biased", "mode": "speculative", "width": 3, "limit": 8, "eos": None,
          "sampling": SAMPLING}
N = 2000


def _has_sampling() -> bool:
    try:
        parse_config({**CONFIG, "seed": 0})
    except InvalidInput:
        return False
    return True


pytestmark = pytest.mark.skipif(not _has_sampling(), reason="the config has no sampling setting on this branch")


def _samples(target_processed: bool, draft_processed: bool = True, seed: int = 7) -> list:
    target, draft = SAMPLER_MODULE.model_of("toy"), SAMPLER_MODULE.model_of("biased")
    if target_processed:
        target = planted.Processed(target, SAMPLING)
    if draft_processed:
        draft = planted.Processed(draft, SAMPLING)
    rng = random.Random(seed)
    return [planted.speculative_decode(target, draft, 3, 8, None, rng) for _ in range(N)]


def test_the_target_law_is_the_processed_rows():
    law = target_law(parse_config({**CONFIG, "seed": 0}))
    assert law((0, None)) == pytest.approx({0: 25 / 34, 1: 9 / 34}, abs=1e-15)


def test_a_sampler_that_processes_the_rows_passes():
    report = grade_samples({"config": CONFIG, "samples": _samples(True)})
    assert report["passed"], report["reason"]


def test_a_sampler_with_the_raw_draft_passes_too():
    """``sampling.draft: "raw"`` or not, the output is p' (SPEC 9); here the draft is raw."""
    report = grade_samples({"config": {**CONFIG, "sampling": {**SAMPLING, "draft": "raw"}},
                            "samples": _samples(True, draft_processed=False)})
    assert report["passed"], report["reason"]


def test_a_sampler_that_forgets_the_processing_fails_with_a_reason():
    report = grade_samples({"config": CONFIG, "samples": _samples(False, draft_processed=False)})
    assert not report["passed"]
    assert report["reason"].startswith("Impossible under the target: token 'C'")  # top_k 2 removes C at the start


def test_a_sampler_that_leaves_the_target_unprocessed_fails():
    report = grade_samples({"config": CONFIG, "samples": _samples(False, draft_processed=True)})
    assert not report["passed"] and report["reason"]


def test_distribution_grading_uses_the_processed_target_too():
    from specdec_service.grading import grade_distribution
    config = {**CONFIG, "seed": 0}  # distribution grading requires the seed
    good = grade_distribution({"config": config, "m": 2, "samples": _samples(True)})
    bad = grade_distribution({"config": config, "m": 2, "samples": _samples(False, draft_processed=False)})
    assert good["passed"] and not bad["passed"]


def test_a_mistake_is_named_from_its_law_over_the_processed_rows():
    """Keeping the proposals after a rejection, with processed rows (p' and q'): its exact law is
    computed from the processed rows (laws.decoding_rows), and it is named (N = 2000, seed 7)."""
    target = planted.Processed(SAMPLER_MODULE.model_of("toy"), SAMPLING)
    draft = planted.Processed(SAMPLER_MODULE.model_of("biased"), SAMPLING)
    rng = random.Random(7)
    samples = [planted.speculative_decode(target, draft, 3, 8, None, rng, "keep-after-rejection") for _ in range(N)]
    report = grade_samples({"config": CONFIG, "samples": samples})
    assert not report["passed"]
    assert report["mistake"]["named"]["id"] == "keep-after-rejection", report["reason"]


def test_the_routes_take_sampling(client):
    body = {"config": CONFIG, "samples": _samples(True)[:500]}
    response = client.post("/v1/grade/samples", json=body)
    assert response.status_code == 200 and response.get_json()["passed"]
    response = client.post("/v1/grade/distribution", json={**body, "config": {**CONFIG, "seed": 0}, "m": 2})
    assert response.status_code == 200 and response.get_json()["passed"]


SAMPLING_MISTAKES = [
    ("sampling-target-left-raw", SAMPLING),
    ("sampling-raw-q-in-ratio", SAMPLING),
    ("sampling-top-p-float-test", {"top_p": 0.8}),
]
"""SPEC 9's three catalogued mistakes, each with settings where its law differs from p'."""


def _faulty_outputs(raw: dict, mistake: str, seeds: range) -> list:
    from specdec_service.grading.catalogue import BY_ID
    from specdec_service.grading.faulty import faulty_run
    rules = BY_ID[mistake].rules
    return [faulty_run(parse_config({**raw, "seed": seed}), rules)["output"] for seed in seeds]


@pytest.mark.parametrize("mistake, settings", SAMPLING_MISTAKES, ids=[m for m, _ in SAMPLING_MISTAKES])
def test_each_sampling_mistake_has_an_exact_law_that_fits_its_decoder(mistake, settings):
    """The law sample grading states for each SPEC 9 mistake (its rows through the correct block,
    grading/laws.py) fits the engine's own faulty decoder: 600 traces, seeds 0..599, Holm family
    at alpha 0.001; and it differs from p' by more than 0.01 somewhere."""
    from specdec_service.grading.catalogue import BY_ID
    from specdec_service.grading.samples import _law_computable, _law_of, family_test, transition_counts
    raw = {**CONFIG, "sampling": settings}
    config = parse_config({**raw, "seed": 0})
    assert _law_computable(BY_ID[mistake]) is None
    law = _law_of(config, BY_ID[mistake], [10**6])
    outputs = [tuple(config.vocab.index(t) for t in out) for out in _faulty_outputs(raw, mistake, range(600))]
    fit = family_test(transition_counts(outputs), lambda row: law.get(row, {-1: 1.0}))
    assert not fit["impossible"] and fit["p_value"] > 0.001, fit["p_value"]
    target = target_law(config)
    assert max(abs(p - target(row).get(y, 0.0)) for row, cell in law.items() for y, p in cell.items()) > 0.01


@pytest.mark.parametrize("mistake, settings", SAMPLING_MISTAKES, ids=[m for m, _ in SAMPLING_MISTAKES])
def test_each_sampling_mistake_is_named_from_samples(mistake, settings):
    """The faulty decoder's whole sessions (seeds 0..1999) as samples: the grade fails and names
    the mistake."""
    raw = {**CONFIG, "sampling": settings}
    report = grade_samples({"config": raw, "samples": _faulty_outputs(raw, mistake, range(N))})
    assert not report["passed"]
    named = report["mistake"]["named"]
    assert named is not None and named["id"] == mistake, report["reason"]


def test_a_sampler_leaving_the_target_raw_is_named():
    """A student's own sampler (random.Random, seed 7) with the target raw and the draft processed:
    named sampling-target-left-raw (vLLM PR #10198)."""
    report = grade_samples({"config": CONFIG, "samples": _samples(False, draft_processed=True)})
    assert not report["passed"]
    assert report["mistake"]["named"]["id"] == "sampling-target-left-raw", report["reason"]
