"""Exact analysis of a configuration over all sessions at once (SPEC sections 4, 5, 10-12).

Traces show one random session; this module answers for every session at
once, in exact rationals (:class:`fractions.Fraction`):

- per context, the acceptance probability ``alpha = sum_x min(p(x), q(x))``
  of one drafted token and the residual (correction) distribution
  (SPEC section 4.3; Leviathan et al. 2023, Chen et al. 2023);
- the expectation over all sessions of every work counter of SPEC section 7,
  counted exactly as a trace counts them (EOS rules of section 6, no bonus at
  the limit, discarded proposals are draft steps);
- the exact distribution of the first ``depth`` committed tokens, against
  plain sampling from the target, and their total variation distance (0 for
  ``speculative`` and ``autoregressive``: the theorem of speculative
  sampling, checked on the caller's own config);
- the same distribution under the *naive* rule (the correction sampled from
  the target p instead of the residual), which is biased.

The chain's law itself (rows, the dynamic programs, the output distribution) is
:mod:`.chain_law`; this module reads the request, checks it, and dispatches by mode
(:mod:`.analysis_block`, :mod:`.tree_analysis`, :mod:`.tree_law`).

Pure Python, no I/O; the HTTP layer is :mod:`specdec_service.api.analysis`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Optional, Sequence

from .bounds import MAX_DEPTH, MAX_DRAFT_COST, MIN_DEPTH  # noqa: F401  (re-exported)
from .chain_law import (  # noqa: F401  (the chain's law, re-exported: analysis's public names)
    ONE, ZERO, BlockRules, Outcomes, contexts_json, contexts_of, counters_json, distribution_json, exact,
    expectations, first_block_accepted, leviathan, output_distribution, output_weights, ratios, row_of, rules_for, step_denominator,
    supported_prefixes, with_exact,
)
from .errors import Fault, InvalidInput
from .models import digits_fault, exact_number
from .inputs import ANALYSIS, ANALYSIS_CONFIG, checker, expectation, shallow
from .analysis_block import (
    BLOCK_CELL_COST, BLOCK_DP_FACTOR, BlockLaws, accepted_per_block, block_expectations, block_output, check_block_size, draft_block_cells,
)
from .distributions import to_float
from .decoders import AUTOREGRESSIVE, MODE_RULES, NAIVE  # noqa: F401  (NAIVE re-exported)
from .state import Config, parse_around, parse_config
from .tree_analysis import TREE_DRAFTS, analyze_tree
from .tree_law import analysis_cost as tree_analysis_cost, law_for, tree_of

DEFAULT_WIDTHS = tuple(range(1, 9))
"""Widths swept when the caller names none."""


def analysis_cost(config: Config, depth: int, widths: Sequence[int], sweep_drafts: Sequence[int] = TREE_DRAFTS) -> int:
    """An estimate of the work of :func:`analyze`, in units of about one
    microsecond of one core (measured, docs/analysis.md "Cost and budget").

    With V tokens, limit L and width w, :func:`expectations` does about
    ``L * (V + 1) * V * (w + 1)`` integer multiply-adds between blocks and
    ``(V + 1) * w * V * V`` inside blocks, for the config's width and each
    swept width. Its integers grow: a mass at committed length L is an
    integer over ``G**L`` (``G`` = :func:`step_denominator`), so one
    operation multiplies an ``L * log2(G)``-bit number by one of up to
    ``(w + 1) * log2(G)`` bits; each operation is weighted by
    ``1 + mass_limbs * move_limbs / 150`` (64-bit limbs), fitted to
    measurements. :func:`output_distribution` (target, this config and the
    naive rule) costs about ``3 * N * depth * V`` with N =
    :func:`supported_prefixes`. In mode block, the enumeration of draft blocks adds
    :data:`.analysis_block.BLOCK_CELL_COST` per draft-block cell
    (:func:`.analysis_block.draft_block_cells`), and the operations between blocks weigh
    :data:`.analysis_block.BLOCK_DP_FACTOR` times as much (exact fractions, not scaled integers).
    Mode tree: :func:`.tree_law.analysis_cost`, with ``tree_sweep`` over the D of ``sweep_drafts``.
    """
    if config.mode == "tree":  # SPEC 11-12: engine/tree_law.py states its own cost
        return tree_analysis_cost(config, depth, widths, sweep_drafts)
    size, limit = len(config.vocab), config.limit
    bits = step_denominator(config).bit_length()
    mass_limbs = limit * bits / 64
    cost = 0.0
    between = BLOCK_DP_FACTOR if config.mode == "block" else 1  # mode block's programs run on Fractions
    for w in {config.width, *widths}:
        move_limbs = 1 + (w + 1) * bits / 128
        cost += between * limit * (size + 1) * size * (w + 1) * (1 + mass_limbs * move_limbs / 150)
        cost += (size + 1) * w * size * size
    cost += 3 * supported_prefixes(config, depth) * depth * size
    if config.mode == "block":  # the enumeration of draft blocks (engine/analysis_block.py)
        cost += BLOCK_CELL_COST * draft_block_cells(config, widths, depth)
    return int(cost)


# ---------------------------------------------------------------- the analysis


# ---------------------------------------------------------------- the analysis


check_values = checker(shallow(ANALYSIS, config={"description": "Read by parse_analysis_config."}))
"""What :func:`parse_analysis` checks with JSON Schema: :data:`.inputs.ANALYSIS`, its config
read by :func:`parse_analysis_config`."""
_DRAFT_COST = ANALYSIS["properties"]["draft_cost"]


def check_request(config: Config, depth: int, widths: Sequence[int], draft_cost: Fraction) -> None:
    """The rules of an analysis request beyond its config, as :data:`.inputs.ANALYSIS` states
    them (``depth``, distinct ``widths``, ``draft_cost`` in its bounds, read exactly). A depth
    above ``limit`` is valid (it is read as :func:`effective_depth`), so no rule here depends on
    another field: the contract's ``AnalysisIn`` states them all; in mode block, the draft blocks
    to enumerate must stay within :data:`.analysis_block.MAX_DRAFT_BLOCK_CELLS`
    (:func:`.analysis_block.check_block_size`). Raises :class:`InvalidInput` naming each bad
    field."""
    faults: list[Fault] = []
    more = 0
    try:
        check_values({"config": {}, "depth": depth, "widths": list(widths)})
    except InvalidInput as error:
        faults.extend(error.faults)
        more = error.more
    else:  # JSON Schema counts 3.0 an integer; in process, only an int is one
        properties = ANALYSIS["properties"]
        if type(depth) is not int:
            faults.append(Fault(("depth",), expectation(properties["depth"])))
        faults.extend(Fault(("widths", i), expectation(properties["widths"]["items"]))
                      for i, w in enumerate(widths) if type(w) is not int)
    if not _DRAFT_COST["minimum"] <= draft_cost <= _DRAFT_COST["maximum"]:
        faults.append(Fault(("draft_cost",), expectation(_DRAFT_COST)))
    if faults:
        raise InvalidInput(faults, len(faults) + more)
    if config.mode == "block":
        check_block_size(config, widths, effective_depth(config, depth))


def parse_analysis(obj: Any) -> tuple[Config, int, list[int], Fraction]:
    """``(config, depth, widths, draft_cost)`` of a ``POST /v1/analysis`` body
    (:data:`.inputs.ANALYSIS`), defaults filled in: ``depth`` :func:`default_depth` (a depth
    above the limit read as :func:`effective_depth`),
    ``widths`` :data:`DEFAULT_WIDTHS`, ``draft_cost`` 0 (read exactly, as written). Raises
    :class:`InvalidInput` with paths relative to the body."""
    config = parse_around(check_values, obj, "config", parse_analysis_config)
    depth = obj.get("depth", default_depth(config))
    widths = obj.get("widths", list(DEFAULT_WIDTHS))
    too_long = digits_fault(obj.get("draft_cost"))  # its length bounded before any exact arithmetic on it
    if too_long:
        raise InvalidInput.at(("draft_cost",), too_long)
    draft_cost = exact_number(obj.get("draft_cost", 0))
    if draft_cost is None:  # not a number: check_values has refused it already
        raise InvalidInput.at(("draft_cost",), expectation(_DRAFT_COST))
    check_request(config, depth, widths, draft_cost)
    return config, effective_depth(config, depth), widths, draft_cost


def analyze(config: Config, depth: Optional[int] = None, widths: Sequence[int] = DEFAULT_WIDTHS,
            draft_cost: Fraction = ZERO, sweep_drafts: Sequence[int] = TREE_DRAFTS) -> dict:
    """The exact analysis of ``config`` as the body of ``POST /v1/analysis``.

    ``depth``: the output distribution is over the first ``depth`` committed
    tokens (default ``min(limit, 3)``; above ``limit``, the first ``limit``:
    :func:`effective_depth`, reported as ``output.depth``); ``widths``: the widths to sweep;
    ``draft_cost``: the cost of one draft step in target passes (exact); ``sweep_drafts``
    (mode tree): the D of ``tree_sweep`` (default 1..8).
    Every probability and expectation is given as the nearest float64 ``x``
    and exactly as ``x_exact`` (:func:`exact`).

    Raises :class:`InvalidInput` for bad arguments (:func:`check_request`).
    The work grows fast with the vocabulary, limit and width: a caller that
    must bound it checks :func:`analysis_cost` first (the HTTP route does).
    """
    depth = default_depth(config) if depth is None else depth
    widths = list(widths)
    draft_cost = Fraction(draft_cost)
    check_request(config, depth, widths, draft_cost)
    depth = effective_depth(config, depth)
    if config.mode == "tree":  # SPEC 11-12: its own exact law (engine/tree_analysis.py, engine/tree_law.py)
        return analyze_tree(config, depth, widths, draft_cost, law_for(config), tree_of(config), sweep_drafts)

    rules = rules_for(config)
    laws = BlockLaws(config) if config.mode == "block" else None
    counters = _session_counters(config, rules, laws, config.width)
    expected = counters_json(counters, draft_cost)
    figures = ratios(counters, draft_cost)

    sweep, best = [], None
    for w in widths:
        at_w = counters if w == config.width else _session_counters(config, rules, laws, w)
        r = ratios(at_w, draft_cost)
        sweep.append({"width": w, **with_exact("committed_per_pass", r["committed_per_pass"]),
                      **with_exact("speedup", r["speedup"])})
        speedup = r["speedup"]
        assert speedup is not None  # only the acceptance rate may be None
        if best is None or speedup > best[1]:
            best = (w, speedup)
    assert best is not None  # check_request refuses an empty widths

    limit, vocab = config.limit, config.vocab
    target = output_weights(rules_for(config, AUTOREGRESSIVE), limit, depth)
    target_json = distribution_json(target.fractions(), vocab)
    if laws is not None:
        dist_fractions = block_output(laws, config.width, depth)
        tv = total_variation(dist_fractions, target.fractions())
    else:
        dist = target if config.mode == "autoregressive" else output_weights(rules, limit, depth)
        tv = dist.total_variation(target, depth)
        dist_fractions = {} if tv == 0 else dist.fractions()  # read only when tv is not 0
    output = {"depth": depth, "distribution": target_json if tv == 0 else distribution_json(dist_fractions, vocab),
              "target": target_json, **with_exact("tv", tv)}
    naive = None
    if config.mode == "speculative":
        biased = output_weights(rules_for(config, NAIVE), limit, depth)
        naive = {"distribution": distribution_json(biased.fractions(), vocab),
                 **with_exact("tv", biased.total_variation(target, depth))}

    normalised = config.to_json()
    del normalised["seed"]
    extra = {} if laws is None else {"block": _block_comparison(config, laws, widths, draft_cost)}
    return {
        "config": normalised,
        "contexts": contexts_json(config, rules),
        "expected": expected,
        "leviathan": leviathan(figures["acceptance_rate"], config.width, draft_cost),
        "draft_cost": to_float(draft_cost),
        "draft_cost_exact": exact(draft_cost),
        "sweep": sweep,
        "best_width": best[0],
        "output": output,
        "naive": naive,
        **extra,
    }


def fit_defaults(config: Config, depth: int, widths: Optional[Sequence[int]], limit: int
                 ) -> Optional[tuple[list[int], tuple[int, ...]]]:
    """The defaults an analysis of ``config`` can afford within a cost of ``limit``
    (:func:`analysis_cost`): ``(widths, sweep_drafts)``, or ``None`` when even the smallest is
    over. ``widths``: the caller's (kept as sent), or ``None`` for the default, then the longest
    ``1..n`` of :data:`DEFAULT_WIDTHS`; ``sweep_drafts`` (mode tree's ``tree_sweep``, which no
    caller chooses): the longest ``1..m`` of :data:`.tree_analysis.TREE_DRAFTS`. The widths come
    first (the sweep the caller reads beside the config), keeping the config's D in the sweep over
    D when any choice can: toy, biased, D = 2, chains walked by ``"target_only"`` (96,220,224 with
    both defaults): widths 1-7, D 1-2 (978,768)."""
    spans = [list(widths)] if widths is not None else [list(DEFAULT_WIDTHS[:n]) for n in range(len(DEFAULT_WIDTHS), 0, -1)]
    sweeps = [TREE_DRAFTS[:m] for m in range(len(TREE_DRAFTS), 0, -1)] if config.mode == "tree" else [TREE_DRAFTS]
    fitting = [(span, sweep) for span in spans for sweep in sweeps
               if analysis_cost(config, depth, span, sweep) <= limit]
    return next((choice for choice in fitting if config.drafts in choice[1]), fitting[0] if fitting else None)


def effective_depth(config: Config, depth: int) -> int:
    """``min(depth, limit)``: the depth an analysis computes and reports (``output.depth``).
    Every session ends by ``limit`` tokens, so the first ``depth`` committed tokens of a
    deeper request are the whole output: its distribution over the first ``limit`` tokens is
    exactly the one asked for (as the outputs that EOS ends early are shorter)."""
    return min(depth, config.limit)


def _session_counters(config: Config, rules: BlockRules, laws: Optional[BlockLaws], width: int) -> dict:
    """The expected counters of a whole session at ``width``: mode block's by enumeration of the
    draft blocks (:mod:`.analysis_block`), every other mode's by :func:`expectations`."""
    if laws is not None:
        return block_expectations(laws, width)
    return expectations(rules if width == rules.width else rules.at_width(width), config.limit)


