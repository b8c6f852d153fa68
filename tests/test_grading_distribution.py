"""Distribution-level grading against the exact target distribution (fixed seeds, stated thresholds)."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, strategies as st

from specdec_service.engine import InvalidInput, parse_config, pointer, run
from specdec_service.grading import BY_ID, MAX_SAMPLES, faulty_run, grade_distribution, prefix_distribution
from specdec_service.grading.distribution import chi_square, expected_acceptance, vecmat

CONFIG = {"draft": "biased", "seed": 0, "limit": 4}
N = 3000  # "a few thousand samples"


def sampled(faults=None, n=N, **settings):
    outputs, accepted, steps = [], 0, 0
    for seed in range(n):
        config = parse_config({**CONFIG, **settings, "seed": seed})
        trace = run(config) if faults is None else faulty_run(config, faults)
        outputs.append(trace["output"])
        accepted += trace["counters"]["accepted"]
        steps += trace["counters"]["draft_steps"]
    return outputs, {"accepted": accepted, "draft_steps": steps}


@pytest.fixture(scope="module")
def correct():
    return sampled()


@pytest.fixture(scope="module")
def from_p():
    return sampled(BY_ID["resample-from-p"].rules)


def test_exact_distribution_of_the_first_two_tokens():
    cells = prefix_distribution(parse_config(CONFIG), 2)
    assert len(cells) == 9
    assert cells[(0, 1)] == pytest.approx(0.5 * 0.6, abs=1e-15)       # A then B
    assert cells[(2, 2)] == pytest.approx(0.2 * 0.5, abs=1e-15)       # C then C
    assert sum(cells.values()) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("m", [1, 2, 3, 4])
def test_correct_sampler_passes(correct, m):
    outputs, counters = correct
    result = grade_distribution({"config": CONFIG, "m": m, "samples": outputs, "counters": counters})
    assert result["passed"] and result["p_value"] > 0.001
    assert result["samples"] == N
    if m < 4:
        assert result["dof"] == 3**m - 1 and result["pooled_cells"] is None
    else:  # B B B x expects 3000 * .3 * .15 * .15 * x < 5: such cells are pooled into one
        assert result["tested_cells"] < 81 and result["dof"] == result["tested_cells"]
    assert result["total_variation"] < 0.08  # sampling noise: 81 cells, 3000 samples give about 0.066


@pytest.mark.parametrize("m", [1, 2, 3, 4])
def test_resample_from_p_fails(from_p, m):
    outputs, _ = from_p
    result = grade_distribution({"config": CONFIG, "m": m, "samples": outputs})
    assert not result["passed"] and result["p_value"] < 1e-10
    assert result["total_variation"] > 0.12  # 0.148 (m = 1) to 0.247 (m = 4)
    # sampling the correction from p over-represents A, which the biased draft already over-proposes
    assert result["over_represented"][0]["prefix"][0] == "A"


def test_counts_give_the_same_verdict_as_samples(correct):
    outputs, _ = correct
    counts = {}
    for out in outputs:
        counts[tuple(out[:2])] = counts.get(tuple(out[:2]), 0) + 1
    by_counts = grade_distribution({"config": CONFIG, "m": 2,
                                    "counts": [{"prefix": list(k), "count": v} for k, v in counts.items()]})
    by_samples = grade_distribution({"config": CONFIG, "m": 2, "samples": outputs})
    assert by_counts == by_samples


def test_acceptance_rate_matches_its_exact_expectation(correct):
    outputs, counters = correct
    acceptance = grade_distribution({"config": CONFIG, "m": 1, "samples": outputs, "counters": counters})["acceptance"]
    # first position at the empty prefix: sum min(p, q) = min(.5,.8) + min(.3,.15) + min(.2,.05) = 0.7
    assert acceptance["first_position_rate"] == pytest.approx(0.7, abs=1e-15)
    # 3000 sessions of about 5 drafted tokens: the observed rate is within 0.02 of the expectation
    assert acceptance["observed_rate"] == pytest.approx(acceptance["expected_rate"], abs=0.02)


def test_expected_acceptance_with_the_aligned_draft_is_one():
    expected = expected_acceptance(parse_config({"draft": "aligned", "seed": 0, "limit": 8, "width": 3}))
    assert expected["rate"] == pytest.approx(1.0, abs=1e-12)
    # limit 8, width 3: two blocks of 3 accepted proposals and a bonus reach the limit
    assert expected["draft_steps"] == pytest.approx(3 + 3, abs=1e-12)


def test_expected_acceptance_is_within_1e_13_of_the_exact_analysis():
    # the golden custom pair (EOS, limit 12) and the toy pair: the float dynamic program against
    # the exact expectation of engine/analysis.py (issue 18: the old BLAS product gave
    # 0.7999999999999999 on Haswell and 0.8 on SkylakeX for the first; now one value everywhere)
    import json
    from pathlib import Path

    from specdec_service.engine.analysis import expectations, rules_for

    index = json.loads((Path(__file__).parent / "golden" / "index.json").read_text(encoding="utf-8"))
    for name in ("custom-eos-speculative-w1-s0", "custom-eos-speculative-w4-s0", "toy-biased-speculative-w5-s0"):
        config = parse_config(index[name])
        exact = expectations(rules_for(config), config.limit)
        got = expected_acceptance(config)
        assert got["rate"] == pytest.approx(float(exact["accepted"] / exact["draft_steps"]), rel=1e-13), name
        assert got["accepted"] == pytest.approx(float(exact["accepted"]), rel=1e-13), name


_FLOATS = st.floats(min_value=0.0, max_value=1.0, allow_subnormal=True)


@given(st.integers(1, 9).flatmap(lambda n: st.tuples(
    st.lists(_FLOATS, min_size=n, max_size=n),
    st.lists(st.lists(_FLOATS, min_size=3, max_size=3), min_size=n, max_size=n))))
def test_vecmat_is_the_sequential_python_sum_bit_for_bit(case):
    # the order vecmat promises: ((u0*M0j + u1*M1j) + u2*M2j) + ..., each operation one IEEE 754
    # rounding, whatever the CPU (a BLAS u @ M is free to block and fuse)
    u, rows = case
    got = vecmat(np.array(u), np.array(rows)).tolist()
    want = []
    for j in range(3):
        total = u[0] * rows[0][j]
        for i in range(1, len(u)):
            total = total + u[i] * rows[i][j]
        want.append(total)
    assert [x.hex() for x in got] == [x.hex() for x in want]


@pytest.mark.parametrize("observed, expected", [
    ([20, 0, 0], [12.0, 5.0, 3.0]),
    ([7, 9, 4, 10], [7.5, 7.5, 7.5, 7.5]),
    ([1000, 1, 3], [990.5, 8.25, 5.25]),
    ([3, 2], [2.5000001, 2.4999999]),
])
def test_chi_square_equals_scipy_within_1e_12(observed, expected):
    from scipy.stats import chisquare

    statistic, p_value = chi_square(observed, expected)
    reference = chisquare(observed, np.array(expected) * (sum(observed) / sum(expected)))
    assert statistic == pytest.approx(float(reference.statistic), rel=1e-12)
    assert p_value == pytest.approx(float(reference.pvalue), rel=1e-12)
    assert type(statistic) is float and type(p_value) is float
    assert chi_square([0, 0], [1.0, 1.0]) == (0.0, 1.0)


def test_eos_cells_are_shorter_and_impossible_prefixes_fail():
    model = {"vocab": ["a", "b", "$"], "start": [0.5, 0.5, 0], "next": {"a": [0, 0.5, 0.5], "b": [0.5, 0, 0.5], "$": [1, 0, 0]}}
    config = {"target": model, "draft": model, "seed": 0, "eos": "$", "limit": 6}
    cells = prefix_distribution(parse_config(config), 3)
    assert cells[(0, 2)] == pytest.approx(0.25) and (0, 0) not in cells and len(cells) == 6
    samples = [["a", "$"]] * 25 + [["b", "$"]] * 25 + [["a", "b", "a"]] * 13 + [["a", "b", "$"]] * 12 \
        + [["b", "a", "b"]] * 13 + [["b", "a", "$"]] * 12
    assert grade_distribution({"config": config, "m": 3, "samples": samples})["passed"]
    result = grade_distribution({"config": config, "m": 3, "samples": samples + [["a", "a", "b"]]})
    assert not result["passed"] and result["impossible"] == [{"prefix": ["a", "a", "b"], "observed": 1}]


def test_large_vocabulary_pools_rare_cells_and_bounds_the_work():
    vocab = [f"t{i}" for i in range(64)]
    row = [Fraction(1, 64)] * 64
    model = {"vocab": vocab, "start": [float(x) for x in row], "next": {v: [float(x) for x in row] for v in vocab}}
    config = {"target": model, "draft": model, "seed": 0}
    counts = [{"prefix": [vocab[i % 64], vocab[(i * 7) % 64], vocab[(i * 13) % 64], vocab[i // 64 % 64]], "count": 1}
              for i in range(4096)]
    result = grade_distribution({"config": config, "m": 4, "counts": counts})
    # 64^4 cells of expectation 4096 / 16.7M each: none reaches 5, so all are pooled into one cell
    assert result["tested_cells"] == 0 and result["dof"] == 0 and result["cells"] == 4096
    assert result["total_variation"] == pytest.approx(1 - 4096 / 64**4, abs=1e-9)


@pytest.mark.parametrize("payload, where", [
    ({"config": CONFIG, "m": 5, "samples": [["A"]]}, "#/m"),
    ({"config": {**CONFIG, "width": 99}, "m": 1, "samples": [["A"]]}, "#/config/width"),
    ({"config": {**CONFIG, "mode": "greedy"}, "m": 1, "samples": [["A"]]}, "#/config/mode"),
    ({"config": CONFIG, "m": 2, "samples": [["A", "B"], ["A", "Z"]]}, "#/samples/1/1"),
    ({"config": CONFIG, "m": 2, "samples": [["A"]]}, "#/samples/0"),
    ({"config": CONFIG, "m": 1}, "#/samples"),
    ({"config": CONFIG, "m": 1, "samples": [["A"]], "counts": []}, "#/samples"),
    ({"config": CONFIG, "m": 1, "counts": [{"prefix": ["A"], "count": MAX_SAMPLES + 1}]}, "#/counts/0/count"),
    ({"config": CONFIG, "m": 1, "counts": [{"prefix": ["A"], "count": MAX_SAMPLES},
                                           {"prefix": ["B"], "count": 1}]}, "#/counts"),
    ({"config": CONFIG, "m": 1, "counts": [{"prefix": ["A"], "count": 1}, {"prefix": ["A"], "count": 1}]}, "#/counts/1/prefix"),
    ({"config": CONFIG, "m": 1, "samples": [["A"]], "counters": {"accepted": 2, "draft_steps": 1}}, "#/counters/accepted"),
    ({"config": CONFIG, "m": 1, "samples": [["A"]], "alpha": 1.5}, "#/alpha"),
])
def test_invalid_input_points_at_the_field(payload, where):
    with pytest.raises(InvalidInput) as error:
        grade_distribution(payload)
    assert pointer(error.value.faults[0].path) == where


def test_too_few_samples_are_inconclusive_not_a_pass():
    result = grade_distribution({"config": CONFIG, "m": 4, "samples": [["A", "B", "A", "B"]] * 10})
    assert result["dof"] == 0 and result["conclusive"] is False and result["passed"] is False


def test_every_failure_carries_a_reason_and_a_pass_none():
    result = grade_distribution({"config": CONFIG, "m": 4, "samples": [["A", "B", "A", "B"]] * 10})
    assert result["reason"].startswith("Inconclusive: too few samples")
    result = grade_distribution({"config": CONFIG, "m": 1, "samples": [["A"] * 4] * 100})
    assert result["reason"] == ("The first 1 tokens deviate from the target: chi-square 100 with 2 dof, "
                                f"p = {result['p_value']:.3g} <= alpha = 0.001.")


def test_outputs_past_the_limit_fail_whatever_their_first_tokens(correct):
    """Issue 20: a sampler that overshoots the limit passed the first-m test. One token too many
    on a tenth of the correct outputs (limit 4, their first m tokens unchanged) now fails."""
    outputs, _ = correct
    longer = [o + ["A"] if i % 10 == 0 else o for i, o in enumerate(outputs)]
    for m in (1, 4):
        assert grade_distribution({"config": CONFIG, "m": m, "samples": outputs})["too_long"] == 0
        result = grade_distribution({"config": CONFIG, "m": m, "samples": longer})
        assert result["p_value"] > 0.001 and result["too_long"] == 300 and not result["passed"]
        assert result["reason"].startswith("300 of 3000 samples are longer than a session can be")


def test_a_target_with_one_possible_prefix_is_conclusive():
    model = {"vocab": ["a", "b"], "start": [1, 0], "next": {"a": [1, 0], "b": [0, 1]}}
    config = {"target": model, "draft": model, "seed": 0, "limit": 3}
    result = grade_distribution({"config": config, "m": 2, "samples": [["a", "a", "a"]] * 10})
    assert result["conclusive"] and result["passed"] and result["dof"] == 0
    assert not grade_distribution({"config": config, "m": 2, "samples": [["a", "b", "b"]] * 10})["passed"]


@pytest.mark.parametrize("m, n, pooled, expected", [
    (1, 2, "only cell", 2.0),                                  # nothing expects 5 samples
    (2, 80, "own cell", 11.6),                                 # the pool expects >= 5: tested as a cell
    (2, 100, "merged into the smallest tested cell", 4.5),     # the pool expects < 5
    (1, 300, None, 0.0),                                       # every cell tested one by one
])
def test_pooled_cells_says_how_the_pool_entered_the_test(m, n, pooled, expected):
    """The cells of the toy target with draft biased (P(A) = 1/2, P(AB) = 0.3, ...): every
    cell expecting fewer than 5 of n samples is pooled; the report says how the pool was tested
    (values of grading.distribution.POOLED, the contract's enum) and how many samples it expects."""
    import collections

    from specdec_service.grading.distribution import POOLED

    counts = collections.Counter(tuple(run(parse_config({"draft": "biased", "seed": s, "limit": m}))["output"])
                                 for s in range(n))
    result = grade_distribution({"config": {"draft": "biased", "seed": 0}, "m": m,
                                 "counts": [{"prefix": list(k), "count": v} for k, v in counts.items()]})
    assert result["pooled_cells"] == pooled and (pooled is None or pooled in POOLED)
    assert result["pooled_expected"] == pytest.approx(expected, abs=0.05)
    assert result["conclusive"] is (pooled != "only cell")


# ---------------------------------------------------------------- the samples read in C-speed passes (issue 18)

from hypothesis import settings  # noqa: E402

from specdec_service.grading.distribution import _count_each, _count_samples  # noqa: E402

_EOS_CONFIG = parse_config({"draft": "biased", "seed": 0, "eos": "C", "limit": 3})
_PLAIN_CONFIG = parse_config({"draft": "biased", "seed": 0, "limit": 3})
_SAMPLE_ENTRY = st.one_of(
    st.sampled_from(["A", "B", "C", "D", "Z", "", 1, None, ["A"], {"a": 1}, True]),
    st.lists(st.sampled_from(["A", "B", "C", "D", "Z", 1, ["A"]]), max_size=5),
)


def _outcome(count, samples, config, length):
    """The cells in the order they first appear with their counts, or the fault raised."""
    vocab = {label: i for i, label in enumerate(config.vocab)}
    try:
        return list(count(samples, config, vocab, length).items())
    except InvalidInput as error:
        return ("refused", str(error), [pointer(f.path) for f in getattr(error, "faults", [])])


@settings(max_examples=2000)
@given(st.lists(st.lists(st.sampled_from(["A", "B", "C", "D"]), min_size=1, max_size=5), max_size=30),
       st.lists(st.tuples(st.integers(0, 40), _SAMPLE_ENTRY), max_size=3),
       st.booleans(), st.integers(1, 4))
def test_samples_are_counted_and_refused_as_one_by_one(good, faults, eos, length):
    """``_count_samples`` (C-speed passes, the first misfit checked in full) counts the same
    cells in the same order, and refuses with the same fault, as the one-sample-at-a-time loop."""
    samples = list(good)
    for at, entry in faults:
        samples.insert(min(at, len(samples)), entry)
    config = _EOS_CONFIG if eos else _PLAIN_CONFIG
    assert _outcome(_count_samples, samples, config, length) == _outcome(_count_each, samples, config, length)
