"""The decoders of the modes: a proposal rule, a verifier and a row reader (SPEC sections 4-6).

A block is draft -> verify -> commit (:func:`.block_loop.play`). A :class:`Decoder` (also named
:data:`RuleSet`) is what a mode is made of:

- ``rows``: where the block's rows are read (:mod:`.rows`; the seat of SPEC section 9);
- ``proposal``: how the block is drafted (:mod:`.proposals`, SPEC 4.1 and 5);
- ``verifier``: how the drafted block is verified, corrected or extended (:mod:`.verifiers`:
  token-wise SPEC 4, greedy SPEC 5, block SPEC 10, tree SPEC 11).

==============  =============================  =================  ==========================
decoder         proposal                       verifier           SPEC
==============  =============================  =================  ==========================
SPECULATIVE     ``SampledProposal``            ``TokenWise``      4
GREEDY          ``ArgmaxProposal``             ``Greedy``         5
AUTOREGRESSIVE  ``NoProposal`` (k = 0)         ``TokenWise``      5 (the bonus is the token)
BLOCK           ``SampledProposal``            ``BlockVerifier``  10
TREE            ``ChainsProposal`` (D chains)  ``TreeVerifier``   11
==============  =============================  =================  ==========================

**Exact distributions, for analysis.** Each rule states what it induces from the rows of one
context, without drawing anything: ``proposal.distribution(q)`` (the law of a proposal),
``verifier.acceptance_probability(p, q, x)``, ``verifier.correction_law(p, q)`` and
``verifier.bonus_law(p, q)`` (the token-wise verifier's parts state the same:
``verifier.acceptance.probability``, ``verifier.correction.distribution``, ...).

A catalogued mistake (``grading/catalogue.py``, ``grading/faulty.py``) is a decoder with one
rule changed: a proposal rule, a verifier (or one part of it) or a row reader
(:func:`swapped`). :data:`MODE_RULES` maps each mode to its decoder. This module also
re-exports the rule classes under their first names.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Optional, Protocol, Sequence

from .distributions import Dist
from .draws import Draws
from .proposals import Drafted
from .state import Counters

from .proposals import ArgmaxProposal, NoProposal, SampledProposal, point_mass  # noqa: F401
from .chains_proposal import ChainsProposal
from .rows import ConfigRows, ModelRows, RowReader  # noqa: F401
from .verifiers.block import BlockVerifier, LastPassing, ScaledResidual  # noqa: F401
from .verifiers.tree import TreeVerifier
from .verifiers.greedy import ArgmaxBonus, Greedy, TargetArgmaxCorrection, TargetArgmaxTest  # noqa: F401
from .verifiers.tokenwise import (  # noqa: F401
    Discard, RatioTest, ResidualCorrection, SampledBonus, TargetRowCorrection, TokenWise, Verdict, no_bonus,
)


class Proposal(Protocol):
    """A proposal rule (SPEC 4.1, 5, 11.1): drafts a block from the draft rows and the draws."""

    @property
    def name(self) -> str:
        """The rule's name."""

    @property
    def drafts(self) -> bool:
        """Whether the rule drafts (``False``: autoregressive's, k = 0)."""

    @property
    def uses_draw(self) -> bool:
        """Whether a proposal takes a draw (``False``: greedy's argmax)."""

    def room(self, config: Any, length: int) -> int:
        """How many proposals a block after ``length`` committed tokens drafts."""

    def draft(self, state: Any, rows: Any, stream: Draws, tokens: Optional[Sequence[Any]] = None) -> Drafted:
        """The drafted block of ``state`` (``tokens``: a caller's proposal instead)."""

    def distribution(self, q: Dist) -> Dist:
        """The exact law of one proposal drafted from the draft row ``q``."""


class Verifier(Protocol):
    """A verifier (SPEC 4, 5, 10, 11; :mod:`.verifiers`): verifies a drafted block, and reads
    what a block record commits and counts."""

    @property
    def bonus(self) -> SampledBonus:
        """Its bonus rule (SPEC 4.4)."""

    def verify(self, state: Any, rows: Any, drafted: Any, stream: Draws) -> Verdict:
        """The decisions, correction or bonus of ``drafted`` after ``state``."""

    def commits(self, block: dict) -> list:
        """The labels a block record commits."""

    def tally(self, block: dict, draws: int) -> Counters:
        """A block record's work counters (SPEC 7)."""


@dataclass(frozen=True)
class Decoder:
    """What :func:`.block_loop.play` applies: ``mode`` names the decoding mode these rules (or a
    catalogued variant of them) decode; ``proposal`` drafts, ``verifier`` verifies, ``rows``
    reads the rows (:class:`~.rows.ConfigRows`: the config's own, processed when it sets
    ``sampling``, SPEC section 9)."""

    mode: str
    proposal: Proposal
    verifier: Verifier
    rows: RowReader = ConfigRows()

    @property
    def bonus(self) -> SampledBonus:
        """The verifier's bonus rule (when a bonus is due: :func:`at_limit`)."""
        return self.verifier.bonus


RuleSet = Decoder
"""The name of :class:`Decoder` in the first version of this module."""


def at_limit(bonus, config, length: int, accepted: int) -> bool:
    """SPEC section 4.4: whether the ``accepted`` proposals after ``length`` committed tokens
    reach the limit, so that ``bonus`` (a bonus rule) draws no bonus (``bonus.limited``)."""
    return bonus.limited(config, length, accepted)


SPECULATIVE = Decoder("speculative", SampledProposal(), TokenWise())
"""SPEC section 4: speculative sampling."""
GREEDY = Decoder("greedy", ArgmaxProposal(), Greedy())
"""SPEC section 5: blockwise parallel (greedy) decoding (Stern et al. 2018)."""
AUTOREGRESSIVE = Decoder("autoregressive", NoProposal(), TokenWise())
"""SPEC section 5: ordinary sampling, one target token per block."""
BLOCK = Decoder("block", SampledProposal(), BlockVerifier())
"""SPEC section 10: block verification (Sun et al. 2025, algorithm 2)."""
TREE = Decoder("tree", ChainsProposal(), TreeVerifier())
"""SPEC section 11: several drafts (D chains) verified depth by depth (SpecInfer)."""
MODE_RULES = {"speculative": SPECULATIVE, "greedy": GREEDY, "autoregressive": AUTOREGRESSIVE, "block": BLOCK,
              "tree": TREE}
"""The correct decoder of each mode of ``Config.mode``."""

_DECODER_FIELDS = frozenset(f.name for f in fields(Decoder))


def swapped(rules: Decoder, **rule) -> Decoder:
    """``rules`` with the named rule(s) replaced: ``proposal``, ``verifier`` or ``rows`` of the
    decoder, or a part of its verifier (``acceptance``, ``correction``, ``bonus``,
    ``discard``), e.g. ``swapped(SPECULATIVE, correction=TargetRowCorrection())``: how a
    mode's variant (a catalogued mistake, the naive rule) is stated."""
    own = {k: v for k, v in rule.items() if k in _DECODER_FIELDS}
    parts = {k: v for k, v in rule.items() if k not in _DECODER_FIELDS}
    if parts:
        own["verifier"] = replace(own.get("verifier", rules.verifier), **parts)
    return replace(rules, **own)


NAIVE = swapped(SPECULATIVE, correction=TargetRowCorrection())
"""The naive rule of the explainer's warning: speculative sampling with the correction drawn
from the target p instead of the residual (the grading catalogue's ``resample-from-p``);
biased: its output is not the target's. Exact analysis reports its bias."""
