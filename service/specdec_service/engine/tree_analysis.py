"""Exact analysis of mode ``tree`` (SPEC section 11, several drafts; Miao et al. 2024, SpecInfer).

A tree block drafts D independent chains; enumerating them costs (V^k)^D. This module does not
enumerate drafts: it uses what SPEC 11.2 implies about one depth.

**One depth, exactly.** At a depth with context c (rows p, q) and m alive chains, the m
candidates are independent draws from q (the chains are independent and drafting is Markov: a
chain whose first i tokens are the accepted path continues as a fresh chain from its last
token). The rows tested are deterministic: r_0 = p and r_(s+1) = max(r_s - q, 0) normalised,
whatever token was rejected. So candidate s (0-based) is reached with probability
``P_s = prod_(t<s) (1 - alpha_t)``, ``alpha_t = sum_y min(r_t(y), q(y))``, and is accepted *as
token y* with probability ``P_s min(r_s(y), q(y))``; all m are rejected with probability P_m,
and the correction then has the law r_m. After y is accepted at candidate s, the chains alive at
the next depth are that one and each later candidate that drew y: 1 + Binomial(m - s - 1, q(y))
chains (an earlier candidate cannot have drawn y: its rejection made r(y) = 0). Summed over s,
the committed token of a depth has exactly the law p (SpecInfer, theorem 4.2), which the total
variation of :func:`output_weights` checks on the caller's own config.

**A block** is then a recursion over (context, alive chains, depths left) whose outcome is the
number of tokens committed and the last one (or, for the output distribution, the first tokens
committed); the expected counters of SPEC 11.5 follow by linearity. **A session** is a dynamic
program over (committed length, last token), as :func:`.chain_law.expectations` does for one
chain.

**Cost.** A block's recursion has at most (V + 1) D k states, each with D candidates, V tokens
and D alive counts, merging outcome tables of at most (k + 1) V entries: about
(V + 1) V^2 D^3 k^2 exact operations per distinct block, for each width and D swept.
:func:`tree_cost` states it; the route refuses a request over its budget with a 422 naming the
cost and the budget (docs/analysis.md).
"""

from __future__ import annotations

from fractions import Fraction
from math import comb
from typing import Any, Optional, Sequence

from .chain_law import (
    ONE, ZERO, contexts_json, contexts_of, counters_json, distribution_json, output_weights as chain_output,
    ratios, row_of, rules_for, step_denominator, with_exact,
)
from .bounds import MAX_DRAFTS, MIN_DRAFTS
from .distributions import exact_string, to_float
from .state import COUNTER_NAMES, Config
from .decoders import AUTOREGRESSIVE
from .verifiers.tree import TreeVerifier

TREE_DRAFTS = tuple(range(MIN_DRAFTS, MAX_DRAFTS + 1))
"""The numbers of drafts a tree analysis sweeps: D = 1..8."""


