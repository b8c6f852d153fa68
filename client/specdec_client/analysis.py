"""Typed results of ``POST /v1/analysis``: the exact analysis of a configuration.

The service publishes every probability and expectation twice: as the nearest
float64 ``x`` and exactly as ``x_exact`` (``"n/d"`` or ``"n"``). These records
hold the exact values as :class:`fractions.Fraction` (read from the ``_exact``
strings; ``float(value)`` gives the float back), so a caller can compute with
them without rounding. ``raw`` keeps the JSON answer (``to_dict()``).

See ``docs/analysis.md`` for what each number means.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping, Optional

from .types import COUNTER_NAMES, Record, _floats


def exact(text: Any) -> Fraction:
    """A ``_exact`` string (``"3/4"``, ``"0"``) as a :class:`Fraction`.
    Raises ``ValueError``/``TypeError`` for anything else."""
    if not isinstance(text, str):
        raise TypeError(f"an exact value is a string \"n/d\" or \"n\", got {type(text).__name__}")
    return Fraction(text)


def _exact_or_none(text: Any) -> Optional[Fraction]:
    return None if text is None else exact(text)


Outcomes = dict[tuple[str, ...], Fraction]
"""``{(token, ...): Fraction}``: a distribution over the first tokens, in the service's order."""


def _outcomes(items: Any) -> Outcomes:
    return {tuple(o["tokens"]): exact(o["p_exact"]) for o in items}


@dataclass(frozen=True)
class ContextAnalysis(Record):
    """One context (``None`` at the empty prefix, else the last token): the target and
    draft rows, ``alpha`` = sum of min(p, q) (the probability that one drafted token is
    accepted there) and the ``residual`` (correction distribution, ``None`` where alpha is 1)."""

    context: Optional[str]
    p: tuple[float, ...]
    q: tuple[float, ...]
    alpha: Fraction
    residual: Optional[tuple[Fraction, ...]]

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "ContextAnalysis":
        residual = d["residual_exact"]
        return cls(d["context"], _floats(d["p"]), _floats(d["q"]), exact(d["alpha_exact"]),
                   None if residual is None else tuple(exact(x) for x in residual), raw=dict(d))


@dataclass(frozen=True)
class Expected(Record):
    """Expectations over all sessions: ``counters`` (SPEC section 7 names to exact
    expectations), ``committed_per_pass``, ``acceptance_rate`` (``None`` when nothing is
    verified) and ``speedup`` at the request's draft cost."""

    counters: dict[str, Any]
    committed_per_pass: Fraction
    acceptance_rate: Optional[Fraction]
    speedup: Fraction

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Expected":
        counters = {name: exact(d["counters_exact"][name]) for name in COUNTER_NAMES}
        return cls(counters, exact(d["committed_per_pass_exact"]), _exact_or_none(d["acceptance_rate_exact"]),
                   exact(d["speedup_exact"]), raw=dict(d))


@dataclass(frozen=True)
class Leviathan(Record):
    """Leviathan et al. 2023's closed form at the exact acceptance rate (floats):
    ``tokens_per_pass`` = (1 - a^(w+1)) / (1 - a) and ``speedup`` = tokens_per_pass / (1 + w c)."""

    acceptance_rate: float
    width: int
    tokens_per_pass: float
    speedup: float

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Leviathan":
        return cls(float(d["acceptance_rate"]), int(d["width"]), float(d["tokens_per_pass"]), float(d["speedup"]),
                   raw=dict(d))


@dataclass(frozen=True)
class SweepPoint(Record):
    """The config at another ``width``: ``committed_per_pass`` and ``speedup``, exact."""

    width: int
    committed_per_pass: Fraction
    speedup: Fraction

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "SweepPoint":
        return cls(int(d["width"]), exact(d["committed_per_pass_exact"]), exact(d["speedup_exact"]), raw=dict(d))


@dataclass(frozen=True)
class TreeSweepPoint(Record):
    """Mode tree (SPEC 11): one block from the empty prefix with no limit at ``drafts`` chains
    and ``width``: its expected committed and accepted tokens (exact)."""

    drafts: int
    width: int
    committed_per_pass: Fraction
    accepted_per_pass: Fraction

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "TreeSweepPoint":
        return cls(int(d["drafts"]), int(d["width"]), exact(d["committed_per_pass_exact"]),
                   exact(d["accepted_per_pass_exact"]), raw=dict(d))


@dataclass(frozen=True)
class OutputComparison(Record):
    """The exact distribution of the first ``depth`` tokens (``distribution``) against the
    target's (``target``), and their total variation ``tv`` (0 for speculative and
    autoregressive). Distributions are ``{(token, ...): Fraction}``."""

    depth: int
    distribution: Outcomes
    target: Outcomes
    tv: Fraction

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "OutputComparison":
        return cls(int(d["depth"]), _outcomes(d["distribution"]), _outcomes(d["target"]), exact(d["tv_exact"]),
                   raw=dict(d))


@dataclass(frozen=True)
class NaiveOutput(Record):
    """The output distribution when the correction is sampled from p (biased), and its
    total variation ``tv`` to the target's."""

    distribution: Outcomes
    tv: Fraction

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "NaiveOutput":
        return cls(_outcomes(d["distribution"]), exact(d["tv_exact"]), raw=dict(d))


@dataclass(frozen=True)
class NodeAcceptance(Record):
    """Mode tree with a ``tree`` setting: how often a node at ``context`` (``None`` at the empty
    prefix, else the last token) accepts one of the children its shape drafts at the first depth
    of a block (``accept``, exact; under ``"target_only"`` with both thresholds 1: E[p(children)],
    SPEC 12.4)."""

    context: Optional[str]
    accept: Fraction

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "NodeAcceptance":
        return cls(d["context"], exact(d["accept_exact"]), raw=dict(d))


