"""``POST /v1/analysis``: the exact analysis of a configuration over all sessions at once.

Thin HTTP layer over :mod:`specdec_service.engine.analysis` (docs/analysis.md): the
body is read by :func:`~specdec_service.engine.analysis.parse_analysis` (its one statement,
``engine/inputs.py`` ``ANALYSIS``, is the contract's ``AnalysisIn``), the work by the route's
budget (``BUDGETS["POST /v1/analysis"]``, cost :func:`~specdec_service.engine.analysis.analysis_cost`)
before any of it is done.
"""

from __future__ import annotations

import os
from typing import Any

from marshmallow import fields, validate

from ..budget import BUDGETS, SESSION_WORK, SKIP_BUDGETS_ENV, config_processing_work
from ..engine import COUNTER_NAMES
from ..engine.analysis import analysis_cost, analyze, fit_defaults, parse_analysis
from ..engine.bounds import MAX_DEPTH, MAX_DRAFTS, MAX_WIDTH, MIN_DEPTH, MIN_DRAFTS, MIN_WIDTH
from .bodies import read_json
from .problems import json_response
from .routes import ApiBlueprint, example
from .schemas import ConfigOut, Label, Probabilities, StrictSchema

blueprint = ApiBlueprint("analysis", __name__, tag="analysis",
                         description="Exact analysis of a configuration over all sessions.")

# ---------------------------------------------------------------- response


def Exact(description: str, nullable: bool = False) -> fields.String:
    """An exact rational as a string: ``"n/d"`` in lowest terms, or ``"n"``."""
    return fields.String(required=True, allow_none=nullable, validate=validate.Regexp(r"^-?\d+(/\d+)?$"),
                         metadata={"description": description + " Exact: \"n/d\" in lowest terms or \"n\"."})


def Number(description: str, nullable: bool = False) -> fields.Float:
    """A probability or expectation as the nearest float64."""
    return fields.Float(required=True, allow_none=nullable, metadata={"description": description})


class ContextOut(StrictSchema):
    """One context (the last committed token, null at the empty prefix): its rows, the
    probability alpha that one drafted token is accepted there, and the residual."""

    context = Label(required=True, allow_none=True)  # type: ignore[assignment]  # marshmallow 3's Schema.context (gone in 4) is this field here
    p = Probabilities(metadata={"description": "The target row."})
    q = Probabilities(metadata={"description": "The draft row."})
    alpha = Number("sum over tokens of min(p, q): the probability that a drafted token is accepted here.")
    alpha_exact = Exact("alpha.")
    residual = fields.List(fields.Float(), required=True, allow_none=True, metadata={
        "description": "The correction distribution max(p - q, 0) normalised (SPEC 4.3); null where alpha is 1."})
    residual_exact = fields.List(Exact("One probability of the residual."), required=True, allow_none=True)


CountersExactOut = StrictSchema.from_dict({name: Exact(f"E[{name}].") for name in COUNTER_NAMES},
                                          name="CountersExactOut")
"""The expected counters of SPEC section 7, exactly."""
ExpectedCountersOut = StrictSchema.from_dict({name: Number(f"E[{name}].") for name in COUNTER_NAMES},
                                             name="ExpectedCountersOut")
"""The expected counters as floats (expectations, not integers)."""


class ExpectedOut(StrictSchema):
    """Expectations over all sessions of the work counters of SPEC section 7, exactly as
    a trace counts them, and the ratios built from them."""

    counters = fields.Nested(ExpectedCountersOut, required=True)
    counters_exact = fields.Nested(CountersExactOut, required=True)
    committed_per_pass = Number("E[committed] / E[target_passes].")
    committed_per_pass_exact = Exact("committed_per_pass.")
    acceptance_rate = Number("E[accepted] / (E[accepted] + E[rejected]); null when nothing is verified "
                             "(autoregressive).", nullable=True)
    acceptance_rate_exact = Exact("acceptance_rate.", nullable=True)
    speedup = Number("E[committed] / (E[target_passes] + draft_cost x E[draft_steps]).")
    speedup_exact = Exact("speedup.")


class LeviathanOut(StrictSchema):
    """Leviathan et al. 2023's closed form with a constant acceptance rate and no limit."""

    acceptance_rate = Number("a: the exact acceptance rate of `expected`.")
    width = fields.Integer(required=True, metadata={"description": "w: the config's width."})
    tokens_per_pass = Number("(1 - a^(w+1)) / (1 - a), or w + 1 when a = 1.")
    speedup = Number("tokens_per_pass / (1 + w x draft_cost).")


