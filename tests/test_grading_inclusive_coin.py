"""The catalogued inclusive coin test (sglang#35771): ``u * threshold_acc <= acc_j`` without
p(y_j) > 0. It differs from SPEC 12.4 only on single values of u (u = 0 with a first child of
target probability 0; u * threshold_acc = acc_j), so its traces show it only at a seed whose draw
is such a value: SplitMix64's finaliser is a bijection, so such seeds are constructed
(tests/draw_seeds.py), and its exact law is the discrete one (u = m * 2^-53)."""

import json
from fractions import Fraction

from hypothesis import given, strategies as st

from draw_seeds import MASK, seeds_with_draw, unmix
from specdec_service.engine import parse_config, run
from specdec_service.engine.draws import draw, raw_value
from specdec_service.engine.verifiers.tree_target_only import TargetOnlyNode
from specdec_service.grading import BY_ID, faulty_run, grade
from specdec_service.grading.catalogue import U_ZERO_SEED
from specdec_service.grading.faulty_tree import InclusiveCoinTest
from specdec_service.grading.tree_laws import discrete_node_law, first_token_tv

MISTAKE = BY_ID["tree-inclusive-coin-test"]
TWO_53 = 2**53


def _mix(z):
    """SPEC 2's finaliser alone: raw_value of seed z - gamma at draw 0."""
    return raw_value((z - 0x9E3779B97F4A7C15) & MASK, 0)


@given(st.integers(min_value=0, max_value=MASK))
def test_unmix_inverts_splitmix64s_finaliser(v):
    assert _mix(unmix(v)) == v


def test_the_catalogued_seed_draws_exactly_zero_at_position_2():
    assert seeds_with_draw(2) == [U_ZERO_SEED]
    d = draw(U_ZERO_SEED, 2)
    assert d.u == 0.0 and d.mantissa == 0 and d.hex == "0000000000000319"
    assert MISTAKE.example["seed"] == U_ZERO_SEED


def test_constructed_seeds_draw_the_value_asked_for():
    for position in range(12):
        for mantissa in (0, 2**52):
            for seed in seeds_with_draw(position, mantissa):
                assert 0 <= seed < TWO_53 and draw(seed, position).mantissa == mantissa


def test_the_example_commits_a_token_the_target_never_gives_and_is_named_alone():
    cfg = parse_config(MISTAKE.example)
    wrong = json.loads(json.dumps(faulty_run(cfg, MISTAKE.rules)))
    assert "C" not in run(cfg)["output"] and wrong["output"][1] == "C"
    test = wrong["blocks"][1]["verification"][0]
    assert (test["token"], test["p_token"], test["u_acc"], test["acc"], test["accepted"]) == ("C", 0.0, 0.0, 0.0, True)
    report = grade(wrong)
    assert [c["name"] for c in report["checks"] if not c["passed"]] == ["acceptance"]
    assert report["first_divergence"]["path"] == "#/blocks/1/verification/0/accepted"
    assert report["first_divergence"]["rule"].startswith("SPEC sections 12.2 and 12.4")
    assert [d["id"] for d in report["diagnosis"] if d["exact"]] == ["tree-inclusive-coin-test"]


def test_exact_law_is_2_to_the_minus_53_from_the_target_on_the_first_token():
    """The example's root: p = [1/2, 1/2, 0], children C (p 0) then A. With u = m * 2^-53 the
    correct rule commits A for m < 2^52, else the correction B: exactly p. The inclusive one
    commits C at m = 0 and A up to m = 2^52 included: C gains 2^-53, B loses it."""
    p = [Fraction(1, 2), Fraction(1, 2), Fraction(0)]
    right = discrete_node_law(TargetOnlyNode(), p, [2, 0])
    wrong = discrete_node_law(InclusiveCoinTest(), p, [2, 0])
    assert right == {0: Fraction(1, 2), 1: Fraction(1, 2)}
    assert wrong == {2: Fraction(1, TWO_53), 0: Fraction(1, 2), 1: Fraction(1, 2) - Fraction(1, TWO_53)}
    tv = sum(abs(right.get(y, 0) - wrong.get(y, 0)) for y in range(3)) / 2
    assert tv == Fraction(1, TWO_53)
    # the continuous enumeration cannot see it: the correct rule is lossless there, and so is this one
    assert first_token_tv(parse_config(MISTAKE.example)) == 0


def test_the_built_in_toy_shows_it_at_a_constructed_u_of_one_half():
    """At the toy's root a beam of 2 offers A (p 1/2) then B: at u = 1/2 exactly, u < acc_1 = 1/2
    fails (B is accepted) and u <= 1/2 holds (A is). Draw 0 of this seed is u = 1/2."""
    seed = seeds_with_draw(0, 2**52)[0]
    settings = {**MISTAKE.example, "target": "toy", "draft": "biased", "seed": seed}
    cfg = parse_config(settings)
    wrong = json.loads(json.dumps(faulty_run(cfg, MISTAKE.rules)))
    assert (run(cfg)["output"][0], wrong["output"][0]) == ("B", "A")
    assert "tree-inclusive-coin-test" in [d["id"] for d in grade(wrong)["diagnosis"] if d["exact"]]
    p = [Fraction(1, 2), Fraction(3, 10), Fraction(1, 5)]
    right, inclusive = discrete_node_law(TargetOnlyNode(), p, [0, 1]), discrete_node_law(InclusiveCoinTest(), p, [0, 1])
    assert inclusive[0] - right[0] == Fraction(1, TWO_53) == right[1] - inclusive[1]


def test_sessions_of_other_seeds_are_the_correct_rules_so_samples_cannot_tell():
    """Away from the constructed draws the two rules commit the same tokens: 300 sessions of
    seeds 0..299 are identical, so sample grading (a law test) cannot name the mistake."""
    for seed in range(300):
        cfg = parse_config({**MISTAKE.example, "seed": seed})
        assert faulty_run(cfg, MISTAKE.rules)["output"] == run(cfg)["output"]
