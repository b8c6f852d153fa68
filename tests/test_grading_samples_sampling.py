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