class SweepOut(StrictSchema):
    """The same config at another width."""

    width = fields.Integer(required=True, validate=validate.Range(MIN_WIDTH, MAX_WIDTH))
    committed_per_pass = Number("E[committed] / E[target_passes] at this width.")
    committed_per_pass_exact = Exact("committed_per_pass.")
    speedup = Number("The speedup at this width and draft_cost.")
    speedup_exact = Exact("speedup.")


class OutcomeOut(StrictSchema):
    """One outcome of the first `depth` committed tokens and its probability (> 0)."""

    tokens = fields.List(Label(), required=True, validate=validate.Length(1, MAX_DEPTH))
    p = Number("Its probability.")
    p_exact = Exact("p.")


class OutputOut(StrictSchema):
    """The exact distribution of the first `depth` committed tokens (shorter where EOS
    ends a session first) against plain sampling from the target."""

    depth = fields.Integer(required=True, validate=validate.Range(MIN_DEPTH, MAX_DEPTH), metadata={
        "description": "The depth analysed: min(requested depth, limit)."})
    distribution = fields.List(fields.Nested(OutcomeOut), required=True,
                               metadata={"description": "Under this config, in lexicographic vocabulary order."})
    target = fields.List(fields.Nested(OutcomeOut), required=True,
                         metadata={"description": "Under plain sampling from the target."})
    tv = Number("Total variation distance between the two: 0 for speculative, autoregressive and block.")
    tv_exact = Exact("tv.")


class NaiveOut(StrictSchema):
    """The output distribution when the correction is sampled from p instead of the residual."""

    distribution = fields.List(fields.Nested(OutcomeOut), required=True)
    tv = Number("Total variation distance to the target's distribution.")
    tv_exact = Exact("tv.")


class BlockComparisonOut(StrictSchema):
    """Mode block against token-wise verification at one width (SPEC 10; Sun et al. 2025)."""

    width = fields.Integer(required=True, validate=validate.Range(MIN_WIDTH, MAX_WIDTH))
    accepted_per_block = Number("E[accepted proposals] of the first block from the empty prefix with k = width "
                                "(no limit), block verification.")
    accepted_per_block_exact = Exact("accepted_per_block.")
    token_wise_accepted_per_block = Number("The same under token-wise verification (SPEC 4).")
    token_wise_accepted_per_block_exact = Exact("token_wise_accepted_per_block.")
    committed_per_pass = Number("E[committed] / E[target_passes] of a whole session at this width, block verification.")
    committed_per_pass_exact = Exact("committed_per_pass.")
    token_wise_committed_per_pass = Number("The same under token-wise verification.")
    token_wise_committed_per_pass_exact = Exact("token_wise_committed_per_pass.")


class BlockOut(StrictSchema):
    """Mode block only: the per-width comparison with token-wise verification."""

    comparison = fields.List(fields.Nested(BlockComparisonOut), required=True, metadata={
        "description": "The config's width, then each swept width not already listed."})


class TreeSweepOut(StrictSchema):
    """Mode tree (SPEC 11): one block from the empty prefix with no limit, at D drafts and a width."""

    drafts = fields.Integer(required=True, validate=validate.Range(MIN_DRAFTS, MAX_DRAFTS))
    width = fields.Integer(required=True, validate=validate.Range(MIN_WIDTH, MAX_WIDTH))
    committed_per_pass = Number("E[committed] of that block (toy, biased, width 2: 407/200 for D = 1, "
                                "349449/160000 for D = 2).")
    committed_per_pass_exact = Exact("committed_per_pass.")
    accepted_per_pass = Number("E[accepted] of that block: the drafted tokens it commits.")
    accepted_per_pass_exact = Exact("accepted_per_pass.")


class NodeAcceptanceOut(StrictSchema):
    """One context (the last committed token, null at the empty prefix): how often a node there
    accepts one of its children."""

    context = Label(required=True, allow_none=True)  # type: ignore[assignment]  # as ContextOut's
    accept = Number("The probability that a node at this context, with the children the shape drafts at the first "
                    "depth of a block (D chains, b_1 distinct siblings or the top-D beam), accepts one of them: "
                    "under \"target_only\" with both thresholds 1, the expected p(children) (toy, biased, beam, D = 2, "
                    "the empty prefix: 4/5), against sum min(p, q) of one token under SPEC 4.")
    accept_exact = Exact("accept.")


