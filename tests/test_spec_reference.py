"""The second implementation (tests/spec_reference.py, written from docs/SPEC.md alone) against
SPEC's own figures, then against the service.

1. Every worked example and exact figure of SPEC sections 2, 4, 9, 10 and 11, asserted on the
   reference (expected values by exact enumeration over drafts and the draws' outcomes).
2. The service (``POST /v1/runs``) against the reference, one comparison function for every
   mode: output, final position, counters, and per block its position, committed tokens,
   counters, proposal and every draw used (role, position, u). ``SERVICE_MODES`` and
   ``SERVICE_SAMPLINGS`` list what the service decodes (every mode, every sampling setting of
   SPEC 9 tried, also on custom models); ``NOT_YET`` lists settings out of SPEC 9-11's bounds it
   must refuse with a 422 naming the field.
"""

from __future__ import annotations

import itertools
from fractions import Fraction as F

import pytest
from hypothesis import given, settings, strategies as st

import spec_reference as R
from specdec_service import create_app

A, B, C = 0, 1, 2


# ------------------------------------------------------------------ SPEC 2, 3

def test_section_2_test_vectors():
    assert [float(R.draw(0, n)) for n in range(4)] == [
        0.8833108082136426, 0.43152799704850997, 0.026433771592597743, 0.9708819781538285]
    assert [float(R.draw(1, n)) for n in range(4)] == [
        0.5665615751722809, 0.7457817572627011, 0.9710027535867962, 0.4443592170557721]
    assert f"{R.raw_value(1, 0):016x}" == "910a2dec89025cc1"


def test_section_3_sample_never_returns_a_zero_token():
    assert R.sample((F(0), F(1, 2), F(1, 2)), F(0)) == B
    assert R.sample((F(1, 2), F(0), F(1, 2)), F(1, 2)) == C


# ------------------------------------------------------------------ SPEC 4

def test_section_4_worked_example():
    block = R.run({"draft": "biased", "width": 3, "seed": 1}).blocks[0]
    assert block.proposal == [["A", "A", "C"]]
    assert [(role, n) for role, n, _ in block.draws] == [
        ("draft", 0), ("draft", 1), ("draft", 2), ("verify", 3), ("verify", 4), ("correction", 5)]
    assert round(float(block.draws[3][2]), 4) == 0.4444 and round(float(block.draws[4][2]), 4) == 0.4443
    assert round(float(block.draws[5][2]), 4) == 0.7629
    assert R.TOY.start[A] / R.BIASED.start[A] == F(5, 8)  # ratio 0.625
    assert R.TOY.next["A"][A] / R.BIASED.next["A"][A] == F(1, 4)
    assert R.residual(R.TOY.next["A"], R.BIASED.next["A"]) == (0, F(3, 4), F(1, 4))
    assert R.residual(R.TOY.start, R.BIASED.start) == (0, F(1, 2), F(1, 2))
    assert block.committed == ["A", "C"] and block.position + block.counters["draws"] == 6
    assert block.counters == dict(target_passes=1, draft_steps=3, accepted=1, rejected=1,
                                  discarded=1, bonus_tokens=0, committed=2, draws=6)


def test_section_4_aligned_commits_four_tokens_at_width_3():
    for seed in range(20):
        block = R.run({"draft": "aligned", "width": 3, "seed": seed}).blocks[0]
        assert len(block.committed) == 4 and block.counters["accepted"] == 3


def test_the_seed_experiment_whole_session():
    # docs/trace-format.md: output A C B A B A B B, 4 blocks, 21 draws.
    run = R.run({"draft": "biased", "seed": 1})
    assert (run.output, len(run.blocks), run.position) == (list("ACBABABB"), 4, 21)


# ------------------------------------------------------------------ SPEC 9

EXAMPLE_9 = {"temperature": 0.5, "top_k": 2, "top_p": 0.8}


