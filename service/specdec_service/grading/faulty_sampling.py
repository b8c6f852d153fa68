"""The catalogued mistakes of row processing (SPEC section 9): a row reader or a proposal rule
with one thing changed.

SPEC section 9 processes every row before any rule reads it: the target's always (p'), the
draft's unless ``draft`` is ``"raw"`` (q'); "either way the q in the ratio and in the residual is
the row the proposal was drawn from". The engine does this in one place, the decoder's row
reader (:class:`~specdec_service.engine.rows.ConfigRows`: ``Config.rows``), and the drafted
block carries the row each proposal was drawn from. The mistakes here are the public faults of
production implementations, each one change to that:

- :class:`TargetLeftRaw` (vLLM PR #10198: the draft's probabilities filtered by top-p, the
  target's left raw): a row reader whose target rows are the model's own p, the draft's as the
  config says;
- :class:`RawDraftRowInRatio` (transformers #47932: the ratio used the raw draft probabilities
  while the proposal came from the processed logits): a proposal rule that draws each proposal
  from q' (and records q' as the row it drew from) but hands the verifier the raw q, so the
  acceptance ratio p'(x)/q(x) and the residual max(p' - q, 0) use the raw row;
- :class:`FloatTopPRows` (the float top-p test of HF-style warpers,
  ``cumsum <= 1 - top_p`` over the probabilities in ascending order): a row reader whose step 3
  (top-p) is that float test instead of SPEC's exact one. In exact arithmetic the two are the
  same rule; in float64 ``1 - 0.8`` is 0.19999999999999996, below 0.2, so top-p 0.8 on
  [0.5, 0.3, 0.2] keeps C (:func:`float_top_p`).

Without ``sampling`` (or with an empty one) each is the correct rule: nothing is processed, so
there is nothing to get wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Optional, Sequence

from ..engine.distributions import Dist
from ..engine.draws import Draws
from ..engine.proposals import Drafted, SampledProposal
from ..engine.rows import ConfigRows, Rows
from ..engine.sampling import Sampling, process, with_min_p


def _processing(config) -> Optional[Sampling]:
    """The config's sampling parameters when they process rows, else ``None``."""
    sampling = config.sampling
    return None if sampling is None or sampling.empty else sampling


@dataclass(frozen=True)
class TargetLeftRaw(ConfigRows):
    """Mistake (vLLM PR #10198): the target's rows are left raw (the model's p) while the draft's
    are processed as the config says (q', or q with ``draft`` ``"raw"``): the acceptance test, the
    residual and the bonus read p instead of p'. Output law: not p' (SPEC 9's worked example:
    total variation 4/17 from p' over the first token)."""

    name: str = "target-left-raw"

    def read(self, config) -> Rows:
        """The config's rows with the target's replaced by the model's own."""
        rows = config.rows
        if _processing(config) is None:
            return rows
        return Rows(config.model_rows.target, rows.draft)


@dataclass(frozen=True)
class RawDraftRowInRatio(SampledProposal):
    """Mistake (transformers #47932): each proposal is drawn from the processed draft row q' (its
    step records q', the row it drew from), but the verifier is handed the raw row q of the same
    context: the ratio p'(x)/q(x) and the residual max(p' - q, 0) use q, not the row the
    proposal was drawn from. Output law: not p' (SPEC 9's worked example: total variation 25/136
    over the first token). With ``draft`` ``"raw"`` the two rows are the same and nothing shows."""

    name: str = "raw-q-in-ratio"

    def extend(self, drafted: Drafted, config, rows, stream: Draws, context: Optional[int], count: int,
               tokens: Optional[Sequence[int]]) -> Optional[int]:
        """The correct drafting (:meth:`SampledProposal.extend`); then each new proposal's
        carried row is the model's raw draft row at its context."""
        first = len(drafted.tokens)
        last = super().extend(drafted, config, rows, stream, context, count, tokens)
        if _processing(config) is not None:
            contexts = [context, *drafted.tokens[first:-1]]
            drafted.rows[first:] = [config.model_rows.draft(c) for c in contexts]
        return last


def float_top_p(row: Dist, top_p: Fraction) -> Dist:
    """The float top-p test (the mistake of :class:`FloatTopPRows`): the tokens in ascending order
    of probability (the reverse of SPEC 9.3's order: ties in reverse vocabulary order), each
    probability as its nearest float64, summed in float64 in that order; a token is removed iff
    the running sum up to and including it is ``<= 1 - top_p`` (``1.0 - float(top_p)`` in
    float64); the most probable token is always kept. In exact arithmetic this keeps exactly the
    tokens SPEC 9.3 keeps (the sum up to a token is 1 minus the mass before it in SPEC's order);
    in float64 it keeps C of [0.5, 0.3, 0.2] at top_p 0.8, since 0.2 > 1.0 - 0.8."""
    weights = row.weights
    descending = sorted(range(len(weights)), key=lambda i: -weights[i])  # SPEC's order (stable)
    threshold = 1.0 - float(top_p)
    kept = list(weights)
    cumulative = 0.0
    for i in reversed(descending[1:]):
        cumulative += row.floats[i]
        if cumulative <= threshold:
            kept[i] = 0
    return Dist.of_weights(kept)


def process_float_top_p(row: Dist, sampling: Sampling) -> Dist:
    """SPEC section 9's processing (:func:`~specdec_service.engine.sampling.process`) with step 3
    (top-p) done by :func:`float_top_p`: temperature and top-k as SPEC says, the float top-p
    test, then min-p as SPEC says."""
    if sampling.top_p is None:
        return process(row, sampling)
    row = float_top_p(process(row, replace(sampling, top_p=None, min_p=None)), sampling.top_p)
    return row if sampling.min_p is None else with_min_p(row, sampling.min_p)


@dataclass(frozen=True)
class FloatTopPRows(ConfigRows):
    """Mistake: top-p by the float test ``cumsum <= 1 - top_p`` (:func:`float_top_p`) instead of
    SPEC 9.3's exact "the mass before the token is strictly less than top_p": the target's rows
    (and the draft's, unless ``draft`` is ``"raw"``) processed with that one step changed. With
    top_p 0.8 the toy's first row keeps C, which SPEC drops. Rows processed once per config."""

    name: str = "float-top-p"

    def read(self, config) -> Rows:
        """The config's rows, processed with the float top-p test when ``top_p`` is set."""
        sampling = _processing(config)
        if sampling is None or sampling.top_p is None:
            return config.rows
        memo = config.__dict__.setdefault("_float_top_p_rows", {})
        rows = memo.get(sampling)
        if rows is None:
            target = _table(config.target, sampling).__getitem__
            draft = _table(config.draft, sampling).__getitem__ if sampling.draft == "processed" else config.model_rows.draft
            rows = memo[sampling] = Rows(target, draft)
        return rows


def _table(model, sampling: Sampling) -> dict:
    """``{token: row after token processed by process_float_top_p}``, ``None`` the empty prefix."""
    return {None: process_float_top_p(model.start, sampling),
            **{i: process_float_top_p(row, sampling) for i, row in enumerate(model.rows)}}