class TreeLaw:
    """The exact law of mode tree for one config (its models, EOS and limit; SPEC 11) at any
    ``width`` and number of ``drafts``: the recursion's states do not depend on either, so one
    object serves a whole sweep.

    :meth:`block` gives a block's outcomes and expected counters; :meth:`expectations` the
    session's expected counters; :meth:`first_block` one block from the empty prefix with no
    limit; :meth:`output_weights` the distribution of the first tokens."""

    def __init__(self, config: Config, verifier: TreeVerifier = TreeVerifier()):
        self.config, self.verifier = config, verifier
        self.size, self.eos, self.limit = len(config.vocab), config.eos, config.limit
        rows = config.rows  # processed when the config sets sampling (SPEC 9)
        self.p = {c: rows.target(c) for c in contexts_of(self.size)}
        self.q = {c: rows.draft(c) for c in contexts_of(self.size)}
        self.depth_memo: dict = {}
        self.memo: dict = {}

    # -- one depth

    def depth(self, c: Optional[int], m: int) -> tuple[list, Fraction, tuple]:
        """The law of one depth in context ``c`` with ``m`` candidates (SPEC 11.2-11.3):
        ``(accepts, miss, r)``: ``accepts`` lists ``(s, y, probability)`` that candidate s is
        accepted as token y; ``miss`` the probability that all are rejected; r the residual
        row the correction is then drawn from (exact fractions)."""
        key = (c, m)
        if key not in self.depth_memo:
            p, q = self.p[c], self.q[c]
            r, reach, accepts = p, ONE, []
            for s in range(m):
                row = self.verifier.test_row(r, p, q)
                taken = [(y, min(row.probability(y), q.probability(y))) for y in range(self.size)]
                accepts += [(s, y, reach * a) for y, a in taken if a]
                reach *= 1 - sum((a for _, a in taken), ZERO)
                if reach == 0:
                    break
                r = self.verifier.after_rejection(r, p, q)
            self.depth_memo[key] = (accepts, reach, row_of(r) if reach else None)
        return self.depth_memo[key]

    # -- one block

    def chain_length(self, c: Optional[int], k: int) -> Fraction:
        """E[tokens of one chain of up to ``k`` drafted after ``c``] (a chain stops after a
        drafted EOS, SPEC 6)."""
        total, alive = ZERO, {c: ONE}
        for _ in range(k):
            total += sum(alive.values(), ZERO)
            nxt: dict = {}
            for x, m in alive.items():
                for y, w in enumerate(self.q[x].weights):
                    if w and y != self.eos:
                        nxt[y] = nxt.get(y, ZERO) + m * self.q[x].probability(y)
            alive = nxt
        return total

    def node(self, c: Optional[int], m: int, rem: int, bonus: bool, keep: int) -> tuple[dict, tuple]:
        """The rest of a block from a depth in context ``c`` with ``m`` alive chains and
        ``rem`` depths left (``bonus``: a bonus may follow the last depth): ``(outcomes,
        (accepted, rejected, bonus_tokens, corrections))``; ``outcomes`` maps ``(tokens, n,
        last)`` (the first ``keep`` tokens committed from here, how many, the last) to its
        probability; the second the expected counts."""
        key = (c, m, rem, bonus, keep)
        if key in self.memo:
            return self.memo[key]
        accepts, miss, r = self.depth(c, m)
        out: dict = {}
        acc = rej = bon = cor = ZERO
        rej = sum((self._reach_after(accepts, miss, s) for s in range(m)), ZERO)
        if miss:
            cor = miss
            for y, ry in enumerate(r):
                if ry:
                    _add(out, ((y,)[:keep], 1, y), miss * ry)
        for s, y, a in accepts:
            acc += a
            sub, counts = self._after(c, y, m - s - 1, rem, bonus, keep)
            for (tokens, n, last), w in sub.items():
                _add(out, (((y,) + tokens)[:keep], n + 1, last), a * w)
            acc, rej, bon, cor = acc + a * counts[0], rej + a * counts[1], bon + a * counts[2], cor + a * counts[3]
        self.memo[key] = (out, (acc, rej, bon, cor))
        return self.memo[key]

    @staticmethod
    def _reach_after(accepts: list, miss: Fraction, s: int) -> Fraction:
        """P(candidate s is tested and rejected) = P(candidate s + 1 is reached) (or ``miss``)."""
        later = sum((a for t, _, a in accepts if t > s), ZERO)
        return later + miss if later or miss else ZERO

    def _after(self, c: Optional[int], y: int, later: int, rem: int, bonus: bool, keep: int) -> tuple[dict, tuple]:
        """What follows accepting ``y`` in context ``c`` with ``later`` untested candidates at
        this depth: each drew y with probability q(y), independently (SPEC 11.2: those chains
        stay alive)."""
        if y == self.eos:
            return {((), 0, y): ONE}, (ZERO,) * 4
        if rem == 1:
            if not bonus:
                return {((), 0, y): ONE}, (ZERO,) * 4
            row = self.p[y]
            return ({((b,)[:max(keep - 1, 0)], 1, b): row.probability(b) for b, w in enumerate(row.weights) if w},
                    (ZERO, ZERO, ONE, ZERO))
        out: dict = {}
        counts = [ZERO] * 4
        qyy = self.q[c].probability(y)
        for extra in range(later + 1):
            weight = comb(later, extra) * qyy ** extra * (1 - qyy) ** (later - extra)
            if not weight:
                continue
            sub, sub_counts = self.node(y, 1 + extra, rem - 1, bonus, max(keep - 1, 0))
            for k, w in sub.items():
                _add(out, k, weight * w)
            counts = [x + weight * v for x, v in zip(counts, sub_counts)]
        return out, tuple(counts)

    def block(self, c: Optional[int], k: int, drafts: int, bonus: bool, keep: int = 0) -> tuple[dict, tuple]:
        """A block from context ``c`` drafting ``drafts`` chains of up to ``k`` tokens
        (``bonus``: a bonus may follow the last depth): its outcomes (as :meth:`node`) and
        expected counters (SPEC 11.5, in SPEC 7's order)."""
        out, (acc, rej, bon, cor) = self.node(c, drafts, k, bonus, keep)
        drafted = drafts * self.chain_length(c, k)
        counters = (ONE, drafted, acc, rej, drafted - acc - rej, bon, acc + cor + bon, drafted + acc + rej + cor + bon)
        return out, counters

    def at(self, c: Optional[int], length: int, width: int, drafts: int, keep: int = 0) -> tuple[dict, tuple]:
        """:meth:`block` after ``length`` committed tokens: k = min(width, limit - L) and a bonus
        unless the block reaches the limit (SPEC 4.1, 4.4)."""
        k = min(width, self.limit - length)
        return self.block(c, k, drafts, length + k < self.limit, keep)

    # -- a session

    def expectations(self, width: int, drafts: int) -> dict[str, Fraction]:
        """The expected total of every counter of SPEC 7 over all sessions from the empty
        prefix to the end (limit or EOS)."""
        mass: list[dict] = [dict() for _ in range(self.limit + 1)]
        mass[0][None] = ONE
        totals = [ZERO] * len(COUNTER_NAMES)
        for length in range(self.limit):
            for c, m in mass[length].items():
                out, counters = self.at(c, length, width, drafts)
                totals = [t + m * v for t, v in zip(totals, counters)]
                for (_, n, last), w in out.items():
                    if last != self.eos and length + n < self.limit:
                        _add(mass[length + n], last, m * w)
        return dict(zip(COUNTER_NAMES, totals))

    def first_block(self, width: int, drafts: int) -> dict[str, Fraction]:
        """The expected counters of one block from the empty prefix with no limit (k = width,
        a bonus after the last depth): SPEC 11's figures (toy, biased, width 2: committed
        407/200 for one draft, 349449/160000 for two)."""
        return dict(zip(COUNTER_NAMES, self.block(None, width, drafts, True)[1]))

    def output_weights(self, depth: int, width: int, drafts: int) -> dict[tuple, Fraction]:
        """The exact distribution of the first ``depth`` committed tokens (shorter where an EOS
        ends the session first)."""
        final: dict = {}
        boundary: list[dict] = [dict() for _ in range(depth)]
        boundary[0][()] = ONE
        for length in range(depth):
            for prefix, m in boundary[length].items():
                out, _ = self.at(prefix[-1] if prefix else None, length, width, drafts, depth - length)
                for (tokens, n, last), w in out.items():
                    seq = prefix + tokens
                    if len(seq) >= depth or last == self.eos or length + n >= self.limit:
                        _add(final, seq, m * w)
                    else:
                        _add(boundary[len(seq)], seq, m * w)
        return final