def first_token_law(p, q):
    """The law of the first committed token when proposals come from ``q`` and the acceptance
    and residual use ``p`` against ``q`` (SPEC 4.2-4.3 at one context): q(y) min(1, p/q) plus
    the rejection mass times the residual."""
    accept = [min(b, a) for a, b in zip(p, q)]
    return tuple(x + (1 - sum(accept)) * r for x, r in zip(accept, R.residual(p, q)))


def total_variation(d, e):
    return sum(abs(x - y) for x, y in zip(d, e)) / 2


def test_section_9_processed_rows():
    rows = [R.processed(R.row_after(R.TOY, ctx), EXAMPLE_9) for ctx in ([], ["A"], ["B"], ["C"])]
    assert rows == [(F(25, 34), F(9, 34), 0), (0, 1, 0), (F(121, 157), 0, F(36, 157)), (F(1, 5), 0, F(4, 5))]
    assert R.processed(R.BIASED.start, EXAMPLE_9) == (1, 0, 0)  # q' at the empty prefix


def test_section_9_acceptance_and_the_two_faults():
    p_raw, q_raw = R.TOY.start, R.BIASED.start
    p, q = R.processed(p_raw, EXAMPLE_9), R.processed(q_raw, EXAMPLE_9)
    assert sum(min(a, b) for a, b in zip(p, q)) == F(25, 34)
    assert sum(min(a, b) for a, b in zip(p, q_raw)) == F(301, 340)
    assert first_token_law(p, q) == p and first_token_law(p, q_raw) == p  # both exact
    assert total_variation(first_token_law(p_raw, q), p) == F(4, 17)  # target left raw
    # ratio (and residual) with the raw q while the proposal was drawn from q' = [1, 0, 0]
    accept_a = min(F(1), p[A] / q_raw[A])
    fault = tuple(q[y] * (accept_a if y == A else 0) + (1 - accept_a) * r
                  for y, r in enumerate(R.residual(p, q_raw)))
    assert total_variation(fault, p) == F(25, 136)


def test_section_9_top_p_is_strict_and_top_k_keeps_ties():
    row = (F(1, 2), F(3, 10), F(1, 5))
    assert R.with_top_p(row, F(4, 5)) == (F(5, 8), F(3, 8), 0)
    assert R.with_top_k((F(2, 5), F(3, 10), F(3, 10)), 2) == (F(2, 5), F(3, 10), F(3, 10))
    assert R.with_min_p(row, F(1, 2)) == (F(5, 8), F(3, 8), 0)
    assert R.with_temperature(row, F(0)) == (1, 0, 0)


@pytest.mark.parametrize("t", ["0.3", "0.7", "1.5", "2.5", "3", "19.99", "0.05"])
def test_section_9_temperature_rounds_correctly(t):
    # float64 nearest the real p^(1/T): checked by bracketing with exact integer powers.
    e = 1 / F(t)
    for p in (F(1, 5), F(3, 10), F(11, 20), F(1, 3)):
        y = R.correctly_rounded_power(p, e)
        f = float(y)
        below, above = F(R.math.nextafter(f, 0)), F(R.math.nextafter(f, 1))
        low, high = (below + y) / 2, (y + above) / 2
        # low <= p^e <= high, compared exactly as powers: p^a vs m^b for e = a/b
        assert low ** e.denominator <= p ** e.numerator <= high ** e.denominator


@pytest.mark.parametrize("f", [0.75, 0.75 + 2**-53])
def test_section_9_temperature_ties_go_to_even(f):
    # p = m^2 for m exactly halfway between f and the next float64 up: T = 2 gives p^(1/2) = m.
    m = (F(f) + F(R.math.nextafter(f, 1))) / 2
    even = f if f == 0.75 else 0.75 + 2**-52  # 0.75 = 3 * 2^51 / 2^53 has an even significand
    assert R.correctly_rounded_power(m * m, F(1, 2)) == F(even)


def test_section_9_integer_powers_are_exact():
    assert R.with_temperature((F(1, 2), F(3, 10), F(1, 5)), F(1, 2)) == (F(25, 38), F(9, 38), F(4, 38))


# ------------------------------------------------------------------ SPEC 10

