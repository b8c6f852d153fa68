"""The catalogue of classic mistakes in implementations of speculative sampling.

Each :class:`Mistake` is a named variant of the engine: a :class:`~.faulty.Faults` value with
one switch on (see :mod:`.faulty`), the SPEC rule it breaks, a hint for the student, and a small
example config whose trace shows it, with the first divergence from the reference
(``example_divergence``, a pointer into the trace). ``docs/grading.md`` documents every entry;
``tests/test_grading_catalogue.py`` checks each example.
"""

from __future__ import annotations

from dataclasses import dataclass

from .faulty import Faults


@dataclass(frozen=True)
class Mistake:
    """One catalogued mistake: ``id`` (kebab-case), ``title``, ``rule`` (the SPEC section it
    breaks), ``hint`` (what to fix, for the student), ``faults`` (its switch), ``example`` (a
    config in JSON form that shows it) and ``example_divergence`` (the pointer of the first
    divergence of the example's trace from the reference)."""

    id: str
    title: str
    rule: str
    hint: str
    faults: Faults
    example: dict
    example_divergence: str

    def to_json(self) -> dict:
        """``{"id", "title", "rule", "hint", "example", "example_divergence"}``."""
        return {"id": self.id, "title": self.title, "rule": self.rule, "hint": self.hint,
                "example": self.example, "example_divergence": self.example_divergence}


def _toy(seed: int, width: int = 3, limit: int = 8, draft: str = "biased") -> dict:
    return {"target": "toy", "draft": draft, "mode": "speculative", "width": width, "seed": seed, "limit": limit, "eos": None}


CATALOGUE: tuple[Mistake, ...] = (
    Mistake(
        "resample-from-p", "Correction sampled from p instead of the residual",
        "SPEC section 4.3",
        "After a rejection, sample the correction from max(p - q, 0) normalised, not from the target row p: "
        "sampling from p over-represents the tokens the draft already proposes too often.",
        Faults(correction="p"), _toy(1), "#/blocks/0/correction/distribution/0"),
    Mistake(
        "residual-not-clipped", "Residual p - q not clipped at zero",
        "SPEC section 4.3",
        "Clip the residual at zero, r(y) = max(p(y) - q(y), 0), before normalising: negative entries are not probabilities.",
        Faults(correction="unclipped"), _toy(1), "#/blocks/0/correction/distribution/0"),
    Mistake(
        "residual-not-normalised", "Residual max(p - q, 0) not normalised",
        "SPEC section 4.3",
        "Divide max(p - q, 0) by its sum before sampling from it: unnormalised, its entries sum to less than 1.",
        Faults(correction="unnormalised"), _toy(1), "#/blocks/0/correction/distribution/1"),
    Mistake(
        "keep-after-rejection", "Proposals after the first rejection kept",
        "SPEC section 4.3",
        "After the first rejection, discard the remaining proposals: they were drafted after a token that is not in the output.",
        Faults(discard=False), _toy(1), "#/blocks/0/discarded/0"),
    Mistake(
        "draft-from-discarded", "Next block drafted after the rejected proposal",
        "SPEC section 4.3",
        "Start the next block's draft from the committed output (ending in the correction token), "
        "not from the draft's state after the rejected proposal.",
        Faults(draft_from_discarded=True), _toy(1), "#/blocks/1/proposal/steps/0/context"),
    Mistake(
        "no-bonus", "No bonus token when every proposal is accepted",
        "SPEC section 4.4",
        "When all k proposals are accepted and the output is below the limit, sample one bonus token from the target with a fresh draw.",
        Faults(bonus="never"), _toy(1, draft="aligned"), "#/blocks/0/bonus"),
    Mistake(
        "bonus-past-limit", "Bonus token drawn at the output limit",
        "SPEC section 4.4",
        "Draw no bonus when the accepted proposals already reach the limit (L + k = limit): the output must stop at the limit.",
        Faults(bonus="past-limit"), _toy(1, width=4, limit=4, draft="aligned"), "#/blocks/0/bonus"),
    Mistake(
        "bonus-from-draft", "Bonus token sampled from the draft",
        "SPEC section 4.4",
        "Sample the bonus token from the target row p after the accepted prefix, not from the draft row q.",
        Faults(bonus="draft"), _toy(4), "#/blocks/0/bonus/p/0"),
    Mistake(
        "inverted-ratio", "Acceptance on the inverted ratio q/p",
        "SPEC section 4.2",
        "Accept a proposal x iff u < p(x) / q(x) (target over draft), not q(x) / p(x).",
        Faults(acceptance="inverted"), _toy(1), "#/blocks/0/verification/0/ratio"),
    Mistake(
        "skip-draw-when-p-ge-q", "No draw when p(x) >= q(x)",
        "SPEC section 4.2",
        "Use a draw for every verification, even when p(x) >= q(x) makes acceptance certain: the position must advance by one.",
        Faults(acceptance="skip-when-p-ge-q"), _toy(1), "#/blocks/1/verification/0/draw"),
    Mistake(
        "interleaved-draws", "Draft and verification draws interleaved",
        "SPEC section 4.1",
        "Draft all k proposals first (draws n .. n+k-1), then verify them with the following draws; do not alternate draft and verify.",
        Faults(interleave=True), _toy(1), "#/blocks/0/proposal/tokens/1"),
    Mistake(
        "greedy-acceptance", "Greedy (argmax) acceptance in sampling mode",
        "SPEC section 4.2",
        "In mode speculative accept with the random test u < p(x)/q(x), not by comparing x with the target's argmax.",
        Faults(acceptance="greedy"), _toy(1), "#/blocks/0/verification/0/draw"),
    Mistake(
        "accepted-counts-all-tests", "Accepted proposals counted instead of the accepted prefix",
        "SPEC sections 4.2 and 7",
        "Stop verifying at the first rejection, and count as accepted only the accepted prefix, not every proposal that passed its test.",
        Faults(verify_all=True), _toy(1), "#/blocks/0/verification/2"),
    Mistake(
        "reused-rejection-draw", "Correction reuses the rejection's draw",
        "SPEC section 4.3",
        "Sample the correction token with a fresh draw (the next position), not with the u that rejected the proposal.",
        Faults(reuse_draw=True), _toy(1), "#/blocks/0/correction/draw/position"),
)
"""Every catalogued mistake, in the order reports list them."""

BY_ID = {m.id: m for m in CATALOGUE}
