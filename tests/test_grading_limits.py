"""What a trace cannot tell apart (docs/grading.md, "What a trace cannot tell apart"), and the
documentation's quotes of grading messages."""

import json
import re
from dataclasses import dataclass
from pathlib import Path

from specdec_service.engine import parse_config, run
from specdec_service.engine.distributions import Dist, accepts
from specdec_service.engine.draws import Draw
from specdec_service.engine.decoders import RatioTest
from specdec_service.grading import BY_ID, faulty_run, grade
from specdec_service.grading.faulty import SPECULATIVE, swapped
from specdec_service.grading.suites import suite

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class AtMostRatioTest(RatioTest):
    """The student's variant: accept iff u <= p(x) / q(x) (SPEC 4.2 says u < p(x) / q(x))."""

    name: str = "ratio-at-most"

    def accepts(self, d, p, q, x) -> bool:
        # u <= p/q  <=>  not (p/q < u)  <=>  u * q(x) < p(x) or u * q(x) == p(x), exactly
        equal = d.mantissa * q.weights[x] * p.total == p.weights[x] * q.total * 2**53
        return accepts(d, p, q, x) or equal


def test_the_two_tests_differ_only_when_the_draw_equals_the_ratio():
    p, q = Dist.of_weights((1, 1)), Dist.of_weights((1, 0))  # ratio p(0) / q(0) = 1/2
    at_half = Draw(0, 2**52, 0)                               # u = 1/2 exactly
    assert not RatioTest().accepts(at_half, p, q, 0) and AtMostRatioTest().accepts(at_half, p, q, 0)
    for mantissa in (2**52 - 1, 2**52 + 1):
        d = Draw(0, mantissa, 0)
        assert RatioTest().accepts(d, p, q, 0) == AtMostRatioTest().accepts(d, p, q, 0)


def test_u_at_most_ratio_writes_the_same_traces_over_the_full_suite():
    at_most = swapped(SPECULATIVE, acceptance=AtMostRatioTest())
    # the full suite: since mode tree joined the search, the standard one holds 2 speculative configs
    configs = [parse_config(c.config) for c in suite("full").configs if c.config["mode"] == "speculative"]
    assert len(configs) >= 3
    for config in configs:
        assert faulty_run(config, at_most) == run(config)
        for seed in range(50):  # and over other seeds of the same settings
            other = parse_config({**config.to_json(), "seed": seed})
            assert faulty_run(other, at_most) == run(other)


def test_seed_1_biased_never_draws_a_bonus_so_no_bonus_passes_it():
    config = parse_config({"draft": "biased", "seed": 1})
    reference = run(config)
    assert reference["counters"]["bonus_tokens"] == 0
    assert [b["no_bonus"] for b in reference["blocks"]] == ["rejection", "rejection", "rejection", "limit"]
    no_bonus = json.loads(json.dumps(faulty_run(config, BY_ID["no-bonus"].faults)))
    assert grade(no_bonus)["passed"] is True
    # another setting catches it: the aligned draft, seed 1, draws bonus tokens
    other = parse_config(BY_ID["no-bonus"].example)
    assert run(other)["counters"]["bonus_tokens"] > 0
    assert grade(json.loads(json.dumps(faulty_run(other, BY_ID["no-bonus"].faults))))["passed"] is False


def test_the_malformed_row_quoted_in_grading_md_is_the_real_message():
    line = next(line for line in (ROOT / "docs" / "grading.md").read_text(encoding="utf-8").splitlines()
                if line.startswith("bad.json ") and "malformed" in line)
    quoted = re.split(r"malformed\s+-\s+", line)[1]
    trace = json.loads(json.dumps(run(parse_config({"draft": "biased", "seed": 1}))))
    trace["blocks"][0]["position"] = "x"
    from specdec_service.engine import InvalidInput

    try:
        grade(trace)
    except InvalidInput as error:
        (fault,) = error.faults
        assert quoted == f"#/blocks/0/position: {fault.message}"
    else:
        raise AssertionError("a trace with position 'x' must be refused")
