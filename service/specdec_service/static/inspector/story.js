// The guided story: the explainer's sections in order, each step a view of the
// page (settings, how far the session went, which regions to look at) and one
// or two plain sentences. A step is only a URL fragment plus words: the
// numbers on the page are the API's, as in free exploration.

/**
 * One step: `section` (the explainer's section it follows), `title`, `claim` (the explainer's
 * claim it shows, in one sentence, for the closing recap), `settings` (over settings.js
 * DEFAULTS), `view` (as in the URL fragment: proposal, blocks, end, analysis, cost), `action`
 * (the button the reader presses: Verify, Run, Analyse, Compare (the figure named by `explain`,
 * explain.js), a setting `change` (then its words), or null for the recap), `show` (the regions
 * the step looks at: proposal, tree, verification, correction, output, history, draws, counters,
 * analysis, explain), `focus` (the part of the Analysis to show), `before` (what to look at and
 * press) and `after` (what the action showed: the step's key numbers, as the explainer writes them).
 * A step appended before the recap (a claim of its own) is listed in the recap too.
 */
export const STEPS = [
  {
    id: "one-block",
    section: "Follow one block into committed output",
    title: "One block: draft, verify, commit",
    claim: "One target pass checks a whole block of proposals and can commit one more token than were drafted.",
    settings: { draft: "aligned", width: "3", seed: "0" },
    view: { proposal: true },
    action: "Verify",
    show: ["proposal", "verification", "correction", "output"],
    before: "The draft model proposed three tokens, C B A, drawn dashed because nothing is committed yet; the table "
      + "gives each one's draft row q and the draw u that picked it. Press Verify: the target checks all three in one pass.",
    after: "This draft has the target's own probabilities, so p/q = 1 and every proposal is kept. "
      + "With all three accepted the target adds a bonus token: four tokens, C B A A, from one target pass. "
      + "How a draw picks a token: the bar of the bonus's row [0.20, 0.60, 0.20] is cut in parts of those lengths, "
      + "and u = 0.1739 falls in A's part (below 0.20).",
  },
  {
    id: "ratio",
    section: "Acceptance needs the probability ratio",
    title: "A rejection at the empty prefix",
    claim: "A proposal is kept with probability min(1, p/q); after a rejection the later proposals are discarded, because the prefix they were drafted after is gone.",
    settings: { draft: "biased", width: "3", seed: "2" },
    view: { proposal: true },
    action: "Verify",
    show: ["proposal", "verification", "correction", "output"],
    before: "With nothing written yet, the target's row is [0.50, 0.30, 0.20] and the biased draft's is "
      + "[0.80, 0.15, 0.05]: it proposed A, which it likes more than the target does. "
      + "Press Verify: A is kept only if the draw u is below p/q = 0.50/0.80 = 0.625.",
    after: "u = 0.7654 is not below 0.625: A is rejected. The two later A were drafted after it; the output now ends "
      + "in B, so their prefix is gone and they are discarded, however plausible. p \u2212 q = [0.50, 0.30, 0.20] \u2212 "
      + "[0.80, 0.15, 0.05] = [\u22120.30, +0.15, +0.15]; its positive part, rescaled, is the correction [0, 0.50, 0.50]: B was drawn.",
  },
  {
    id: "next-draft",
    section: "Acceptance needs the probability ratio",
    title: "The next draft starts from the corrected output",
    claim: "The next block is drafted after the committed output, correction included, never after a discarded proposal.",
    settings: { draft: "biased", width: "3", seed: "2" },
    view: { blocks: 1, proposal: true },
    action: "Verify",
    show: ["proposal", "verification", "correction", "output"],
    before: "Block 1 committed the correction B. The draft's next block starts after B, the output as corrected, "
      + "not after the discarded A A: the table's \u201cafter\u201d column says B for proposal 1. Press Verify.",
    after: "After B the target's row is [0.55, 0.15, 0.30], so A is kept when u is below 0.55/0.80 = 0.6875: "
      + "u 0.2503 is. The next A, after A, is rejected (u 0.7276 \u2265 0.25) and corrected to B: A B committed.",
  },
  {
    id: "seed-1",
    section: "Acceptance needs the probability ratio",
    title: "Seed 1: the rejection comes after A",
    claim: "Each context has its own rows of p and q, so its own ratio and its own correction.",
    settings: { draft: "biased", width: "3", seed: "1" },
    view: { proposal: true },
    action: "Verify",
    show: ["proposal", "verification", "correction", "output"],
    before: "The same draft with seed 1 proposed A A C. Press Verify and watch where the first rejection happens.",
    after: "The first A is kept (u 0.4444 < 0.625). The second A comes after A, where the target's row is "
      + "[0.20, 0.60, 0.20]: p/q = 0.25 and it is rejected. Another context, another row of p, so the correction "
      + "is [0, 0.75, 0.25] here and not the empty prefix's [0, 0.50, 0.50].",
  },
  {
    id: "same-distribution",
    section: "The same distribution need not mean the same trace",
    title: "Two traces, one distribution",
    claim: "Speculative sampling and the target alone write different traces from one seed, with exactly the same output distribution.",
    settings: { draft: "biased", width: "3", seed: "1" },
    view: {},
    action: "Compare",
    explain: "traces",
    show: ["explain"],
    before: "Press Compare: the seed-1 session run to its limit of 8 tokens twice, with speculative sampling and with "
      + "the target alone sampling every token, and each method's exact distribution of the first two tokens.",
    after: "Speculative sampling wrote A C B A B A B B in 4 target passes, the target alone B C C B A B C C in 8: "
      + "the same seed, other traces, because the draws are used for other things. Yet the two columns of bars are "
      + "equal, outcome by outcome (total variation 0): a trace is one sample, not the distribution.",
  },
  {
    id: "speedup",
    section: "Where the speedup can disappear",
    title: "Tokens per pass are not the speed",
    claim: "Counting the draft's cost, speculative sampling can be slower than the target alone.",
    settings: { draft: "biased", width: "3", seed: "1" },
    view: { cost: "0.35" },
    action: "Analyse",
    show: ["analysis"],
    focus: "speedup",
    before: "Press Analyse: exact averages over all seeds, with each draft step costing 0.35 of a target pass "
      + "(a draft not much cheaper than the target).",
    after: "A pass still commits 1.8684 tokens on average at width 3, but the speedup is 0.9695: under the 1\u00d7 line, "
      + "slower than the target alone, because each pass also pays for three draft steps. Drag the draft cost "
      + "slider down and watch the speedup cross the line (1.6499 at 0.05); batching and hardware decide the rest.",
  },
  {
    id: "residual",
    section: "Why the residual restores the target distribution",
    title: "Why the correction is not drawn from p",
    claim: "The correction gives back exactly the mass the rejections leave (the positive part of p \u2212 q); drawing it from p biases the output.",
    settings: { draft: "biased", width: "3", seed: "1" },
    view: {},
    action: "Compare",
    explain: "laws",
    show: ["explain"],
    before: "Press Compare: at the empty prefix, the target's row p and the draft's row q laid over each other, and the "
      + "first token's exact law under three rules (the target alone, speculative sampling, the correction drawn from p) "
      + "beside a histogram of 10,000 samples of each, from the service's draws.",
    after: "Green, min(p, q): the mass kept at once, alpha = 0.7. Orange, the positive part of p \u2212 q: the 0.3 the "
      + "rejections must give back, on B and C, where the residual [0, 0.50, 0.50] puts it. So A stays at 0.5, as for the target. "
      + "Drawing the correction from p ignores the mass already accepted: A 0.65, B 0.24, C 0.11 (total variation 0.15). "
      + "Draw more: the samples settle on the bars.",
  },
  {
    id: "limit",
    section: "Follow one block into committed output",
    title: "At the limit: fewer proposals, no bonus",
    claim: "Near the limit a block drafts only what fits and gets no bonus; the toy has no EOS, and the counters count work, not time.",
    settings: { draft: "aligned", width: "3", seed: "0", limit: "5" },
    view: { blocks: 1, proposal: true },
    action: "Verify",
    show: ["proposal", "verification", "correction", "output", "counters"],
    before: "Block 1 committed C B A A and the limit is 5 tokens: one slot is left, so the draft proposes "
      + "min(width 3, 5 \u2212 4) = 1 token, B, although the width is 3. Press Verify.",
    after: "B is accepted, yet no bonus follows: the output reached its limit, and the bonus would need a sixth slot. "
      + "The session ends at the limit because the toy has no EOS token. The counters say 2 target passes and 4 draft "
      + "steps: counts of the algorithm's work, not a latency.",
  },
  {
    id: "reset",
    section: "The same distribution need not mean the same trace",
    title: "Changing a setting starts again",
    claim: "Changing the draft, the width or the seed starts a new session: a trace belongs to its settings.",
    settings: { draft: "biased", width: "3", seed: "1" },
    change: { seed: "2" },
    view: { blocks: 2 },
    action: "Change the seed to 2",
    show: ["output", "history", "counters"],
    before: "Two blocks of seed 1 are committed: A C B A. Press the button to change the seed to 2, as the Settings would.",
    after: "A new session: nothing committed, no draws used, every counter 0. Changing the draft, the width or the seed "
      + "(any setting) does not continue the old trace with other draws: it starts again from nothing.",
  },
  {
    id: "block",
    section: "Block verification",
    title: "Block verification: A then B accepted although A alone would not be",
    claim: "Judging the proposals together (block verification) keeps more of them, with the same output distribution.",
    settings: { draft: "biased", width: "2", seed: "4", mode: "block" },
    view: { proposal: true },
    action: "Verify",
    show: ["proposal", "verification", "correction", "output"],
    before: "Block verification judges the proposals together. The biased draft proposed A, B. Weights w, the running "
      + "product of p/q capped at 1: w1 = 0.5/0.8 = 5/8, w2 = min(1, 5/8 \u00b7 0.6/0.15) = 1. Thresholds h, how likely "
      + "the block may stop there: h1 = s1 / (s1 + 1 \u2212 w1) = 0.3 / 0.675 = 4/9 with s1 = \u03a3 max(w1 p2 \u2212 q2, 0) "
      + "= 0.3, and h2 = w2 = 1. Press Verify: each proposal gets a draw eta; tau, how many are kept, is the last one whose eta is below its h.",
    after: "The draw 0.8591 is not below h1 = 4/9, but 0.4918 is below h2 = 1, so tau = 2: A then B are accepted "
      + "although A alone would not be, and the bonus A follows: A B A committed from one target pass. "
      + "Token-wise verification of the same draws rejects A (0.8591 \u2265 p/q = 0.625) and commits only the correction B.",
  },
  {
    id: "tree",
    section: "Several drafts",
    title: "Two drafts: where the first chain fails, the second gets what is left",
    claim: "With several drafts, a later candidate is tested against what the earlier rejections left of the target's row.",
    settings: { draft: "biased", width: "2", seed: "16", mode: "tree", drafts: "2" },
    view: { proposal: true },
    action: "Verify",
    show: ["tree", "verification", "output"],
    before: "The biased draft proposed two chains at once, A A and B A, drawn as one tree. Press Verify: at each depth "
      + "the chains' tokens are tested in turn against r, which starts as the target's row p = [0.50, 0.30, 0.20]; "
      + "after a rejection the draft's q is taken away from r, and the next chain is tested against what is left.",
    after: "Chain 1's A is rejected (u 0.6439 \u2265 r/q = 0.5/0.8 = 0.625), and r becomes [0, 0.50, 0.50]. Chain 2's B is tested "
      + "against that r: 0.2307 < 0.5/0.15, accepted. After B, chain 2's A is accepted (0.3737 < 0.55/0.8) and the bonus A "
      + "follows: B A A from one target pass. Chain 1 alone, token-wise, commits only the correction C with the same seed.",
  },
  {
    id: "sampling",
    section: "Sampling parameters",
    title: "Sampling parameters: the ratio uses the row drafted from",
    claim: "With temperature, top-k or top-p, the ratio must use the rows the tokens were drawn from.",
    settings: { draft: "biased", width: "1", seed: "1", temperature: "0.5", top_k: "2", top_p: "0.8" },
    view: { proposal: true },
    action: "Verify",
    show: ["proposal", "verification", "correction", "output"],
    before: "Servers change both models' rows before verifying: here temperature 0.5, then top-k 2, then top-p 0.8, one after "
      + "the other. A prime marks a row so changed (p\u2032, \u201cp prime\u201d): at the empty prefix the target's "
      + "[0.50, 0.30, 0.20] becomes p\u2032 = [0.7353, 0.2647, 0] and the draft's [0.80, 0.15, 0.05] "
      + "becomes q\u2032 = [1, 0, 0], so the draft proposed A. Press Verify: A is kept if u is below p\u2032/q\u2032 = 0.7353.",
    after: "u 0.7458 is not below 0.7353: A is rejected, correction B. The output follows p\u2032 if the ratio uses the row "
      + "drafted from: from the raw q (draft rows raw) the same A has p\u2032/q = 0.7353/0.8 = 0.9191 and is kept, and proposals "
      + "are accepted with probability 301/340 = 0.8853, not 25/34 = 0.7353. Mixing the rows breaks the output.",
  },
  {
    id: "ignoring-q",
    section: "Several drafts",
    title: "What ignoring q costs",
    claim: "A verifier that never reads the draft's probabilities (target only, as SGLang's trees) keeps the target's distribution but accepts less.",
    settings: { draft: "aligned", width: "2", seed: "2", mode: "tree", drafts: "2" },
    view: {},
    action: "Compare",
    explain: "costs",
    show: ["explain"],
    before: "The aligned draft has the target's own rows (q = p), so a residual test (u \u00b7 q(y) < r(y)) always accepts. "
      + "A target-only test never reads q: at a node it draws one u and accepts the first child y_j with u < "
      + "p(y_1) + ... + p(y_j). Press Compare: one tree verified both ways, and each tree's exact tokens per target pass.",
    after: "Seed 2 drafted chains B C and B C. The residual accepts B and C (r/q = 1) and adds a bonus: 3 tokens. Target only "
      + "rejects B, because u 0.3116 is not below p(B) = 0.30, and draws the correction A from p without B: 1 token. On average, "
      + "at width 2 with 2 drafts, both residual trees commit 3 tokens per pass, chains with target only 1.8891 and beam with "
      + "target only 2.265: all lossless (total variation 0), but a node accepts only with probability p(children).",
  },
  {
    id: "recap",
    section: "Recap",
    title: "What the story showed",
    recap: true,
    settings: { draft: "biased", width: "3", seed: "1" },
    view: {},
    action: null,
    show: [],
    before: "Each claim of the explainer, numbered by the step that shows it: follow a claim to see it again.",
    after: "",
  },
];

/** The steps that show a claim, for the closing recap: [{n, step}] in story order (a later step appended here is listed too). */
export function claims() {
  return STEPS.map((s, i) => ({ n: i + 1, step: s })).filter(({ step: s }) => s.claim);
}

/** Step `n` (1-based) or null. */
export function step(n) {
  return Number.isInteger(n) && n >= 1 && n <= STEPS.length ? STEPS[n - 1] : null;
}
