"""The rules of a block (engine/decoders.py: a proposal rule and a verifier per mode): the exact
distributions they induce, and the decoders of the three modes."""

from fractions import Fraction

from hypothesis import given, strategies as st

from specdec_service.engine import AUTOREGRESSIVE, BIASED, GREEDY, MODE_RULES, MODES, SPECULATIVE, TOY
from specdec_service.engine.distributions import Dist
from specdec_service.engine.decoders import point_mass
from specdec_service.grading import faulty


def exact(d: Dist) -> list[Fraction]:
    return [d.probability(i) for i in range(len(d.weights))]


def test_each_mode_has_its_rule_set():
    assert set(MODE_RULES) == set(MODES)
    assert all(rules.mode == mode for mode, rules in MODE_RULES.items())
    spec, greedy = SPECULATIVE.verifier, GREEDY.verifier
    assert (SPECULATIVE.proposal.name, spec.name, spec.acceptance.name, spec.correction.name) == (
        "sampled", "token-wise", "ratio", "residual")
    assert (GREEDY.proposal.name, greedy.name, greedy.acceptance.name, greedy.bonus.name) == (
        "argmax", "greedy", "target-argmax", "argmax")
    assert AUTOREGRESSIVE.verifier == SPECULATIVE.verifier  # autoregressive drafts nothing
    assert AUTOREGRESSIVE.proposal.drafts is False and AUTOREGRESSIVE.proposal.room(None, 0) == 0


def test_speculative_rules_give_the_worked_example_exactly():
    """SPEC section 4: after A, p = toy (0.2, 0.6, 0.2), q = biased (0.8, 0.15, 0.05)."""
    p, q = TOY.after(0), BIASED.after(0)
    verifier = SPECULATIVE.verifier
    assert exact(verifier.correction_law(p, q)) == [0, Fraction(3, 4), Fraction(1, 4)]
    assert verifier.acceptance_probability(p, q, 0) == Fraction(1, 4)  # min(1, 0.2/0.8)
    assert verifier.acceptance_probability(TOY.start, BIASED.start, 0) == Fraction(5, 8)
    assert verifier.acceptance_probability(p, q, 1) == 1  # p >= q: always accepted
    assert SPECULATIVE.proposal.distribution(q) == q
    assert verifier.bonus_law(p, q) == p
    # at the empty prefix the correction is [0, 0.5, 0.5] exactly (SPEC section 4)
    assert exact(verifier.correction_law(TOY.start, BIASED.start)) == [0, Fraction(1, 2), Fraction(1, 2)]


def test_greedy_rules_are_point_masses():
    p, q = TOY.after(0), BIASED.after(0)  # target argmax B, draft argmax A
    verifier = GREEDY.verifier
    assert GREEDY.proposal.distribution(q) == point_mass(3, 0)
    assert verifier.acceptance_probability(p, q, 0) == 0 and verifier.acceptance_probability(p, q, 1) == 1
    assert verifier.correction_law(p, q) == point_mass(3, 1)
    assert verifier.bonus_law(p, q) == point_mass(3, 1)


rows = st.lists(st.integers(0, 20), min_size=2, max_size=6).filter(any)


@given(rows, rows)
def test_the_speculative_rules_induce_exactly_the_target(pw, qw):
    """Leviathan et al. 2023, theorem 1: q(y) min(1, p(y)/q(y)) + P(reject) r(y) = p(y), exact."""
    size = min(len(pw), len(qw))
    if not any(pw[:size]) or not any(qw[:size]):
        return
    p, q = Dist.of_weights(pw[:size]), Dist.of_weights(qw[:size])
    rules = SPECULATIVE
    law = rules.proposal.distribution(q)
    accept = [law.probability(x) * rules.verifier.acceptance_probability(p, q, x) if q.weights[x] else Fraction(0)
              for x in range(size)]
    reject = 1 - sum(accept)
    if reject == 0:
        assert p == q
        return
    r = rules.verifier.correction_law(p, q)
    assert [accept[y] + reject * r.probability(y) for y in range(size)] == exact(p)


def test_a_mistaken_rule_states_its_own_law():
    p, q = TOY.after(0), BIASED.after(0)
    assert faulty.TargetRowCorrection().distribution(p, q) == p
    # max(p - q, 0) = (0, 0.45, 0.15): the missing 0.4 falls through to the last token
    assert exact(faulty.UnnormalisedResidual().distribution(p, q)) == [0, Fraction(9, 20), Fraction(11, 20)]
    assert faulty.InvertedRatio().probability(p, q, 0) == 1  # min(1, 0.8/0.2)
    assert faulty.BonusFromDraft().distribution(p, q) == q