def total_variation(a: dict, b: dict) -> Fraction:
    """Half the sum of the absolute differences of two exact distributions ``{outcome: p}``."""
    return sum((abs(a.get(x, ZERO) - b.get(x, ZERO)) for x in set(a) | set(b)), ZERO) / 2


def _block_comparison(config: Config, laws: BlockLaws, widths: Sequence[int], draft_cost: Fraction) -> dict:
    """Mode block against token-wise verification (SPEC 10, Sun et al. 2025 theorem 2), per
    width (the config's, then the swept ones): the expected accepted proposals of the first
    block from the empty prefix with k = width (no limit), and the expected committed tokens
    per target pass of a whole session, under each rule."""
    tokenwise = rules_for(config, MODE_RULES["speculative"])
    rows = []
    for w in dict.fromkeys([config.width, *widths]):
        at_w = tokenwise.at_width(w)
        first = first_block_accepted(at_w, w)
        block_pass = ratios(block_expectations(laws, w), draft_cost)["committed_per_pass"]
        tokenwise_pass = ratios(expectations(at_w, config.limit), draft_cost)["committed_per_pass"]
        rows.append({"width": w,
                     **with_exact("accepted_per_block", accepted_per_block(laws, w)),
                     **with_exact("token_wise_accepted_per_block", first),
                     **with_exact("committed_per_pass", block_pass),
                     **with_exact("token_wise_committed_per_pass", tokenwise_pass)})
    return {"comparison": rows}


def default_depth(config: Config) -> int:
    """``min(limit, 3)``: the depth of the output distribution when none is given."""
    return min(config.limit, 3)


ANALYSIS_SEED = 0
"""The seed put into a config that has none: nothing in an analysis is random."""


check_analysis_config = checker(shallow(ANALYSIS_CONFIG, target={}, draft={}))


def parse_analysis_config(obj) -> Config:
    """A config for an analysis (:data:`.inputs.ANALYSIS_CONFIG`): as
    :func:`~.state.parse_config`, but ``seed`` may be left out (it is ignored). Raises
    :class:`InvalidInput`."""
    check_analysis_config(obj)
    if "seed" not in obj:
        obj = {**obj, "seed": ANALYSIS_SEED}
    return parse_config(obj)
