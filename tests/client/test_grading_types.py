"""The SDK's grading methods return typed records (frozen dataclasses that
keep the JSON), read through the real service's answers."""

import dataclasses

import pytest

from specdec_client import (
    Check, DistributionReport, FirstDivergence, GradeBatch, GradeReport, Suite, SuiteSummary,
)
from specdec_service.engine import parse_config
from specdec_service.grading import BY_ID, faulty_run

from .service_backend import run_body

GOOD = run_body({"draft": "biased", "seed": 1, "limit": 4})


def faulty(mistake_id: str) -> dict:
    mistake = BY_ID[mistake_id]
    return faulty_run(parse_config(mistake.example), mistake.rules)


def test_a_correct_trace_grades_as_a_typed_report(client, service):
    report = client.grade(GOOD)
    assert isinstance(report, GradeReport)
    assert report.passed is True and report.score == 1.0 and report.first_divergence is None
    assert report.tolerance == 1e-9 and report.diagnosis == ()
    assert all(isinstance(c, Check) and c.passed and c.first_failure is None for c in report.checks)
    assert report.reference.output == tuple(GOOD["output"]) and report.reference.position == GOOD["position"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.passed = False


def test_a_faulty_trace_names_its_divergence_and_mistake(client, service):
    mistake = BY_ID["resample-from-p"]
    report = client.grade(faulty("resample-from-p"))
    assert report.passed is False and 0 <= report.score < 1
    assert isinstance(report.first_divergence, FirstDivergence)
    assert report.first_divergence.path == mistake.example_divergence
    assert [d.id for d in report.diagnosis] == ["resample-from-p"]
    failed = [c for c in report.checks if not c.passed]
    assert failed and all(c.first_failure is not None for c in failed)
    # backward compatible: the JSON reads as before (the raw values)
    assert report["passed"] is False and report.get("diagnosis")[0]["id"] == "resample-from-p"
    assert report.to_dict()["first_divergence"]["path"] == mistake.example_divergence


def test_a_batch_is_typed_in_request_order(client, service):
    batch = client.grade_many([GOOD, faulty("no-bonus"), GOOD])
    assert isinstance(batch, GradeBatch)
    assert [r.passed for r in batch.reports] == [True, False, True]
    assert (batch.summary.count, batch.summary.passed, batch.summary.failed) == (3, 2, 1)


def test_a_distribution_grade_is_typed(client, service):
    counts = [{"prefix": ["A"], "count": 497}, {"prefix": ["B"], "count": 305}, {"prefix": ["C"], "count": 198}]
    report = client.grade_distribution(config={"draft": "biased", "seed": 0}, m=1, counts=counts,
                                       counters={"accepted": 1500, "draft_steps": 2700})
    assert isinstance(report, DistributionReport)
    assert report.samples == 1000 and report.m == 1 and report.impossible == ()
    assert report.passed is True and report.alpha == 0.001 and report.p_value > report.alpha
    assert report.statistic == pytest.approx(0.121333, abs=1e-6) and report.dof == 2
    assert report.acceptance.accepted == 1500 and report.acceptance.observed_rate == pytest.approx(1500 / 2700)


def test_suites_are_typed(client, service):
    summaries = client.suites()
    assert [s.name for s in summaries] == ["quick", "standard", "full", "sampling", "block", "tree", "all"]
    assert all(isinstance(s, SuiteSummary) and s.count > 0 for s in summaries)
    quick = client.suite("quick")
    assert isinstance(quick, Suite) and quick.name == "quick"
    assert len(quick.configs) == summaries[0].count
    assert all(c.config.draft and c.exercises for c in quick.configs)
