"""The golden reference traces of tests/golden/: still the engine's output, and graded as passed."""

import json
from pathlib import Path

import pytest

from specdec_service.engine import parse_config, run
from specdec_service.grading import grade, grade_many

GOLDEN = Path(__file__).resolve().parent / "golden"
INDEX = json.loads((GOLDEN / "index.json").read_text(encoding="utf-8"))


def load(name: str) -> dict:
    return json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))


def test_matrix_covers_drafts_widths_seeds_modes_and_eos():
    configs = list(INDEX.values())
    assert len(configs) == 66  # 67 files with index.json
    assert {c["draft"] for c in configs if isinstance(c["draft"], str)} == {"aligned", "biased"}
    assert {c.get("width") for c in configs if c.get("mode", "speculative") == "speculative"} == {1, 2, 3, 4, 5}
    assert {c.get("mode", "speculative") for c in configs} == {"speculative", "greedy", "autoregressive"}
    assert {c["seed"] for c in configs} == {0, 1, 2}
    custom = [name for name, c in INDEX.items() if c.get("eos")]
    assert custom and all(load(name)["done"] in ("eos", "limit") for name in custom)
    assert sum(load(name)["done"] == "eos" for name in custom) >= 10  # the EOS really ends sessions


@pytest.mark.parametrize("name", sorted(INDEX))
def test_golden_trace_is_a_fresh_engine_run_and_passes(name):
    trace = load(name)
    assert trace == run(parse_config(INDEX[name]))
    report = grade(trace)
    assert report["passed"] is True
    assert report["score"] == 1.0
    assert report["first_divergence"] is None and report["diagnosis"] == []
    assert all(check["passed"] for check in report["checks"])


def test_spec_worked_example_is_golden():
    trace = load("toy-biased-speculative-w3-s1")
    block = trace["blocks"][0]
    assert block["proposal"]["tokens"] == ["A", "A", "C"]
    assert block["committed"] == ["A", "C"] and block["next_position"] == 6
    assert block["correction"]["distribution"] == [0.0, 0.75, 0.25]


def test_every_golden_trace_grades_in_one_batch():
    names = sorted(INDEX)
    result = grade_many([load(name) for name in names])
    assert result["summary"] == {"count": len(names), "passed": len(names), "failed": 0, "mean_score": 1.0}


def test_golden_files_are_up_to_date():
    from golden.make_golden import main  # noqa: PLC0415  (tests/ is on sys.path under pytest rootdir)

    assert main(["--check"]) == 0


@pytest.mark.parametrize("name", sorted(INDEX))
def test_every_check_holds_on_golden_traces_when_evaluated_in_full(name):
    # grade() skips the checks when the trace equals the reference; evaluate them anyway
    from specdec_service.grading.checks import evaluate

    results = evaluate(load(name), parse_config(INDEX[name]))
    assert [r.name for r in results if not r.passed] == []
