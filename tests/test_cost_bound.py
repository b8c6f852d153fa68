"""The cost bound is sound: the engine's own count of its exact arithmetic (engine.work, bit
operations) never exceeds the estimate the service makes before any of it (budget.config_work),
across modes, sampling settings, vocabularies and number sizes (rows of decimals of 1 to 17
significant digits, exponents down to the smallest float64 a row entry may be), and in mode tree
every SPEC 12 tree setting (each shape x verifier, branching lists, thresholds)."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import HealthCheck, assume, given, settings, strategies as st

from specdec_service.budget import config_work, power_work
from specdec_service.engine import InvalidInput, parse_config, run
from specdec_service.engine.tree_settings import SHAPES, VERIFIERS
from specdec_service.engine.sampling import power
from specdec_service.engine.work import counting
from fractions import Fraction

MODES = ("speculative", "greedy", "autoregressive", "block", "tree")
TEMPERATURES = ("0", "0.05", "0.07", "0.15", "0.3", "0.5", "0.6", "0.7", "0.95", "1", "1.5", "2.5", "7", "19.9", "20")


@st.composite
def decimal_row(draw, size: int) -> list:
    """A row of ``size`` float64s summing to 1 within the models' tolerance: ``size - 1`` entries
    of ``digits`` significant digits, either tiny (10^exponent, down to the smallest float64:
    the mass sits on one entry) or of order 1/100, and the rest on one entry."""
    digits = draw(st.integers(1, 17))
    tiny = draw(st.booleans())
    exponent = draw(st.integers(-323, -12)) if tiny else -2
    entries = []
    for _ in range(size - 1):
        mantissa = draw(st.integers(10 ** (digits - 1), 10 ** digits - 1))
        entries.append(float(f"{mantissa}e{exponent - digits + 1}"))
    first = 1 - sum(entries)
    position = draw(st.integers(0, size - 1))
    return entries[:position] + [first] + entries[position:]


@st.composite
def models(draw, size: int) -> dict:
    vocab = [f"t{i}" for i in range(size)]
    return {"vocab": vocab, "start": draw(decimal_row(size)), "next": {label: draw(decimal_row(size)) for label in vocab}}


@st.composite
def tree_settings(draw, depth: int) -> dict:
    """A SPEC 12 ``tree`` setting: any shape x verifier (beam verifies target_only), a branching
    list for shape distinct (1 to 8 per depth, up to one entry past ``depth``), thresholds for
    target_only (as decimals written, 0 < t <= 1)."""
    shape = draw(st.sampled_from(SHAPES))
    verify = "target_only" if shape == "beam" else draw(st.sampled_from(VERIFIERS))
    tree: dict = {"shape": shape, "verify": verify}
    if shape == "distinct" and draw(st.booleans()):
        tree["branching"] = draw(st.lists(st.integers(1, 8), min_size=1, max_size=depth + 1))
    if verify == "target_only":
        for key in ("threshold_single", "threshold_acc"):
            if draw(st.booleans()):
                tree[key] = Decimal(draw(st.sampled_from(("0.001", "0.1", "0.3", "0.5", "0.9", "1"))))
    return tree


@st.composite
def configs(draw, modes: tuple = MODES) -> dict:
    size = draw(st.integers(2, 8))
    mode = draw(st.sampled_from(modes))
    config = {"target": draw(models(size)), "draft": draw(models(size)), "mode": mode, "seed": draw(st.integers(0, 2**53 - 1)),
              "width": draw(st.integers(1, 6)), "limit": draw(st.integers(1, 6))}
    if mode == "tree":
        config["drafts"] = draw(st.integers(1, 8))
        if draw(st.booleans()):
            config["tree"] = draw(tree_settings(min(config["width"], config["limit"])))
    sampling = {}
    if draw(st.booleans()):
        sampling["temperature"] = Decimal(draw(st.sampled_from(TEMPERATURES)))
    if draw(st.booleans()):
        sampling["top_k"] = draw(st.integers(1, size))
    if draw(st.booleans()):
        sampling["top_p"] = Decimal(draw(st.sampled_from(("0.3", "0.9", "1"))))
    if draw(st.booleans()):
        sampling["min_p"] = Decimal(draw(st.sampled_from(("0", "0.01", "0.5"))))
    if sampling and draw(st.booleans()):
        sampling["draft"] = "raw"
    if sampling:
        config["sampling"] = sampling
    return config


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(configs())
def test_a_run_counts_at_most_its_estimate(body):
    assert_within_estimate(body)


def assert_within_estimate(body: dict) -> None:
    """The engine's count of running ``body``'s config is at most the service's estimate (a
    config the engine refuses, a distinct tree of more nodes than SPEC 12 allows, is skipped)."""
    try:
        config = parse_config(body)
    except InvalidInput:
        assume(False)
    estimate = config_work(config, config.limit)
    with counting() as work:
        run(config)
    assert work.units <= estimate


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(configs(("tree",)))
def test_a_tree_run_counts_at_most_its_estimate(body):
    """Mode tree alone, half of the configs with a SPEC 12 ``tree`` setting."""
    assert_within_estimate(body)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 10**17 - 1), st.integers(-340, 0), st.integers(1, 17), st.sampled_from(TEMPERATURES[1:]))
def test_a_power_counts_at_most_its_estimate(mantissa, exponent, digits, temperature):
    p = Fraction(Decimal(mantissa % 10**digits or 1).scaleb(exponent - digits))
    if p >= 1:
        p = 1 / (p + 1)
    exponent_ = 1 / Fraction(temperature)
    with counting() as work:
        power(p, exponent_)
    assert work.units <= power_work(p.numerator.bit_length(), p.denominator.bit_length(), exponent_)


def test_the_counter_counts_nothing_when_not_measuring():
    config = parse_config({"target": "toy", "draft": "biased", "seed": 1, "sampling": {"temperature": 0.7}})
    with counting() as work:
        pass
    run(config)
    assert work.units == 0