class TreeVerdictOut(StrictSchema):
    """Mode tree with a ``tree`` setting (SPEC 12): the tree analysed, how its nodes accept, and
    whether its output is exactly the target's."""

    shape = fields.String(required=True, validate=validate.OneOf(["chains", "distinct", "beam"]))
    verify = fields.String(required=True, validate=validate.OneOf(["residual", "target_only"]))
    branching = fields.List(fields.Integer(validate=validate.Range(1, 8)), required=True, allow_none=True, metadata={
        "description": "Shape distinct (else null): b_1..b_k as the tree is drafted, k = min(width, limit): the "
                       "config's list, 1 past its end, cut to k; default [D, 1, ...]."})
    threshold_single = Number("Verify target_only (else null): threshold_single as read (1: lossless).", nullable=True)
    threshold_single_exact = Exact("threshold_single.", nullable=True)
    threshold_acc = Number("Verify target_only (else null): threshold_acc as read (1: lossless).", nullable=True)
    threshold_acc_exact = Exact("threshold_acc.", nullable=True)
    nodes = fields.List(fields.Nested(NodeAcceptanceOut), required=True, metadata={
        "description": "The empty prefix, then each token in vocabulary order."})
    verdict = fields.String(required=True, validate=validate.OneOf(["lossless", "lossy"]), metadata={
        "description": "\"lossy\" when the output's total variation from the target (`output.tv`) is positive: "
                       "the target-only thresholds below 1 (SGLang's --speculative-accept-threshold-single/-acc); "
                       "toy, biased, beam, width 2, D = 2, threshold_acc 1/2: tv 1/2 over the first token."})


class FittedOut(StrictSchema):
    """The defaults the service cut so that the analysis fits the route's budget."""

    widths = fields.List(fields.Integer(validate=validate.Range(MIN_WIDTH, MAX_WIDTH)), required=True, metadata={
        "description": "The widths swept: the request's, or the longest 1..n of the default 1-8 that fits."})
    drafts = fields.List(fields.Integer(validate=validate.Range(MIN_DRAFTS, MAX_DRAFTS)), metadata={
        "description": "Mode tree only: the D of `tree_sweep`, the longest 1..m of 1-8 that fits (with the config's D "
                       "when it can)."})
    cost = fields.Integer(required=True, metadata={"description": "The cost of this analysis, in analysis units."})
    default_widths = fields.List(fields.Integer(validate=validate.Range(MIN_WIDTH, MAX_WIDTH)), required=True,
                                 metadata={"description": "The widths `default_cost` is for: the request's, or 1-8."})
    default_cost = fields.Integer(required=True, metadata={
        "description": "The cost with `default_widths` and, in mode tree, D 1-8: over `budget`."})
    budget = fields.Integer(required=True, metadata={"description": "The route's budget, in analysis units."})


class AnalysisConfigOut(ConfigOut):
    """The normalised session settings of an analysis: every default filled in, no seed."""

    class Meta(ConfigOut.Meta):
        exclude = ("seed",)


class AnalysisOut(StrictSchema):
    """``POST /v1/analysis``: every probability and expectation as the nearest float64 and
    exactly (``_exact``)."""

    config = fields.Nested(AnalysisConfigOut, required=True,
                           metadata={"description": "The normalised settings (no seed)."})
    contexts = fields.List(fields.Nested(ContextOut), required=True,
                           metadata={"description": "The empty prefix, then each token in vocabulary order."})
    expected = fields.Nested(ExpectedOut, required=True)
    leviathan = fields.Nested(LeviathanOut, required=True, allow_none=True,
                              metadata={"description": "null in modes autoregressive and tree."})
    draft_cost = Number("The draft cost used, as the nearest float64.")
    draft_cost_exact = Exact("draft_cost.")
    sweep = fields.List(fields.Nested(SweepOut), required=True,
                        metadata={"description": "One entry per requested width, in the order requested."})
    best_width = fields.Integer(required=True, validate=validate.Range(MIN_WIDTH, MAX_WIDTH), metadata={
        "description": "The swept width with the largest speedup (the smallest on a tie)."})
    output = fields.Nested(OutputOut, required=True)
    naive = fields.Nested(NaiveOut, required=True, allow_none=True,
                          metadata={"description": "Mode speculative only, else null."})
    block = fields.Nested(BlockOut, metadata={
        "description": "Mode block only (absent otherwise): block against token-wise verification per width."})
    tree_sweep = fields.List(fields.Nested(TreeSweepOut), metadata={
        "description": "Mode tree only (absent otherwise): for D = 1..8 and each requested width, one block from the "
                       "empty prefix with no limit (SPEC 11)."})
    tree = fields.Nested(TreeVerdictOut, metadata={
        "description": "Mode tree with a `tree` setting only (absent otherwise): its shape, verifier, branching, "
                       "thresholds, acceptance per node and verdict."})
    fitted = fields.Nested(FittedOut, metadata={
        "description": "Present only when the defaults would be over the budget: `widths` not sent (default 1-8) or "
                       "mode tree's sweep over D = 1..8 cut to the longest that fits, named here; send `widths` to "
                       "analyse others, each request within the budget."})