def drafts(width, draft=R.BIASED):
    """Every draft block of ``width`` from the empty prefix, with its probability."""
    for tokens in itertools.product(range(3), repeat=width):
        rows = [R.row_after(draft, [R.TOY_VOCAB[t] for t in tokens[:i]]) for i in range(width)]
        prob = F(1)
        for row, t in zip(rows, tokens):
            prob *= row[t]
        if prob:
            yield list(tokens), rows


def target_rows(tokens):
    return [R.row_after(R.TOY, [R.TOY_VOCAB[t] for t in tokens[:i]]) for i in range(len(tokens))]


def outcomes(chances):
    """Every pattern of Bernoulli outcomes (draw below its threshold or not) with its chance."""
    for pattern in itertools.product((True, False), repeat=len(chances)):
        prob = F(1)
        for hit, c in zip(pattern, chances):
            prob *= c if hit else 1 - c
        yield pattern, prob


def expected_accepted(width, block):
    """E[accepted proposals per block], toy/biased, empty prefix, no limit: token-wise (SPEC 4:
    the accepted prefix, each u_i below min(1, p/q)) or block (SPEC 10: tau, the last eta_i < h_i)."""
    total = F(0)
    for tokens, q_rows in drafts(width):
        p_rows = target_rows(tokens)
        prob = 1
        for q, t in zip(q_rows, tokens):
            prob *= q[t]
        if block:
            _, chances = R.weights_and_thresholds(p_rows, q_rows, tokens)
        else:
            chances = [min(F(1), p[t] / q[t]) for p, q, t in zip(p_rows, q_rows, tokens)]
        for pattern, chance in outcomes(chances):
            if block:
                accepted = max((i + 1 for i, hit in enumerate(pattern) if hit), default=0)
            else:
                accepted = next((i for i, hit in enumerate(pattern) if not hit), len(pattern))
            total += prob * chance * accepted
    return total


def test_section_10_worked_example():
    config = {"draft": "biased", "mode": "block", "width": 2, "seed": 4}
    block = R.run(config).blocks[0]
    assert block.proposal == [["A", "B"]]
    assert [round(float(u), 4) for _, _, u in block.draws[:2]] == [0.4315, 0.8924]
    p_rows, q_rows = target_rows([A, B]), [R.BIASED.start, R.BIASED.next["A"]]
    w, h = R.weights_and_thresholds(p_rows, q_rows, [A, B])
    assert w[1:] == [F(5, 8), 1] and h == [F(4, 9), 1]
    assert [(role, n, round(float(u), 4)) for role, n, u in block.draws[2:]] == [
        ("eta", 2, 0.8591), ("eta", 3, 0.4918), ("bonus", 4, 0.3946)]
    assert block.committed == ["A", "B", "A"] and block.position + block.counters["draws"] == 5
    assert block.counters["accepted"] == 2 and block.counters["bonus_tokens"] == 1
    tokenwise = R.run({**config, "mode": "speculative"}).blocks[0]
    assert tokenwise.committed == ["B"] and [u for *_, u in tokenwise.draws] == [u for *_, u in block.draws[:4]]


def test_section_10_expected_accepted_per_block():
    assert (expected_accepted(2, block=False), expected_accepted(2, block=True)) == (F(207, 200), F(219, 200))
    assert (expected_accepted(3, block=False), expected_accepted(3, block=True)) == (F(483, 400), F(1381, 1000))


# ------------------------------------------------------------------ SPEC 11

def expected_path(context, chains, alive):
    """E[accepted tokens] of SPEC 11.2 from ``context`` on: the alive chains' candidates at this
    depth tested in order against r (r = p, then max(r - q, 0) normalised), each accepted with
    chance min(1, r(y) / q(y)); ``chains`` hold the tokens left after ``context``."""
    candidates = [j for j in alive if chains[j]]
    if not candidates:
        return F(0)
    p, q = R.row_after(R.TOY, context), R.row_after(R.BIASED, context)
    r, reach, total = p, F(1), F(0)
    for j in candidates:
        y = chains[j][0]
        chance = min(F(1), r[y] / q[y])
        rest = {i: chains[i][1:] for i in candidates if chains[i][0] == y}
        total += reach * chance * (1 + expected_path(context + [R.TOY_VOCAB[y]], rest, list(rest)))
        reach *= 1 - chance
        if reach == 0:
            break
        r = R.residual(r, q)
    return total


