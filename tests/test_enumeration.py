"""The exact enumerator (engine/enumeration.py): the law of a decoder from the SAME block program
(engine/block_loop.py ``play``) run once per branch of its draws' answers, equal, exactly (Fractions),
to every closed-form analysis on small configs: token-wise, greedy and autoregressive
(engine/chain_law.py), block verification (engine/analysis_block.py), SPEC 11's chains
(engine/tree_analysis.py) and SPEC 12's shapes x verifiers (engine/tree_law.py), on hypothesis'
random custom models, with EOS, limits and sampling parameters."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from specdec_service.engine import parse_config
from specdec_service.engine.block_loop import play
from specdec_service.engine.analysis_block import BlockLaws, block_expectations, block_output
from specdec_service.engine.chain_law import expectations, output_distribution, rules_for
from specdec_service.engine.draws import Stream
from specdec_service.engine.enumeration import Branch, NotEnumerable, block_law, session_law
from specdec_service.engine.decoders import BLOCK, NAIVE, SPECULATIVE
from specdec_service.engine.state import State
from specdec_service.engine.tree_analysis import TreeLaw
from specdec_service.engine.tree_law import Tree, TreeShapeLaw
from test_analysis import rows

SHAPES = [Tree("chains", "residual"), Tree("distinct", "residual"), Tree("chains", "target_only"),
          Tree("distinct", "target_only"), Tree("beam", "target_only")]


@st.composite
def small_configs(draw, modes=("speculative", "greedy", "autoregressive", "block")):
    size = draw(st.integers(2, 3))
    vocab = [chr(ord("a") + i) for i in range(size)]

    def model():
        return {"vocab": vocab, "start": draw(rows(size)), "next": {v: draw(rows(size)) for v in vocab}}

    return {"target": model(), "draft": model(), "mode": draw(st.sampled_from(modes)), "seed": 0,
            "width": draw(st.integers(1, 3)), "limit": draw(st.integers(1, 4)),
            "eos": draw(st.sampled_from([None, *vocab]))}


def chain_law_of(cfg, depth, decoder=None):
    rules = rules_for(cfg, decoder)
    return output_distribution(rules, cfg.limit, depth), expectations(rules, cfg.limit)


def closed_form(cfg, depth):
    """The analysis's closed form of ``cfg``'s mode: ``(output law, expected counters)``."""
    if cfg.mode == "block":
        laws = BlockLaws(cfg)
        return block_output(laws, cfg.width, depth), block_expectations(laws, cfg.width)
    if cfg.mode == "tree":
        tree = getattr(cfg, "tree", None)
        law = TreeLaw(cfg) if tree is None else TreeShapeLaw(cfg, tree)
        return law.output_weights(depth, cfg.width, cfg.drafts), law.expectations(cfg.width, cfg.drafts)
    return chain_law_of(cfg, depth)


def assert_equal_to_closed_form(settings_, depth):
    cfg = parse_config(settings_)
    depth = min(depth, cfg.limit)
    law = session_law(cfg, depth=depth)
    output, counters = closed_form(cfg, depth)
    assert sum(law.output.values()) == 1
    assert law.output == {k: v for k, v in output.items() if v}
    assert law.counters == counters


@given(small_configs(), st.integers(1, 4))
@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
def test_chain_modes_and_block_equal_their_closed_forms(settings_, depth):
    assert_equal_to_closed_form(settings_, depth)


@given(small_configs(modes=("tree",)), st.integers(1, 3), st.integers(1, 2))
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
def test_spec_11_chains_equal_the_depth_recursion(settings_, depth, drafts):
    assert_equal_to_closed_form({**settings_, "drafts": drafts}, depth)


@given(small_configs(modes=("tree",)), st.sampled_from(SHAPES), st.integers(1, 2),
       st.lists(st.integers(1, 2), min_size=1, max_size=3), st.sampled_from([1, Fraction(1, 2)]))
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
def test_spec_12_shapes_and_verifiers_equal_the_tree_enumeration(settings_, tree, drafts, branching, threshold):
    setting = {"shape": tree.shape, "verify": tree.verify}
    if tree.shape == "distinct":
        setting["branching"] = branching
    if tree.verify == "target_only":
        setting["threshold_single"] = setting["threshold_acc"] = float(threshold)
    assert_equal_to_closed_form({**settings_, "drafts": drafts, "limit": min(settings_["limit"], 3),
                                 "width": min(settings_["width"], 2), "tree": setting}, 3)


@pytest.mark.parametrize("mode", ["speculative", "block", "greedy"])
@pytest.mark.parametrize("sampling", [{"temperature": 0.5, "top_k": 2}, {"top_p": 0.8, "draft": "raw"},
                                      {"min_p": 0.3, "temperature": 2}])
def test_sampling_parameters(mode, sampling):
    assert_equal_to_closed_form({"draft": "biased", "mode": mode, "width": 2, "limit": 3, "seed": 0,
                                 "sampling": sampling}, 3)


def test_the_naive_rule_is_biased_exactly_as_its_closed_form_says():
    cfg = parse_config({"draft": "biased", "width": 2, "limit": 3, "seed": 0})
    law = session_law(cfg, NAIVE, depth=2)
    assert (law.output, law.counters) == chain_law_of(cfg, 2, NAIVE)
    assert law.output != session_law(cfg, SPECULATIVE, depth=2).output


def test_spec_10_figures_from_one_block():
    # SPEC 10: toy/biased, empty prefix, no limit: E[accepted] 219/200 (block) against 207/200
    # (token-wise) at width 2
    cfg = parse_config({"draft": "biased", "width": 2, "limit": 64, "seed": 0})
    for decoder, expected in [(BLOCK, Fraction(219, 200)), (SPECULATIVE, Fraction(207, 200))]:
        law = block_law(State(cfg), decoder)
        assert sum(law.values()) == 1
        assert sum(p * outcome.counters.accepted for outcome, p in law.items()) == expected


def test_a_block_law_holds_what_seeded_blocks_commit():
    # every block the seeded stream plays is an outcome of positive probability, with its counters
    cfg = parse_config({"draft": "biased", "width": 3, "limit": 8, "seed": 0})
    law = block_law(State(cfg))
    for seed in range(40):
        result = play(State(parse_config({"draft": "biased", "width": 3, "limit": 8, "seed": seed})), SPECULATIVE)
        assert law[(result.state.committed, result.state.counters)] > 0


def test_a_draw_taken_again_is_the_same_variable():
    branch = Branch((), 0)
    d = branch.take()
    assert d.below(1, 2) is True  # the first answer: u < 1/2
    assert branch.last() is d and branch.position == 1
    assert d.below(3, 4) is True  # one answer: u < 1/2 already
    assert branch.arity == [2] and branch.p == Fraction(1, 2)
    branch.skip(2)
    assert branch.take().position == 3


def test_the_stream_answers_as_the_mantissa_says():
    d = Stream(7, 0).take()
    m = d.mantissa
    assert d.below(m + 1, 2**53) and not d.below(m, 2**53) and d.at_most(m, 2**53)


def test_past_the_budget_the_law_is_refused():
    cfg = parse_config({"draft": "biased", "width": 3, "limit": 8, "seed": 0})
    with pytest.raises(NotEnumerable):
        session_law(cfg, branches=10)