# ---------------------------------------------------------------- view

_BUDGET = BUDGETS["POST /v1/analysis"]
_EXAMPLE = {"config": {"draft": "biased"}, "depth": 1, "widths": [1, 2, 3, 4, 5, 6, 7, 8], "draft_cost": 0.05}


def _analyze(body: Any) -> dict:
    """The analysis of a body (:func:`~specdec_service.engine.analysis.parse_analysis`);
    raises ``InvalidInput`` or ``OverBudget``."""
    config, depth, widths, draft_cost = parse_analysis(body)
    SESSION_WORK.check(config_processing_work(config), pointer="#/config", record=False)  # before the rows are read
    cost = analysis_cost(config, depth, widths)
    fitted = None if cost <= _BUDGET.limit or os.environ.get(SKIP_BUDGETS_ENV) else fit_defaults(
        config, depth, widths if "widths" in body else None, _BUDGET.limit)
    if fitted is None:
        _BUDGET.check(cost)
        return analyze(config, depth, widths, draft_cost)
    swept, drafts = fitted
    _BUDGET.check(analysis_cost(config, depth, swept, drafts))
    result = analyze(config, depth, swept, draft_cost, drafts)
    result["fitted"] = {"widths": swept, **({"drafts": list(drafts)} if config.mode == "tree" else {}),
                        "cost": analysis_cost(config, depth, swept, drafts), "default_widths": widths,
                        "default_cost": cost,
                        "budget": _BUDGET.limit}
    return result


@blueprint.operation(
    "POST", "/v1/analysis", summary="Analyse a config exactly",
    operation_id="analyze",
    description="Exact rationals over all sessions at once (docs/analysis.md): per context alpha and the residual; "
                "the expectation of every work counter of SPEC section 7 as a trace counts it, committed per pass, "
                "acceptance rate and speedup at `draft_cost`; Leviathan et al.'s closed form beside; a sweep over "
                "`widths` with the best width; the distribution of the first `depth` tokens against the target's "
                "with their total variation (exactly 0 for speculative, autoregressive and block), and the naive rule's; "
                "in mode block, per width, block against token-wise verification (expected accepted proposals per block, "
                "committed per pass). Mode block enumerates the draft blocks: at most 500,000 draft-block cells "
                "(docs/analysis.md), beyond which a 422 names `config/width` or `widths`. "
                "Computed by dynamic programming, within a work budget: a request whose cost (docs/analysis.md) is "
                "over it is a 422 of type `tag:specdec,2026:problem/over-budget` with `cost` and `budget`, unless "
                "defaults make it so (`widths` not sent, mode tree's sweep over D = 1..8): then the longest default "
                "that fits is analysed and named in `fitted`.",
    body="AnalysisIn", examples=lambda: {"biased": example("The toy with the biased draft, depth 1, draft cost 0.05",
                                                         _EXAMPLE)},
    ok=AnalysisOut, ok_description="The analysis.", problems=(400, 413, 415, 422),
    ok_examples=lambda: {"biased": example("alpha 7/10 at the empty prefix; the naive rule gives A 13/20: tv 3/20",
                                           _analyze(_EXAMPLE))})
def analysis():
    """The analysis of ``{"config", "depth", "widths", "draft_cost"}``."""
    return json_response(_analyze(read_json()))
