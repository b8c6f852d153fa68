"""The catalogue of mistakes: each example fails where documented and is diagnosed as itself."""

import json
import re
from pathlib import Path

import pytest

from draw_seeds import seeds_with_draw
from specdec_service.engine import parse_config, run
from specdec_service.grading import CATALOGUE, faulty_run, grade

ROOT = Path(__file__).resolve().parents[1]
IDS = [m.id for m in CATALOGUE]
INDEX = json.loads((ROOT / "tests" / "golden" / "index.json").read_text(encoding="utf-8"))


def test_catalogue_has_at_least_ten_distinct_kebab_case_entries():
    assert len(CATALOGUE) >= 10
    assert len(set(IDS)) == len(IDS)
    for m in CATALOGUE:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", m.id)
        assert m.title and m.hint and re.match(r"SPEC sections? \d", m.rule)


@pytest.mark.parametrize("mistake", CATALOGUE, ids=IDS)
def test_example_fails_at_the_documented_divergence_and_is_diagnosed(mistake):
    trace = json.loads(json.dumps(faulty_run(parse_config(mistake.example), mistake.rules)))
    report = grade(trace)
    assert report["passed"] is False
    assert report["first_divergence"]["path"] == mistake.example_divergence
    exact = [d["id"] for d in report["diagnosis"] if d["exact"]]
    assert mistake.id in exact
    entry = next(d for d in report["diagnosis"] if d["id"] == mistake.id)
    assert entry["hint"] == mistake.hint and entry["rule"] == mistake.rule
    assert 0 < report["score"] < 1


@pytest.mark.parametrize("mistake", CATALOGUE, ids=IDS)
def test_mistake_is_diagnosed_on_every_golden_setting_where_it_shows(mistake):
    """Over the golden configs of the mistake's mode and its example. The golden models have no
    tied most probable tokens, so the greedy tie-break shows on its example alone."""
    shown = 0
    names = [n for n, c in sorted(INDEX.items()) if c.get("mode", "speculative") == mistake.mode]
    configs = {name: INDEX[name] for name in names} | {"example": mistake.example}
    if mistake.mode == "block":  # no golden config is of mode block: the speculative ones in mode block,
        # and the example's settings at 60 seeds (the unscaled residual shows only where w_tau < 1 reshapes it)
        configs |= {f"{name}-as-block": {**c, "mode": "block"} for name, c in sorted(INDEX.items())
                    if c.get("mode", "speculative") == "speculative"}
        configs |= {f"example-s{seed}": {**mistake.example, "seed": seed} for seed in range(60)}
    if "sampling" in mistake.example:  # no golden trace sets sampling (SPEC 9): the example's settings at
        # other seeds, and with the other sampling parameters of the catalogue's examples
        others = [m.example["sampling"] for m in CATALOGUE if "sampling" in m.example]
        configs |= {f"example-s{seed}-{i}": {**mistake.example, "seed": seed, "sampling": sampling}
                    for seed in range(2, 8) for i, sampling in enumerate(others)}
    if mistake.mode == "tree":  # no golden trace is in mode tree: the example's model at other seeds and D
        configs |= {f"tree-s{seed}-d{d}": {**mistake.example, "seed": seed, "drafts": d}
                    for seed in range(1, 7) for d in (2, 3)}
    if mistake.id == "tree-inclusive-coin-test":  # it shows only where a draw is u = 0 or u * t = acc_j:
        # the seeds constructed to draw u = 0 at a root's test (even positions, width 1) and u = 1/2 on the toy
        configs |= {f"u0-at-{n}": {**mistake.example, "seed": seed} for n in (4,) for seed in seeds_with_draw(n)}
        configs |= {f"toy-half-{seed}": {**mistake.example, "target": "toy", "draft": "biased", "seed": seed}
                    for seed in seeds_with_draw(0, 2**52)}
    for name, settings in configs.items():
        config = parse_config(settings)
        try:
            trace = faulty_run(config, mistake.rules)
        except ValueError:
            continue
        if trace == run(config):
            continue
        shown += 1
        report = grade(json.loads(json.dumps(trace)))
        assert not report["passed"]
        assert mistake.id in [d["id"] for d in report["diagnosis"] if d["exact"]], name
    assert shown >= (1 if mistake.id == "greedy-ties-to-last" else 3)