@dataclass(frozen=True)
class TreeAnalysis(Record):
    """The tree of an analysis that sent ``tree`` (SPEC 12): ``shape``, ``verify``,
    ``branching`` (shape distinct: b_1..b_k as drafted, else ``None``), the thresholds
    (verify target_only, exact, else ``None``), ``nodes`` (:class:`NodeAcceptance` per context)
    and ``verdict`` (``"lossless"`` or ``"lossy"``)."""

    shape: str
    verify: str
    branching: Optional[tuple[int, ...]]
    threshold_single: Optional[Fraction]
    threshold_acc: Optional[Fraction]
    nodes: tuple[NodeAcceptance, ...]
    verdict: str

    @property
    def lossy(self) -> bool:
        """True when the output is not exactly the target's (thresholds below 1)."""
        return self.verdict == "lossy"

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "TreeAnalysis":
        branching = d.get("branching")
        return cls(str(d["shape"]), str(d["verify"]), None if branching is None else tuple(int(b) for b in branching),
                   _exact_or_none(d.get("threshold_single_exact")), _exact_or_none(d.get("threshold_acc_exact")),
                   tuple(NodeAcceptance.from_dict(n) for n in d.get("nodes", ())), str(d["verdict"]), raw=dict(d))


@dataclass(frozen=True)
class Fitted(Record):
    """The defaults the service cut to fit its budget: the ``widths`` swept (the longest 1..n of
    1-8 unless the request sent them), ``drafts`` (mode tree: the D of ``tree_sweep``, else
    ``None``), this analysis's ``cost``, the ``default_cost`` the defaults would have had (with
    ``default_widths``, the request's or 1-8, and D 1-8), and the route's ``budget`` (analysis
    units)."""

    widths: tuple[int, ...]
    drafts: Optional[tuple[int, ...]]
    cost: int
    default_widths: tuple[int, ...]
    default_cost: int
    budget: int

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Fitted":
        drafts = d.get("drafts")
        return cls(tuple(int(w) for w in d["widths"]), None if drafts is None else tuple(int(x) for x in drafts),
                   int(d["cost"]), tuple(int(w) for w in d["default_widths"]), int(d["default_cost"]),
                   int(d["budget"]), raw=dict(d))


@dataclass(frozen=True)
class Analysis(Record):
    """The answer of ``POST /v1/analysis`` (``Client.analyze``).

    ``config``: the normalised settings (a dict, no seed); ``contexts``; ``expected``;
    ``leviathan`` (``None`` when autoregressive); ``draft_cost``; ``sweep`` and
    ``best_width``; ``output``; ``naive`` (speculative only, else ``None``);
    ``tree_sweep`` (mode tree only, else ``None``: D = 1..8 at each width); ``tree`` (a
    :class:`TreeAnalysis` when the config sent ``tree``, else ``None``); ``fitted`` (a
    :class:`Fitted` when the service cut a default to fit its budget, else ``None``).
    """

    config: dict[str, Any]
    contexts: tuple[ContextAnalysis, ...]
    expected: Expected
    leviathan: Optional[Leviathan]
    draft_cost: Fraction
    sweep: tuple[SweepPoint, ...]
    best_width: int
    output: OutputComparison
    naive: Optional[NaiveOutput]
    tree_sweep: Optional[tuple[TreeSweepPoint, ...]] = None
    tree: Optional[TreeAnalysis] = None
    fitted: Optional[Fitted] = None

    @property
    def block_comparison(self) -> Optional[dict[int, dict[str, Fraction]]]:
        """Mode block only (``None`` otherwise): ``{width: {"block": E[accepted] of the first
        block, "token_wise": the same under token-wise verification}}`` as exact fractions
        (SPEC 10: 219/200 against 207/200 at width 2 on the toy with the biased draft)."""
        block = None if self.raw is None else self.raw.get("block")
        if block is None:
            return None
        return {row["width"]: {"block": exact(row["accepted_per_block_exact"]),
                               "token_wise": exact(row["token_wise_accepted_per_block_exact"])}
                for row in block["comparison"]}

    @property
    def tree_verdict(self) -> Optional[str]:
        """Mode tree with a ``tree`` setting only (``None`` otherwise): ``"lossless"`` when the
        output is exactly the target's, ``"lossy"`` when not (SPEC 12.4's thresholds below 1:
        ``output.tv`` is then the exact price)."""
        return None if self.tree is None else self.tree.verdict

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Analysis":
        return cls(
            dict(d["config"]),
            tuple(ContextAnalysis.from_dict(c) for c in d["contexts"]),
            Expected.from_dict(d["expected"]),
            None if d["leviathan"] is None else Leviathan.from_dict(d["leviathan"]),
            exact(d["draft_cost_exact"]),
            tuple(SweepPoint.from_dict(s) for s in d["sweep"]),
            int(d["best_width"]),
            OutputComparison.from_dict(d["output"]),
            None if d["naive"] is None else NaiveOutput.from_dict(d["naive"]),
            None if d.get("tree_sweep") is None else tuple(TreeSweepPoint.from_dict(t) for t in d["tree_sweep"]),
            None if d.get("tree") is None else TreeAnalysis.from_dict(d["tree"]),
            None if d.get("fitted") is None else Fitted.from_dict(d["fitted"]),
            raw=dict(d),
        )
