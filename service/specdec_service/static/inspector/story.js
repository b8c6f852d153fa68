// The guided story: the explainer's sections in order, each step a view of the
// page (settings, how far the session went, which regions to look at) and one
// or two plain sentences. A step is only a URL fragment plus words: the
// numbers on the page are the API's, as in free exploration.

/**
 * One step: `section` (the explainer's section it follows), `title`, `settings` (over
 * settings.js DEFAULTS), `view` (as in the URL fragment: proposal, blocks, end, analysis, cost),
 * `action` (the button the reader presses: Verify, Run or Analyse), `show` (the regions the step
 * looks at: proposal, tree, verification, correction, output, history, draws, counters, analysis),
 * `focus` (the part of the Analysis to show), `before` (what to look at and press) and
 * `after` (what the action showed: the step's key numbers, as the explainer writes them).
 */
export const STEPS = [
  {
    id: "one-block",
    section: "Follow one block into committed output",
    title: "One block: draft, verify, commit",
    settings: { draft: "aligned", width: "3", seed: "0" },
    view: { proposal: true },
    action: "Verify",
    show: ["proposal", "verification", "correction", "output"],
    before: "The draft model proposed three tokens, C B A, drawn dashed because nothing is committed yet. "
      + "Press Verify: the target checks all three in one pass.",
    after: "This draft has the target's own probabilities, so p/q = 1 and every proposal is kept. "
      + "With all three accepted the target adds a bonus token: four tokens, C B A A, from one target pass.",
  },
  {
    id: "ratio",
    section: "Acceptance needs the probability ratio",
    title: "A rejection at the empty prefix",
    settings: { draft: "biased", width: "3", seed: "2" },
    view: { proposal: true },
    action: "Verify",
    show: ["proposal", "verification", "correction", "output"],
    before: "With nothing written yet, the target's row is [0.50, 0.30, 0.20] and the biased draft's is "
      + "[0.80, 0.15, 0.05]: it proposed A, which it likes more than the target does. "
      + "Press Verify: A is kept only if the draw u is below p/q = 0.50/0.80 = 0.625.",
    after: "u = 0.7654 is not below 0.625: A is rejected, and the proposals after it are discarded. "
      + "p \u2212 q = [0.50, 0.30, 0.20] \u2212 [0.80, 0.15, 0.05] = [\u22120.30, +0.15, +0.15]; its positive part, "
      + "rescaled to sum 1, is the correction [0, 0.50, 0.50], from which B was drawn.",
  },
  {
    id: "seed-1",
    section: "Acceptance needs the probability ratio",
    title: "Seed 1: the rejection comes after A",
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
    title: "Seed 1 to the end, with speculative sampling",
    settings: { draft: "biased", width: "3", seed: "1" },
    view: {},
    action: "Run",
    show: ["output", "history", "counters"],
    before: "Press Run to take the seed-1 session to its limit of 8 tokens with speculative sampling.",
    after: "Speculative sampling wrote A C B A B A B B in 4 target passes. "
      + "Next: the same seed, but the target alone samples every token.",
  },
  {
    id: "same-distribution-target",
    section: "The same distribution need not mean the same trace",
    title: "Seed 1 with the target alone",
    settings: { draft: "biased", width: "3", seed: "1", mode: "autoregressive" },
    view: {},
    action: "Run",
    show: ["output", "history", "counters"],
    before: "Press Run: the target alone samples one token per pass, with the same seed.",
    after: "The target alone writes B C C B A B C C, another trace from the same seed, because the draws are used "
      + "for other things. Yet both methods give every output exactly the target's probability: a trace is one sample, "
      + "not the distribution.",
  },
  {
    id: "speedup",
    section: "Where the speedup can disappear",
    title: "Tokens per pass are not the speed",
    settings: { draft: "biased", width: "3", seed: "1" },
    view: { cost: "0.05" },
    action: "Analyse",
    show: ["analysis"],
    focus: "speedup",
    before: "Press Analyse: exact averages over all seeds, with each draft step costing 0.05 of a target pass.",
    after: "With the biased draft a pass commits 1.87 tokens on average at width 3, not 4: rejections throw drafts away. "
      + "Counting the draft's cost, the speedup is 1.65 and longer drafts lose (best width 3); batching and hardware decide the rest.",
  },
  {
    id: "residual",
    section: "Why the residual restores the target distribution",
    title: "The residual gives back the target's distribution",
    settings: { draft: "biased", width: "3", seed: "1" },
    view: {},
    action: "Analyse",
    show: ["analysis"],
    focus: "residual",
    before: "Press Analyse: the correction distribution in every context, and how far the output is from the target's distribution.",
    after: "At the empty prefix the correction is [0, 0.50, 0.50]: it adds back exactly the probability the draft "
      + "under-proposed. So the output has the target's distribution (total variation 0), while drawing the "
      + "correction from p instead is off (total variation 0.244 over three tokens).",
  },
  {
    id: "block",
    section: "Block verification",
    title: "Block verification: A then B accepted although A alone would not be",
    settings: { draft: "biased", width: "2", seed: "4", mode: "block" },
    view: { proposal: true },
    action: "Verify",
    show: ["proposal", "verification", "correction", "output"],
    before: "Block verification judges the draft's proposals together. The biased draft proposed A, B. "
      + "A's weight is w1 = p/q = 0.5/0.8 = 5/8, B's is w2 = min(1, 5/8 · 0.6/0.15) = 1; from them come the "
      + "thresholds h1 = 4/9 and h2 = 1. Press Verify: each proposal gets a draw, and the last draw below its "
      + "threshold decides how many are kept.",
    after: "The draw 0.8591 is not below h1 = 4/9, but 0.4918 is below h2 = 1, so tau = 2: A then B are accepted "
      + "although A alone would not be, and the bonus A follows: A B A committed from one target pass. "
      + "Token-wise verification of the same draws rejects A (0.8591 ≥ p/q = 0.625) and commits only the correction B.",
  },
  {
    id: "tree",
    section: "Several drafts",
    title: "Two drafts: where the first chain fails, the second gets what is left",
    settings: { draft: "biased", width: "2", seed: "16", mode: "tree", drafts: "2" },
    view: { proposal: true },
    action: "Verify",
    show: ["proposal", "tree", "verification", "output"],
    before: "The biased draft proposed two chains at once, A A and B A, drawn as one tree. Press Verify: at each depth "
      + "the chains' tokens are tested in turn against r, which starts as the target's row p = [0.50, 0.30, 0.20]; "
      + "after a rejection the draft's q is taken away from r, and the next chain is tested against what is left.",
    after: "Chain 1's A is rejected (u 0.6439 ≥ r/q = 0.5/0.8 = 0.625), and r becomes [0, 0.50, 0.50]. Chain 2's B is tested "
      + "against that r: 0.2307 < 0.5/0.15, accepted. After B, chain 2's A is accepted (0.3737 < 0.55/0.8) and the bonus A "
      + "follows: B A A from one target pass. Chain 1 alone, token-wise, commits only the correction C with the same seed.",
  },
  {
    id: "sampling",
    section: "Sampling parameters",
    title: "Sampling parameters: the ratio uses the row drafted from",
    settings: { draft: "biased", width: "1", seed: "1", temperature: "0.5", top_k: "2", top_p: "0.8" },
    view: { proposal: true },
    action: "Verify",
    show: ["proposal", "verification", "correction", "output"],
    before: "Servers change both models' rows before verifying: here temperature 0.5, top-k 2, top-p 0.8. At the empty "
      + "prefix the target's [0.50, 0.30, 0.20] becomes p\u2032 = [0.7353, 0.2647, 0] and the draft's [0.80, 0.15, 0.05] "
      + "becomes q\u2032 = [1, 0, 0], so the draft proposed A. Press Verify: A is kept if u is below p\u2032/q\u2032 = 0.7353.",
    after: "u 0.7458 is not below 0.7353: A is rejected, correction B. The output follows p\u2032 with either draft row "
      + "if the ratio uses the row drafted from. From the raw q (draft rows raw) the same A has p\u2032/q = 0.7353/0.8 = 0.9191 "
      + "and is kept: proposals here are accepted with probability 301/340 = 0.8853, not 25/34 = 0.7353. Mixing the rows "
      + "(a raw target, or a raw q for a proposal drawn from q\u2032) breaks the output.",
  },
];

/** Step `n` (1-based) or null. */
export function step(n) {
  return Number.isInteger(n) && n >= 1 && n <= STEPS.length ? STEPS[n - 1] : null;
}