def _add(table: dict, key, value) -> None:
    table[key] = table.get(key, ZERO) + value


# ---------------------------------------------------------------- the analysis of a tree config


def tree_cost(config: Config, depth: int, widths: Sequence[int], sweep_drafts: Sequence[int] = TREE_DRAFTS) -> int:
    """An estimate of the work of :func:`analyze_tree`, in analysis units (about a microsecond
    of one core, as :func:`.analysis.analysis_cost`), fitted to measurements on the toy (D = 8,
    width 8: 0.5 s for the expectations and both sweeps, 0.3 s for the distribution of 3
    tokens) and within 1.5x of them at limit 256:

    - expectations and sweeps: ``(V + 1) V^2 D_max^3 (k^2 (1 + limit / 8) + K^2 - k^2) / 4`` with
      D_max the largest of ``sweep_drafts`` (the sweep over D, default 1..8) and D, K the largest width swept and k = min(K, limit): the
      recursion's states times their work, the exact fractions growing with the session's
      length, and ``tree_sweep``'s one block of each width from the empty prefix, which no limit
      caps (4 tokens of 15-digit rows, D = 8, widths 1-16, limit 2 once took 20 s);
    - the output distribution (this config and the target): ``24 D^3 V (V / 1.5)^depth``;
    - both times ``1 + max(0, bits - 64) / 32 * (1 + limit / 32)``, ``bits`` the size of the
      rows' common step denominator (:func:`.chain_law.step_denominator`): long exact rows (15-digit
      custom rows, or SPEC 9's p^20 at temperature 0.05: 2,881 bits) make every operation cost
      more (measured on 2 tokens, D = 2, width 2: 87x at limit 8 and 83x at limit 16 for 2,881
      bits, 6x for 289 bits; the factor gives 113x, 135x and 11x). The toy's 9 bits weigh 1.
    """
    size = len(config.vocab)
    widest = max([config.width, *widths])
    k = min(widest, config.limit)
    # the session's expectations and sweep (at most the limit), and tree_sweep's blocks of every
    # swept width from the empty prefix with no limit (the widths beyond the limit: K^2 - k^2)
    most = max(*sweep_drafts, config.drafts)
    sessions = (size + 1) * size ** 2 * most ** 3 * (k ** 2 * (1 + config.limit / 8) + widest ** 2 - k ** 2) / 4
    output = 24 * config.drafts ** 3 * size * (size / 1.5) ** depth
    bits = step_denominator(config).bit_length()
    growth = 1 + max(0, bits - 64) / 32 * (1 + config.limit / 32)
    return int((sessions + output) * growth)