def expected_committed_per_pass(width, n_drafts):
    """E[committed tokens per target pass], toy/biased, empty prefix, no limit: the accepted path
    plus one correction or bonus, over every tuple of D independently drafted chains."""
    total = F(0)
    for chains in itertools.product(list(drafts(width)), repeat=n_drafts):
        prob = F(1)
        for tokens, rows in chains:
            for row, t in zip(rows, tokens):
                prob *= row[t]
        tokens = {j: chain for j, (chain, _) in enumerate(chains)}
        total += prob * (1 + expected_path([], tokens, list(tokens)))
    return total


def test_section_11_worked_example():
    config = {"draft": "biased", "mode": "tree", "width": 2, "drafts": 2, "seed": 16}
    block = R.run(config).blocks[0]
    assert block.proposal == [["A", "A"], ["B", "A"]]
    assert [(role, n, round(float(u), 4)) for role, n, u in block.draws] == [
        ("draft", 0, 0.3667), ("draft", 1, 0.0795), ("draft", 2, 0.8484), ("draft", 3, 0.5908),
        ("verify", 4, 0.6439), ("verify", 5, 0.2307), ("verify", 6, 0.3737), ("bonus", 7, 0.0)]
    assert round(float(block.draws[7][2]), 5) == 0.00003
    assert R.residual(R.TOY.start, R.BIASED.start) == (0, F(1, 2), F(1, 2))
    assert block.committed == ["B", "A", "A"] and block.position + block.counters["draws"] == 8
    assert block.counters == dict(target_passes=1, draft_steps=4, accepted=2, rejected=1,
                                  discarded=1, bonus_tokens=1, committed=3, draws=8)
    assert R.run({**config, "mode": "speculative"}).blocks[0].committed == ["C"]


def test_section_11_expected_committed_per_pass():
    assert expected_committed_per_pass(2, 1) == F(407, 200)
    assert expected_committed_per_pass(2, 2) == F(349449, 160000)
    assert round(float(expected_committed_per_pass(2, 3)), 2) == 2.31


@pytest.mark.parametrize("draft", ["aligned", "biased"])
def test_section_11_one_draft_is_section_4_draw_for_draw(draft):
    for seed, width, limit in itertools.product(range(15), range(1, 6), (3, 8)):
        config = {"draft": draft, "seed": seed, "width": width, "limit": limit}
        tree, chain = R.run({**config, "mode": "tree", "drafts": 1}), R.run(config)
        assert (tree.output, tree.position, tree.counters) == (chain.output, chain.position, chain.counters)
        assert [b.draws for b in tree.blocks] == [b.draws for b in chain.blocks]


def test_section_9_sampling_reaches_every_rule():
    # SPEC 9: p' for the test, the residual and the bonus: with T = 0 and top_k 1 the target is
    # a point mass, so every mode commits the target's processed argmax path (toy: A B A B ...).
    for mode, draft in itertools.product(("speculative", "greedy", "autoregressive", "block", "tree"),
                                         ("aligned", "biased")):
        for sampling in ({"temperature": 0}, {"top_k": 1}, {"temperature": 0, "draft": "raw"}):
            run = R.run({"draft": draft, "mode": mode, "width": 3, "seed": 5, "drafts": 2,
                         "sampling": sampling})
            assert run.output == list("ABABABAB"), (mode, draft, sampling)


# ------------------------------------------------------------------ the service against the reference

SERVICE_MODES = ["speculative", "greedy", "autoregressive", "block", "tree"]
"""The modes ``POST /v1/runs`` decodes today (every mode of SPEC 4, 5, 10 and 11)."""

SAMPLINGS = [EXAMPLE_9, {"temperature": 0.7, "top_p": 0.9}, {"temperature": 2, "min_p": 0.2},
             {"temperature": 0, "draft": "raw"}, {"top_k": 1}, {"temperature": 1.3, "draft": "raw"}, {}]
