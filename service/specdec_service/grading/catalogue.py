"""The catalogue of classic mistakes in implementations of speculative, greedy, autoregressive, block and tree decoding.

Each :class:`Mistake` is a named variant of the engine: a mode's correct decoder with one rule
changed (see :mod:`.faulty`: a proposal rule, a verifier, or one part of the token-wise verifier;
:mod:`.faulty_tree` for mode tree; :mod:`.faulty_sampling` for SPEC 9's row processing: a row reader
or a proposal rule; ``greedy-acceptance`` swaps the acceptance test and its correction together, as mode greedy pairs
them), the SPEC rule it breaks, a hint for the student, and a small
example config whose trace shows it, with the first divergence from the reference
(``example_divergence``, a pointer into the trace). ``docs/grading.md`` documents every entry;
``tests/test_grading_catalogue.py`` checks each example.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.decoders import (
    AUTOREGRESSIVE, BLOCK, GREEDY, SPECULATIVE, TREE, ArgmaxProposal, RuleSet, TargetArgmaxCorrection,
)
from .faulty_sampling import FloatTopPRows, RawDraftRowInRatio, TargetLeftRaw
from .faulty_tree import (
    DisagreeingChainsContinue, DraftRowTest, InclusiveCoinTest, RepeatedChildTested, ResidualNotUpdated, SharedDraws,
    ShortestChainDepth, SiblingResidualKept, SiblingTestedAgainstQ, tree_decoder,
)
from .faulty import (
    ResidualOrFirstToken, CumprodThresholds, RowEarlyThresholds, BONUS_PAST_LIMIT, INTERLEAVED, BlockRunsTokenWise, FirstFailing, UnscaledResidual, KEEP_AND_LIST_REST, KEEP_REST, NO_BONUS, SKIP_ONE, VERIFY_ALL, ArgmaxBonusFromDraft,
    ArgmaxTestRecordingRatio, ArgmaxTiesLast, BonusFromDraft, DraftAfterRejected, DraftArgmaxTest, InvertedRatio,
    ReusedDrawCorrection, SkipDrawWhenCertain, TargetRowCorrection, UnclippedResidual, UnnormalisedResidual, swapped,
)


@dataclass(frozen=True)
class Mistake:
    """One catalogued mistake: ``id`` (kebab-case), ``title``, ``rule`` (the SPEC section it
    breaks), ``hint`` (what to fix, for the student), ``rules`` (the variant's decoder: a
    correct one with one rule changed), ``example`` (a config in JSON form that shows it) and
    ``example_divergence`` (the pointer of the first divergence of the example's trace from the
    reference)."""

    id: str
    title: str
    rule: str
    hint: str
    rules: RuleSet
    example: dict
    example_divergence: str

    @property
    def mode(self) -> str:
        """The decoding mode the mistake is made in (its decoder's)."""
        return self.rules.mode

    @property
    def faults(self) -> RuleSet:
        """:attr:`rules` (the name of the catalogue's first version, kept for callers)."""
        return self.rules

    def to_json(self) -> dict:
        """``{"id", "title", "rule", "hint", "example", "example_divergence"}``."""
        return {"id": self.id, "title": self.title, "rule": self.rule, "hint": self.hint,
                "example": self.example, "example_divergence": self.example_divergence}


def _toy(seed: int, width: int = 3, limit: int = 8, draft="biased", mode: str = "speculative") -> dict:
    return {"target": "toy", "draft": draft, "mode": mode, "width": width, "seed": seed, "limit": limit, "eos": None}


WORKED_SAMPLING = {"temperature": 0.5, "top_k": 2, "top_p": 0.8}
"""The sampling parameters of SPEC section 9's worked example (toy target, biased draft)."""


def _sampled(seed: int, sampling: dict, width: int = 3, limit: int = 8) -> dict:
    return {**_toy(seed, width=width, limit=limit), "sampling": sampling}


def _tree(seed: int, width: int = 2, drafts: int = 2, limit: int = 8, draft="biased", **more) -> dict:
    return {"target": "toy", "draft": draft, "mode": "tree", "width": width, "seed": seed, "limit": limit, "eos": None,
            "drafts": drafts, **more}


TREE_EOS_TARGET = {"vocab": ["A", "B", "$"], "start": [0.5, 0.3, 0.2],
                   "next": {"A": [0.2, 0.5, 0.3], "B": [0.6, 0.1, 0.3], "$": [0.3, 0.3, 0.4]}}
TREE_EOS_DRAFT = {"vocab": ["A", "B", "$"], "start": [0.4, 0.2, 0.4],
                  "next": {"A": [0.1, 0.8, 0.1], "B": [0.3, 0.3, 0.4], "$": [0.2, 0.2, 0.6]}}
"""A custom pair whose draft often drafts the EOS ``"$"`` first (chains of different lengths, SPEC 11)."""


TIED_DRAFT = {"vocab": ["A", "B", "C"], "start": [0.4, 0.4, 0.2],
              "next": {"A": [0.4, 0.4, 0.2], "B": [0.4, 0.4, 0.2], "C": [0.4, 0.4, 0.2]}}
"""A draft whose every row ties A and B for the most probable token (the greedy tie-break shows)."""

FLAT_DRAFT = {"vocab": ["A", "B", "C"], "start": [0.6, 0.2, 0.2],
              "next": {"A": [0.6, 0.2, 0.2], "B": [0.6, 0.2, 0.2], "C": [0.6, 0.2, 0.2]}}
"""A draft under which, against the toy, scaling block verification's residual by w_tau < 1 shows."""


ZERO_C_TARGET = {"vocab": ["A", "B", "C"], "start": [0.5, 0.5, 0],
                 "next": {"A": [0.5, 0.5, 0], "B": [0.5, 0.5, 0], "C": [0.5, 0.5, 0]}}
C_FIRST_DRAFT = {"vocab": ["A", "B", "C"], "start": [0.3, 0.1, 0.6],
                 "next": {"A": [0.3, 0.1, 0.6], "B": [0.3, 0.1, 0.6], "C": [0.3, 0.1, 0.6]}}
"""A target that never gives C and a draft whose most probable token is always C: a beam of 2
drafts offers C first, a child of target probability 0 (SPEC 12.1.3, 12.4), at every node."""

U_ZERO_SEED = 4299046960718438
"""A seed whose draw 2 is u = 0 exactly (raw z = 0x319, so z >> 11 = 0; SPEC 2): SplitMix64's
finaliser is a bijection, so such a seed is constructed, not searched for (docs/grading.md,
"tree-inclusive-coin-test"). With width 1 every beam block draws twice (its root's test, then the
correction or the bonus), so draw 2 is the test of block 1's root."""


CATALOGUE: tuple[Mistake, ...] = (
    Mistake(
        "resample-from-p", "Correction sampled from p instead of the residual",
        "SPEC section 4.3",
        "After a rejection, sample the correction from max(p - q, 0) normalised, not from the target row p: "
        "sampling from p over-represents the tokens the draft already proposes too often.",
        swapped(SPECULATIVE, correction=TargetRowCorrection()), _toy(1), "#/blocks/0/correction/distribution/0"),
    Mistake(
        "residual-not-clipped", "Residual p - q not clipped at zero",
        "SPEC section 4.3",
        "Clip the residual at zero, r(y) = max(p(y) - q(y), 0), before normalising: negative entries are not probabilities.",
        swapped(SPECULATIVE, correction=UnclippedResidual()), _toy(1), "#/blocks/0/correction/distribution/0"),
    Mistake(
        "residual-not-normalised", "Residual max(p - q, 0) not normalised",
        "SPEC section 4.3",
        "Divide max(p - q, 0) by its sum before sampling from it: unnormalised, its entries sum to less than 1.",
        swapped(SPECULATIVE, correction=UnnormalisedResidual()), _toy(1), "#/blocks/0/correction/distribution/1"),
    Mistake(
        "keep-after-rejection", "Proposals after the first rejection kept",
        "SPEC section 4.3",
        "After the first rejection, discard the remaining proposals: they were drafted after a token that is not in the output.",
        swapped(SPECULATIVE, verifier=KEEP_REST), _toy(1), "#/blocks/0/discarded/0"),
    Mistake(
        "draft-from-discarded", "Next block drafted after the rejected proposal",
        "SPEC section 4.3",
        "Start the next block's draft from the committed output (ending in the correction token), "
        "not from the draft's state after the rejected proposal.",
        swapped(SPECULATIVE, proposal=DraftAfterRejected()), _toy(1), "#/blocks/1/proposal/steps/0/context"),
    Mistake(
        "no-bonus", "No bonus token when every proposal is accepted",
        "SPEC section 4.4",
        "When all k proposals are accepted and the output is below the limit, sample one bonus token from the target with a fresh draw.",
        swapped(SPECULATIVE, bonus=NO_BONUS), _toy(1, draft="aligned"), "#/blocks/0/bonus"),
    Mistake(
        "bonus-past-limit", "Bonus token drawn at the output limit",
        "SPEC section 4.4",
        "Draw no bonus when the accepted proposals already reach the limit (L + k = limit): the output must stop at the limit.",
        swapped(SPECULATIVE, bonus=BONUS_PAST_LIMIT), _toy(1, width=4, limit=4, draft="aligned"), "#/blocks/0/bonus"),
    Mistake(
        "bonus-from-draft", "Bonus token sampled from the draft",
        "SPEC section 4.4",
        "Sample the bonus token from the target row p after the accepted prefix, not from the draft row q.",
        swapped(SPECULATIVE, bonus=BonusFromDraft()), _toy(4), "#/blocks/0/bonus/p/0"),
    Mistake(
        "inverted-ratio", "Acceptance on the inverted ratio q/p",
        "SPEC section 4.2",
        "Accept a proposal x iff u < p(x) / q(x) (target over draft), not q(x) / p(x).",
        swapped(SPECULATIVE, acceptance=InvertedRatio()), _toy(1), "#/blocks/0/verification/0/ratio"),
    Mistake(
        "skip-draw-when-p-ge-q", "No draw when p(x) >= q(x)",
        "SPEC section 4.2",
        "Use a draw for every verification, even when p(x) >= q(x) makes acceptance certain: the position must advance by one.",
        swapped(SPECULATIVE, acceptance=SkipDrawWhenCertain()), _toy(1), "#/blocks/1/verification/0/draw"),
    Mistake(
        "interleaved-draws", "Draft and verification draws interleaved",
        "SPEC section 4.1",
        "Draft all k proposals first (draws n .. n+k-1), then verify them with the following draws; do not alternate draft and verify.",
        swapped(SPECULATIVE, proposal=INTERLEAVED), _toy(1), "#/blocks/0/proposal/tokens/1"),
    Mistake(
        "greedy-acceptance", "Greedy (argmax) acceptance in sampling mode",
        "SPEC section 4.2",
        "In mode speculative accept with the random test u < p(x)/q(x), not by comparing x with the target's argmax.",
        swapped(SPECULATIVE, acceptance=ArgmaxTestRecordingRatio(), correction=TargetArgmaxCorrection()), _toy(1), "#/blocks/0/verification/0/draw"),
    Mistake(
        "accepted-counts-all-tests", "Accepted proposals counted instead of the accepted prefix",
        "SPEC sections 4.2 and 7",
        "Stop verifying at the first rejection, and count as accepted only the accepted prefix, not every proposal that passed its test.",
        swapped(SPECULATIVE, verifier=VERIFY_ALL), _toy(1), "#/blocks/0/verification/2"),
    Mistake(
        "reused-rejection-draw", "Correction reuses the rejection's draw",
        "SPEC section 4.3",
        "Sample the correction token with a fresh draw (the next position), not with the u that rejected the proposal.",
        swapped(SPECULATIVE, correction=ReusedDrawCorrection()), _toy(1), "#/blocks/0/correction/draw/position"),
    Mistake(
        "argmax-proposals-tested-as-samples", "Argmax proposals verified as if they were samples",
        "SPEC section 4.1",
        "In mode speculative, draw each proposal from the draft row with its own draw (d = sample(q, u)), not the draft's "
        "most probable token: the test u < p(x)/q(x) is only correct for proposals sampled from q.",
        swapped(SPECULATIVE, proposal=ArgmaxProposal()), _toy(1), "#/blocks/0/proposal/tokens/2"),
    Mistake(
        "committed-and-discarded", "Proposals after the rejection committed and also listed as discarded",
        "SPEC section 4.3",
        "After the first rejection, the later proposals are discarded: list them under discarded and do not commit them; "
        "the block commits the accepted prefix and the correction token only.",
        swapped(SPECULATIVE, verifier=KEEP_AND_LIST_REST), _toy(1), "#/blocks/0/committed/2"),
    Mistake(
        "greedy-ties-to-last", "Greedy draft breaks ties toward the last token",
        "SPEC section 5",
        "When two tokens are equally most probable, the greedy draft proposes the earliest one in vocabulary order, not the last.",
        swapped(GREEDY, proposal=ArgmaxTiesLast()), _toy(0, draft=TIED_DRAFT, mode="greedy"), "#/blocks/0/proposal/tokens/0"),
    Mistake(
        "greedy-accepts-draft-argmax", "Greedy verification against the draft's argmax",
        "SPEC section 5",
        "In mode greedy, accept a proposal only while it equals the target's most probable token, not the draft's.",
        swapped(GREEDY, acceptance=DraftArgmaxTest()), _toy(0, mode="greedy"), "#/blocks/0/verification/1/accepted"),
    Mistake(
        "greedy-bonus-from-draft", "Greedy bonus taken from the draft",
        "SPEC section 5",
        "In mode greedy, when every proposal matches, add the target's most probable token as the bonus, not the draft's.",
        swapped(GREEDY, bonus=ArgmaxBonusFromDraft()), _toy(0, width=1, mode="greedy"), "#/blocks/0/bonus/p/0"),
    Mistake(
        "autoregressive-from-draft", "Autoregressive token sampled from the draft",
        "SPEC section 5",
        "In mode autoregressive, sample each token from the target row p with the next draw; the draft is not used.",
        swapped(AUTOREGRESSIVE, bonus=BonusFromDraft()), _toy(1, mode="autoregressive"), "#/blocks/0/sample/p/0"),
    Mistake(
        "autoregressive-skipped-draw", "Autoregressive decoding skips a draw",
        "SPEC section 2",
        "Use the draws one after another: each token takes the next unused draw (position n, then n + 1), none is skipped.",
        swapped(AUTOREGRESSIVE, bonus=SKIP_ONE), _toy(1, mode="autoregressive"), "#/blocks/0/sample/draw/position"),
    Mistake(
        "block-runs-token-wise", "Mode block runs the token-wise rule",
        "SPEC section 10",
        "In mode block judge the drafted block as a whole: compute the weights w_i and thresholds h_i, draw all k etas, "
        "and commit up to the last i with eta_i < h_i; testing each proposal by its own ratio and stopping at the first "
        "rejection is the token-wise rule (vllm-ascend #7807: a block mode that silently ran it).",
        swapped(BLOCK, verifier=BlockRunsTokenWise()), _toy(4, width=2, mode="block"), "#/blocks/0/verification/0/weight"),
    Mistake(
        "block-first-failing-eta", "Block verification stops at the first failing eta",
        "SPEC section 10",
        "tau is the largest i with eta_i < h_i, not the number of etas that pass before the first that fails: a "
        "proposal whose own eta fails is still committed when a later eta passes.",
        swapped(BLOCK, choice=FirstFailing()), _toy(4, width=2, mode="block"), "#/blocks/0/verification/0/accepted"),
    Mistake(
        "block-unscaled-residual", "Block correction from the unscaled residual",
        "SPEC section 10",
        "After a block rejection at tau < k, draw the correction from max(w_tau * p - q, 0) normalised, scaled by the "
        "weight w_tau of the accepted prefix, not from max(p - q, 0).",
        swapped(BLOCK, correction=UnscaledResidual()), _toy(21, width=3, draft=FLAT_DRAFT, mode="block"),
        "#/blocks/0/correction/distribution/1"),
    Mistake(
        "tree-residual-not-updated", "Tree: every candidate tested against p (residual not updated)",
        "SPEC section 11.2",
        "After a candidate is rejected, test the next candidate of the same depth against r = max(r - q, 0) normalised, "
        "not against p again: the rejection tells you the target's token is not where the draft put its mass.",
        swapped(TREE, verifier=ResidualNotUpdated()), _tree(16), "#/blocks/0/verification/1/r/0"),
    Mistake(
        "tree-tested-against-draft-row", "Tree: candidates tested against the draft's row instead of r",
        "SPEC section 11.2",
        "Accept a candidate y iff u * q(y) < r(y), with r the target's (residual) row; testing against the draft's own "
        "row q accepts every candidate.",
        swapped(TREE, verifier=DraftRowTest()), _tree(16), "#/blocks/0/verification/0/r/0"),
    Mistake(
        "tree-disagreeing-chains-continue", "Tree: chains that disagree with the accepted token go on",
        "SPEC section 11.2",
        "After y is accepted at a depth, only the chains whose token there is y stay alive: the others were drafted after "
        "another token and their later tokens are not candidates.",
        swapped(TREE, verifier=DisagreeingChainsContinue()), _tree(16), "#/blocks/0/verification/1/alive/0"),
    Mistake(
        "tree-shared-draws", "Tree: all chains drafted from the same draws",
        "SPEC section 11.1",
        "Draft the D chains one after another with their own draws (chain 1's draws first, then chain 2's): chains drawn "
        "from the same draws are copies, not independent drafts.",
        swapped(TREE, proposal=SharedDraws()), _tree(16), "#/blocks/0/proposal/tokens/2"),
    Mistake(
        "tree-bonus-while-a-chain-goes-on", "Tree: bonus drawn while an alive chain still has a token",
        "SPEC section 11.4",
        "Draw the bonus only when no alive chain has a token at the next depth; a chain that ended early (after a drafted "
        "EOS) does not end the tree.",
        swapped(TREE, verifier=ShortestChainDepth()),
        _tree(0, width=3, drafts=3, target=TREE_EOS_TARGET, draft=TREE_EOS_DRAFT, eos="$"), "#/blocks/0/verification/2"),
    Mistake(
        "tree-distinct-tested-against-q", "Tree: distinct siblings tested against the fixed q",
        "SPEC section 12.3",
        "A sibling drawn without replacement comes from s_j (q without the siblings before it, normalised): test it "
        "with u * s_j(y) < r(y) and subtract s_j from r on a rejection, not q (recursive rejection sampling, Jeon et al. "
        "2024); against q the output is biased (total variation 3/40 on the first token, toy, biased, branching [2, 1]).",
        tree_decoder("distinct", "residual", rule=SiblingTestedAgainstQ()),
        _tree(16, tree={"shape": "distinct", "verify": "residual", "branching": [2, 1]}), "#/blocks/0/verification/1/law/0"),
    Mistake(
        "tree-distinct-residual-not-updated", "Tree: distinct siblings all tested against p (residual not updated)",
        "SPEC section 12.3",
        "After a sibling is rejected, test the next one against r = max(r - s_j, 0) normalised, not against p again.",
        tree_decoder("distinct", "residual", rule=SiblingResidualKept()),
        _tree(16, tree={"shape": "distinct", "verify": "residual", "branching": [2, 1]}), "#/blocks/0/verification/0/residual/0"),
    Mistake(
        "tree-repeated-child-tested-twice", "Tree: a token drafted by two chains tested twice (target-only)",
        "SPEC sections 12.1 and 12.4",
        "Merge the chains into a trie: a token several chains drafted is one child, tested once, its p counted once in "
        "acc_j (fms-extras#12); testing it again gives it more than its share (total variation 7053/22400 on the first "
        "token, toy, biased, 2 drafts).",
        tree_decoder("chains", "target_only", rule=RepeatedChildTested()),
        _tree(1, tree={"shape": "chains", "verify": "target_only"}), "#/blocks/1/verification/1"),
    Mistake(
        "tree-inclusive-coin-test", "Tree: target-only test u * threshold_acc <= acc_j accepts a child of probability 0",
        "SPEC section 12.4",
        "Accept the first child y_j with p(y_j) > 0 and u * threshold_acc < acc_j (strictly): with <= and no p(y_j) > 0, "
        "a draw of u = 0 accepts a first child the target gives probability 0, a token the target never outputs "
        "(sglang#35771); such children come from top-k, top-p or min-p zeroing the target's row, or a model with zeros.",
        tree_decoder("beam", "target_only", rule=InclusiveCoinTest()),
        _tree(U_ZERO_SEED, width=1, target=ZERO_C_TARGET, draft=C_FIRST_DRAFT,
              tree={"shape": "beam", "verify": "target_only"}), "#/blocks/1/verification/0/accepted"),
    Mistake(
        "sampling-target-left-raw", "Target rows left raw while the draft's are processed",
        "SPEC section 9",
        "With sampling parameters, process the target's rows too (temperature, top-k, top-p, min-p, in that order): the "
        "acceptance test, the residual and the bonus read p', not the raw p (vLLM PR #10198 filtered the draft by top-p "
        "and left the target raw).",
        swapped(SPECULATIVE, rows=TargetLeftRaw()), _sampled(1, WORKED_SAMPLING), "#/blocks/0/verification/0/p/0"),
    Mistake(
        "sampling-raw-q-in-ratio", "Ratio and residual with the raw draft row for a proposal drawn from q'",
        "SPEC section 9",
        "The q in the ratio p'(x)/q(x) and in the residual max(p' - q, 0) is the row the proposal was drawn from: the "
        "processed q' when the draft's rows are processed, not the raw q (transformers #47932).",
        swapped(SPECULATIVE, proposal=RawDraftRowInRatio()), _sampled(1, WORKED_SAMPLING),
        "#/blocks/0/verification/0/q/0"),
    Mistake(
        "sampling-top-p-float-test", "Top-p by the float test cumsum <= 1 - top_p",
        "SPEC section 9",
        "Keep a token iff the probability of the more probable tokens before it is strictly less than top_p, in exact "
        "arithmetic: the float test cumsum <= 1 - top_p keeps C of [0.5, 0.3, 0.2] at top_p 0.8, since 1 - 0.8 is "
        "0.19999999999999996 in float64.",
        swapped(SPECULATIVE, rows=FloatTopPRows()), _sampled(1, {"top_p": 0.8, "draft": "raw"}),
        "#/blocks/0/verification/0/p/0"),
    Mistake(
        "block-cumprod-acceptance", "Block: the prefix accepted by cumprod(min(1, p/q)) >= cumprod(u)",
        "SPEC section 10",
        "In mode block compare each eta_i with its threshold h_i (from the weights w_i = min(1, w_(i-1) p_i(d_i) / "
        "q_i(d_i)) and the residual mass after d_i), and draw the correction from max(w_tau p - q, 0) normalised: "
        "accepting the longest prefix whose product of clipped ratios exceeds the product of the uniforms, with the "
        "correction from max(p - q, 0), is not lossless (vllm-ascend's MagicMTP verifier).",
        swapped(BLOCK, thresholds=CumprodThresholds(), correction=ResidualOrFirstToken(scaled=False)),
        _toy(5, width=3, mode="block"), "#/blocks/0/verification/0/threshold"),
    Mistake(
        "block-cumprod-scaled-residual", "Block: cumprod acceptance with the scaled residual",
        "SPEC section 10",
        "In mode block compare each eta_i with its threshold h_i (from the weights and the residual mass after d_i): "
        "accepting the longest prefix whose product of clipped ratios exceeds the product of the uniforms is not "
        "lossless, even with the correction from max(w_tau p - q, 0) (vllm-ascend's current MagicMTP verifier).",
        swapped(BLOCK, thresholds=CumprodThresholds(), correction=ResidualOrFirstToken()),
        _toy(5, width=3, mode="block"), "#/blocks/0/verification/0/threshold"),
    Mistake(
        "block-thresholds-row-early", "Block: thresholds from the rows one position too early",
        "SPEC section 10",
        "The threshold h_i (i < k) reads the rows after d_i: s_i = sum_y max(w_i p_(i+1)(y) - q_(i+1)(y), 0), the "
        "rows of the next proposal's context, not p_i and q_i, the rows d_i was drafted from (vllm-ascend PR #7808's "
        "PyTorch path).",
        swapped(BLOCK, thresholds=RowEarlyThresholds(), correction=ResidualOrFirstToken()),
        _toy(4, width=2, mode="block"), "#/blocks/0/verification/0/threshold"),
)
"""Every catalogued mistake, in the order reports list them."""

BY_ID = {m.id: m for m in CATALOGUE}