def analyze_tree(config: Config, depth: int, widths: Sequence[int], draft_cost: Fraction,
                 law: Optional[TreeLaw] = None, tree: Any = None, sweep_drafts: Sequence[int] = TREE_DRAFTS) -> dict:
    """The body of ``POST /v1/analysis`` for a config of mode tree (SPEC 11-12): the expected
    counters of a session (SPEC 11.5, 12.5), the sweep over ``widths`` at the config's D, the
    distribution of the first ``depth`` tokens against the target's (total variation 0 unless
    the tree is lossy), and ``tree_sweep``: for D = 1..8 and each width, one block from the
    empty prefix with no limit (committed and accepted tokens per target pass: toy, biased,
    width 2: 407/200 for D = 1, 349449/160000 for D = 2; ``sweep_drafts``: the D swept, default
    1..8). ``leviathan`` and ``naive`` are null
    (one chain's closed form and the naive rule of mode speculative). ``law``: the exact law
    (default SPEC 11's, :class:`TreeLaw`); ``tree``: the config's tree setting when sent
    (SPEC 12), then reported as ``tree``: its shape, verifier and ``"lossless"`` or
    ``"lossy"``."""

    law, drafts = law or TreeLaw(config), config.drafts
    counters = law.expectations(config.width, drafts)
    sweep, best = [], None
    for w in widths:
        r = ratios(counters if w == config.width else law.expectations(w, drafts), draft_cost)
        sweep.append({"width": w, **with_exact("committed_per_pass", r["committed_per_pass"]),
                      **with_exact("speedup", r["speedup"])})
        speedup = r["speedup"]
        assert speedup is not None  # only the acceptance rate may be None
        if best is None or speedup > best[1]:
            best = (w, speedup)
    assert best is not None  # check_request refuses an empty widths
    tree_sweep = []
    for d in sweep_drafts:
        for w in widths:
            first = law.first_block(w, d)
            tree_sweep.append({"drafts": d, "width": w, **with_exact("committed_per_pass", first["committed"]),
                               **with_exact("accepted_per_pass", first["accepted"])})
    vocab = config.vocab
    target = chain_output(rules_for(config, AUTOREGRESSIVE), config.limit, depth)
    mine = law.output_weights(depth, config.width, drafts)
    tv = sum((abs(mine.get(x, ZERO) - p) for x, p in target.fractions().items()), ZERO) / 2 + \
        sum((p for x, p in mine.items() if x not in target.weights), ZERO) / 2
    target_json = distribution_json(target.fractions(), vocab)
    normalised = config.to_json()
    del normalised["seed"]
    return {
        "config": normalised,
        "contexts": contexts_json(config, None),
        "expected": counters_json(counters, draft_cost),
        "leviathan": None,
        "draft_cost": to_float(draft_cost),
        "draft_cost_exact": exact_string(draft_cost),
        "sweep": sweep,
        "best_width": best[0],
        "output": {"depth": depth, "distribution": target_json if tv == 0 else distribution_json(mine, vocab),
                   "target": target_json, **with_exact("tv", tv)},
        "naive": None,
        "tree_sweep": tree_sweep,
        **({} if tree is None else {"tree": tree_json(config, tree, law, tv)}),
    }


def tree_json(config: Config, tree: Any, law: TreeLaw, tv: Fraction) -> dict:
    """The ``tree`` object of an analysis (SPEC 12), for a config that sent ``tree``: its
    ``shape`` and ``verify``; ``branching`` (shape distinct, else ``None``): b_1..b_k as the tree
    is drafted, k = min(width, limit) (the default [D, 1, ...], 1 past the list's end, cut to k);
    the thresholds (verify target_only, else ``None``) as read, exactly; ``nodes``: per context
    (the empty prefix, then each token), the probability that a node there with the children
    the shape drafts at the first depth of a block accepts one of them (SPEC 12.3: at least
    sum min(p, q) with one child; SPEC 12.4 with both thresholds 1: E[p(children)], below 1
    more); and ``verdict``: ``"lossless"`` when ``tv`` (the output's total variation from
    the target's) is 0, else ``"lossy"``."""
    k = min(config.width, config.limit)
    listed = tree.branching if tree.branching is not None else (config.drafts,)
    target_only = tree.verify == "target_only"
    nodes = [{"context": None if c is None else config.vocab[c],
              **with_exact("accept", law.block(c, 1, config.drafts, True)[1][2])}
             for c in contexts_of(len(config.vocab))]
    return {"shape": tree.shape, "verify": tree.verify,
            "branching": [*listed[:k], *[1] * (k - len(listed))] if tree.shape == "distinct" else None,
            **with_exact("threshold_single", tree.threshold_single if target_only else None),
            **with_exact("threshold_acc", tree.threshold_acc if target_only else None),
            "nodes": nodes, "verdict": "lossless" if tv == 0 else "lossy"}