"""SPEC 9 settings for the comparison ({}: nothing processed)."""

SERVICE_SAMPLINGS = [None, *SAMPLINGS]
"""The ``sampling`` settings (SPEC 9) the service is compared on (None: the setting left out)."""

NOT_YET = [
    # SPEC 11's setting out of its bounds (1-8, an integer): refused for good, not "not yet"
    ({"mode": "tree", "drafts": 0}, "#/config/drafts"),
    ({"mode": "tree", "drafts": 9}, "#/config/drafts"),
    ({"drafts": 1.5}, "#/config/drafts"),
    # SPEC 9's bounds: refused for good
    ({"sampling": {"temperature": 0.04}}, "#/config/sampling/temperature"),
    ({"sampling": {"top_k": 0}}, "#/config/sampling/top_k"),
    ({"sampling": {"top_p": 0}}, "#/config/sampling/top_p"),
    ({"sampling": {"min_p": 1.5}}, "#/config/sampling/min_p"),
    ({"sampling": {"draft": "both"}}, "#/config/sampling/draft"),
]
"""Settings of SPEC 8-11 the service refuses today, with the field its 422 names. When the
service takes one, ``test_the_service_still_refuses`` fails for it: move the mode to
``SERVICE_MODES`` or the sampling to ``SERVICE_SAMPLINGS`` (and extend ``trace_draws`` with the
trace fields the new mode records its draws in)."""

DRAW_FIELDS = {"draft": ("proposal", "steps"), "verify": ("verification",), "correction": ("correction",),
               "bonus": ("bonus",), "sample": ("sample",)}
"""Where a block of ``specdec-trace/1`` records each kind of draw (docs/trace-format.md)."""

ROLE_IN_MODE = {("block", "verify"): "eta"}
"""A role a mode's draws recorded under ``DRAW_FIELDS`` play there: in mode block the
``verification`` records hold the eta draws (SPEC 10.4)."""


@pytest.fixture(scope="module")
def service():
    return create_app({"TESTING": True}).test_client()


def trace_draws(block):
    """Every draw a trace block records, as (role, position, u), in the order used."""
    found = []
    for role, path in DRAW_FIELDS.items():
        items = block
        for key in path:
            items = items[key] if items is not None else None
        for item in items if isinstance(items, list) else [items]:
            if item is not None and item["draw"] is not None:
                found.append((ROLE_IN_MODE.get((block["mode"], role), role), item["draw"]["position"],
                              item["draw"]["u"]))
    return found


def configs(mode, sampling, seeds=range(40)):
    """Built-in configs: both drafts, widths 1-5, several seeds and limits (and D = 1..4 for tree)."""
    limits = (8, 1, 3, 5, 12, 2)
    for seed, width, draft in itertools.product(seeds, range(1, 6), ("aligned", "biased")):
        config = {"draft": draft, "mode": mode, "width": width, "seed": seed * 7919,
                  "limit": limits[seed % len(limits)]}
        if mode == "tree":
            config["drafts"] = 1 + seed % 4
        if sampling is not None:
            config["sampling"] = sampling
        yield config


def assert_service_matches_reference(service, config):
    """One comparison for every mode: output, final position, counters, and per block its
    position, committed tokens, counters, proposal and every draw (role, position, u)."""
    response = service.post("/v1/runs", json={"config": config})
    assert response.status_code == 200, (config, response.get_json())
    trace, ref = response.get_json(), R.run(config)
    assert trace["output"] == ref.output, config
    assert trace["position"] == ref.position, config
    assert trace["counters"] == ref.counters, config
    assert len(trace["blocks"]) == len(ref.blocks), config
    for i, (got, want) in enumerate(zip(trace["blocks"], ref.blocks)):
        where = f"blocks/{i} of {config}"
        assert got["position"] == want.position, where
        assert got["committed"] == want.committed, where
        assert got["counters"] == want.counters, where
        assert got["proposal"]["tokens"] == [t for chain in want.proposal for t in chain], where
        assert trace_draws(got) == [(role, n, float(u)) for role, n, u in want.draws], where