def test_only_the_bonus_mistake_keeps_nine_tenths_of_the_credit():
    mistake = next(m for m in CATALOGUE if m.id == "no-bonus")
    report = grade(faulty_run(parse_config(mistake.example), mistake.rules))
    assert report["score"] == 0.9
    assert [c["name"] for c in report["checks"] if not c["passed"]] == ["bonus"]


def test_docs_document_every_entry_with_its_example_and_divergence():
    text = (ROOT / "docs" / "grading.md").read_text(encoding="utf-8")
    for m in CATALOGUE:
        assert f"`{m.id}`" in text, m.id
        assert m.example_divergence in text, m.id
        assert json.dumps(m.example, separators=(", ", ": ")) in text, m.id


EXPECTED_FAILING_CHECKS = {
    "resample-from-p": ["correction"],
    "residual-not-clipped": ["correction"],
    "residual-not-normalised": ["correction"],
    "keep-after-rejection": ["discard", "output"],
    "draft-from-discarded": ["proposal"],
    "no-bonus": ["bonus"],
    "bonus-past-limit": ["bonus", "output"],
    "bonus-from-draft": ["bonus"],
    "inverted-ratio": ["acceptance"],
    "skip-draw-when-p-ge-q": ["acceptance"],
    "interleaved-draws": ["position", "proposal", "acceptance"],
    "greedy-acceptance": ["acceptance", "correction"],
    "accepted-counts-all-tests": ["acceptance", "counters"],
    "reused-rejection-draw": ["position", "correction", "counters"],
    "argmax-proposals-tested-as-samples": ["proposal", "acceptance"],
    "committed-and-discarded": ["output"],
    "greedy-ties-to-last": ["proposal"],
    "greedy-accepts-draft-argmax": ["acceptance"],
    "greedy-bonus-from-draft": ["bonus"],
    "autoregressive-from-draft": ["bonus"],
    "autoregressive-skipped-draw": ["position", "bonus", "counters"],
    "block-runs-token-wise": ["acceptance", "correction"],
    "block-first-failing-eta": ["acceptance"],
    "block-unscaled-residual": ["correction"],
    "block-cumprod-acceptance": ["acceptance", "correction", "bonus"],
    "block-cumprod-scaled-residual": ["acceptance", "correction", "bonus"],
    "block-thresholds-row-early": ["acceptance"],
    "sampling-target-left-raw": ["acceptance", "correction"],
    "sampling-raw-q-in-ratio": ["acceptance"],
    "sampling-top-p-float-test": ["acceptance", "correction"],
    "tree-residual-not-updated": ["acceptance"],
    "tree-tested-against-draft-row": ["acceptance"],
    "tree-disagreeing-chains-continue": ["acceptance"],
    "tree-shared-draws": ["position", "proposal", "acceptance", "counters"],
    "tree-bonus-while-a-chain-goes-on": ["acceptance", "bonus"],
    "tree-distinct-tested-against-q": ["acceptance"],
    "tree-distinct-residual-not-updated": ["acceptance"],
    "tree-repeated-child-tested-twice": ["acceptance"],
    "tree-inclusive-coin-test": ["acceptance"],
}


@pytest.mark.parametrize("mistake", CATALOGUE, ids=IDS)
def test_example_fails_exactly_the_checks_of_its_rule(mistake):
    report = grade(json.loads(json.dumps(faulty_run(parse_config(mistake.example), mistake.rules))))
    failing = [c["name"] for c in report["checks"] if not c["passed"]]
    assert failing == EXPECTED_FAILING_CHECKS[mistake.id]
    assert report["score"] == pytest.approx(1 - len(failing) / 10)
    assert report["first_divergence"]["check"] in failing