@pytest.mark.parametrize("sampling", SERVICE_SAMPLINGS, ids=str)
@pytest.mark.parametrize("mode", SERVICE_MODES)
def test_the_service_matches_the_reference(service, mode, sampling):
    # each setting of SPEC 9 on fewer seeds (80 configs a mode; 400 without sampling)
    for config in configs(mode, sampling, seeds=range(40) if sampling is None else range(8)):
        assert_service_matches_reference(service, config)


@pytest.mark.parametrize("draft", ["aligned", "biased"])
def test_the_service_with_one_draft_is_speculative(service, draft):
    # SPEC 11: with D = 1, mode tree is section 4 draw for draw: output, positions, counters.
    for seed, width, limit in itertools.product(range(0, 400, 37), range(1, 6), (1, 3, 8)):
        config = {"draft": draft, "seed": seed, "width": width, "limit": limit}
        tree = service.post("/v1/runs", json={"config": {**config, "mode": "tree", "drafts": 1}}).get_json()
        chain = service.post("/v1/runs", json={"config": config}).get_json()
        assert (tree["output"], tree["position"], tree["counters"]) == (
            chain["output"], chain["position"], chain["counters"]), config
        assert [b["next_position"] for b in tree["blocks"]] == [b["next_position"] for b in chain["blocks"]], config


@pytest.mark.parametrize("settings_, pointer", NOT_YET, ids=str)
def test_the_service_still_refuses(service, settings_, pointer):
    config = {"draft": "biased", "seed": 1, **settings_}
    response = service.post("/v1/runs", json={"config": config})
    assert response.status_code == 422, response.get_json()
    assert pointer in [e["pointer"] for e in response.get_json()["errors"]]


LABELS = ["A", "B", "C", "eos", "x y"]


@st.composite
def custom_configs(draw, modes=tuple(SERVICE_MODES), samplings=tuple(SERVICE_SAMPLINGS)):
    """A custom target and draft of 2-5 tokens, rows of hundredths (short decimals), an optional
    EOS, a limit of 1-10, width 1-5, any seed; a mode and sampling the service takes."""
    size = draw(st.integers(2, 5))
    vocab = LABELS[:size]

    def row():
        cuts = sorted(draw(st.lists(st.integers(0, 100), min_size=size - 1, max_size=size - 1)))
        return [(b - a) / 100 for a, b in zip([0] + cuts, cuts + [100])]

    def table():
        return {"vocab": vocab, "start": row(), "next": {label: row() for label in vocab}}

    config = {"target": table(), "draft": table(), "mode": draw(st.sampled_from(modes)),
              "width": draw(st.integers(1, 5)), "seed": draw(st.integers(0, 2**53 - 1)),
              "limit": draw(st.integers(1, 10)), "eos": draw(st.sampled_from([None, *vocab]))}
    if config["mode"] == "tree":
        config["drafts"] = draw(st.integers(1, 4))
    sampling = draw(st.sampled_from(samplings))
    if sampling is not None:
        config["sampling"] = sampling
    return config


def test_the_reference_keeps_the_counters_identities_in_every_mode():
    # SPEC 7 and 11.5: draft_steps = accepted + rejected + discarded; a block's draws are the
    # positions it moved; the totals are the blocks' sums; the session ends (SPEC 6).
    for mode, sampling in itertools.product(R.MODES, [None, *SAMPLINGS]):
        for config in configs(mode, sampling, seeds=range(2)):
            run = R.run(config)
            for block in run.blocks:
                c = block.counters
                assert c["draft_steps"] == c["accepted"] + c["rejected"] + c["discarded"], config
                assert c["committed"] == len(block.committed) >= 1, config
            assert len(run.output) == config["limit"] and run.position == sum(
                b.counters["draws"] for b in run.blocks), config


@settings(max_examples=150)
@given(custom_configs())
def test_the_service_matches_the_reference_on_custom_models(service, config):
    assert_service_matches_reference(service, config)
