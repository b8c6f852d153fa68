"""Exact output laws of catalogued mistakes, by exact enumeration of one block.

:func:`.samples.law_of_rules` states a mistake's law from per-context rows (a proposal rule and
a verifier whose laws are products of one-token laws). Some mistakes have no such rows: their
block commits proposals after a rejection, drafts after a discarded token, reuses a draw for two
decisions, samples from weights that are not a distribution, or verifies a whole block (mode
block, SPEC 10) or several chains (mode tree, SPEC 11) at once. Their output is still a
well-defined random process **whatever random numbers the implementation uses**, as long as it
samples as SPEC section 3 does (``sample(d, u)``: the first token whose cumulative probability
exceeds ``u``, the inverse CDF in vocabulary order) and draws each ``u`` uniformly from [0, 1).
This module computes that law exactly:

- **one block**: for most mistakes, the exact enumeration of the mistake's own decoder (the
  engine's block with its one rule swapped, :mod:`.faulty`; :func:`decoder_kernel` over
  :func:`specdec_service.engine.enumeration.block_law`): every draw is a uniform variable on an
  interval, each question a rule asks it (``u < threshold``, ``sample(d, u)``) splits the
  interval, each part a branch of probability its share of the length (exact
  :class:`~fractions.Fraction`). So a draw used twice (the correction that reuses the rejecting
  draw) is conditioned on what the first decision saw, exactly. Closed forms stay where that
  enumeration cannot follow or does not reach (:data:`PROGRAMS`): a small block program run by
  :func:`enumerate_block` over the same branches (:class:`Path`, the engine's ``Branch`` with
  exact rows) for the MagicMTP verifier,
  which multiplies draws (:func:`cumprod_block`, :func:`cumprod_tau_law`), and for SPEC 11's tree
  mistakes (:func:`tree_block`, its chains drafted lazily and its depths memoised,
  :func:`tree_law`); ``tests/test_grading_laws_enumerated.py`` proves each tree program equal
  to its decoder's enumeration;
- **between blocks**, :func:`law_of_program` runs a forward pass over ``(committed length, last
  token, carried state)``, as :func:`.samples.law_of_rules` does; the carried state is what a
  mistake takes from one block into the next (the rejected proposal the next draft starts from).
  Each block outcome's exact probability is rounded once to float64; the rows' masses are
  float sums in one fixed order.

``tests/test_grading_laws.py`` checks each law against the engine's own faulty decoder (many
seeded traces) and the correct laws against the target's. The engine knows nothing of this
module.

Mistakes whose law is not stated (:data:`UNSTATED`), and why:

- ``interleaved-draws``, ``accepted-counts-all-tests``, ``skip-draw-when-p-ge-q``,
  ``autoregressive-skipped-draw``: they change only which of specdec's draws a decision takes,
  never what is decided from a uniform draw: with an implementation's own random numbers their
  output has the target's law, and outside specdec's draw stream they are not mistakes at all;
- ``block-runs-token-wise``: token-wise verification (SPEC 4) is exact too (Leviathan et al.
  2023, theorem 1): its output has the target's law, and samples cannot tell it from mode block
  (only its acceptance count and its trace can);
- ``draft-from-discarded``: the next block drafts after the rejected proposal, but each ratio
  and residual uses the row its proposal was drawn from, and speculative sampling is exact for
  any draft: the target's law (:data:`TARGETS_LAW` enumerates it to show this);
- ``tree-bonus-while-a-chain-goes-on``: the bonus is drawn early, from the target's row after
  the accepted path, and the rest discarded: the target's law (enumerated as well).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from functools import cached_property, lru_cache
from math import exp, fsum, inf, lcm, lgamma, log
from typing import Any, NamedTuple

from dataclasses import replace

from ..engine import Config
from ..engine.decoders import BLOCK, SPECULATIVE
from ..engine.enumeration import Branch, Interval, NotEnumerable, block_law, depth_first
from ..engine.state import State
from ..engine.tree_law import TreeShapeLaw
from .catalogue import BY_ID
from .tree_laws import SHAPE_LAWS, shape_kernel

ZERO, ONE = Fraction(0), Fraction(1)
END = -1
"""The outcome "the sample stops here" of a row (as :data:`.samples.END`)."""

UNSTATED = {
    "interleaved-draws": "it changes only the order of specdec's draws: with its own random numbers its output has "
                         "the target's law",
    "accepted-counts-all-tests": "it changes only the order of specdec's draws and a counter: its output has the "
                                 "target's law",
    "skip-draw-when-p-ge-q": "it changes only the use of specdec's draws: its output has the target's law",
    "autoregressive-skipped-draw": "it changes only which of specdec's draws a token takes: its output has the "
                                   "target's law",
    "block-runs-token-wise": "token-wise verification (SPEC 4) is exact too: its output has the target's law "
                             "(only its acceptance count and its trace tell it from mode block)",
    "draft-from-discarded": "its proposals come from another draft row, but the ratio and the residual use the row "
                            "each was drawn from: speculative sampling is exact for any draft, so its output has the "
                            "target's law (only its acceptance rate and its trace show it)",
    "tree-bonus-while-a-chain-goes-on": "it stops verifying early and draws the bonus from the target's row after the "
                                        "accepted path: its output has the target's law (only its counters and its "
                                        "trace show it)",
    "tree-inclusive-coin-test": "it differs from SPEC 12.4 only at single values of u (u = 0 with a first child of "
                                "probability 0, u * threshold_acc = acc_j exactly): each node's law is within 2^-53 "
                                "of the correct rule's (grading/tree_laws.discrete_node_law), which no sample size "
                                "shows; only a trace at a seed constructed to draw such a u does",
}
"""Catalogued mistakes whose output law is the target's (so samples cannot name them), with why."""


# ---------------------------------------------------------------- one block, every path


class Path(Branch):
    """One run of a block program along a branch of its draws' answers (the engine's exact
    enumerator, :class:`~specdec_service.engine.enumeration.Branch`, whose draws are uniform
    variables on intervals), with the questions a program asks with exact rows: ``p`` is the
    exact probability of the branch so far, ``arity`` the number of answers of each question."""

    def __init__(self, path: tuple):
        super().__init__(path, 0)

    def draw(self) -> Interval:
        """A fresh uniform draw on [0, 1)."""
        return self.take()

    @staticmethod
    def below(u: Interval, threshold: Fraction) -> bool:
        """``u < threshold``."""
        return u.below(threshold.numerator, threshold.denominator)

    @staticmethod
    def sample(u: Interval, row: tuple) -> int:
        """SPEC 3: ``sample(row, u)`` (``row`` exact Fractions summing to 1)."""
        return u.pick(row.cuts if isinstance(row, Row) else _cuts(row))


class Cuts(NamedTuple):
    """An exact row as a draw picks from it (:class:`~specdec_service.engine.draws.Cuts`): the
    running sums of its entries over their common denominator ``total``."""

    cumulative: tuple[int, ...]
    total: int


@lru_cache(maxsize=4096)
def _cuts(row: tuple) -> Cuts:
    total = lcm(*(x.denominator for x in row))
    running, cumulative = 0, []
    for x in row:
        running += x.numerator * (total // x.denominator)
        cumulative.append(running)
    return Cuts(tuple(cumulative), total)


class Row(tuple):
    """An exact row (a tuple of Fractions) that keeps its :class:`Cuts`."""

    @cached_property
    def cuts(self) -> Cuts:
        """:func:`_cuts` of the row."""
        return _cuts(tuple(self))


MAX_PATHS = 100_000
"""Paths (runs of a block program) the mistakes' laws of one grade may take in all (0.03 to 0.07
ms each on one core, measured: about 3 s at most); a config that needs more is graded without
the laws left, saying so."""


BRANCH_PATHS = 3
"""What one branch of a decoder's enumeration (a run of the engine's block, records and all:
0.1 to 0.3 ms on one core, measured) counts against :data:`MAX_PATHS`."""


class TooLarge(Exception):
    """A law that would take more than its budget of paths (:data:`MAX_PATHS`)."""


def enumerate_block(program: Callable, *args, budget: list | None = None) -> dict:
    """``{outcome: exact probability}`` of ``program(path, *args)`` over every path of its
    decisions (depth first; each path re-runs the program, taking the options its prefix names).
    ``budget``: ``[paths left]``, decremented per path; :class:`TooLarge` when it runs out."""
    def run(prefix: tuple) -> tuple:
        path = Path(prefix)
        return program(path, *args), path.p, path.arity
    try:
        return depth_first(run, budget)
    except NotEnumerable:
        raise TooLarge(f"the laws of this grade would take more than {MAX_PATHS} enumerated paths") from None


# ---------------------------------------------------------------- the models


def decoding_rows(config: Config):
    """The rows a decoder of ``config`` reads, ``.target(c)`` and ``.draft(c)`` (exact
    :class:`~specdec_service.engine.distributions.Dist`): ``config.rows`` where the config has
    sampling parameters (SPEC 9: p' always, q' or q as ``sampling.draft`` says), else the models'
    own rows. Every law of the grader is a law of these rows."""
    rows = getattr(config, "rows", None)
    return rows if rows is not None else config.model_rows


class Models:
    """The exact rows of a config: ``p(c)`` and ``q(c)`` (:class:`Row`; ``c`` the last token,
    ``None`` for the empty prefix; the rows a decoder reads, :func:`decoding_rows`), ``eos``,
    ``limit``, ``width``, ``drafts``."""

    def __init__(self, config: Config):
        self.config = config
        self.eos, self.limit, self.width = config.eos, config.limit, config.width
        self.drafts = getattr(config, "drafts", 1) or 1
        size = len(config.vocab)
        self.size = size
        rows = decoding_rows(config)
        self._p = {c: _row(rows.target(c)) for c in [None, *range(size)]}
        self._q = {c: _row(rows.draft(c)) for c in [None, *range(size)]}

    def p(self, c: int | None) -> tuple:
        """The target's row after ``c``."""
        return self._p[c]

    def q(self, c: int | None) -> tuple:
        """The draft's row after ``c``."""
        return self._q[c]


def _row(dist) -> Row:
    return Row(Fraction(w, dist.total) for w in dist.weights)


_RESIDUALS: dict = {}


def residual(p: tuple, q: tuple, w: Fraction = ONE) -> Row:
    """``max(w p - q, 0)`` normalised (SPEC 4.3, 10.5, 11.2); ``ValueError`` when it is 0.
    Memoised by the rows' identity (the memo holds them, so an identity is never reused)."""
    key = (id(p), id(q), w)
    hit = _RESIDUALS.get(key)
    if hit is not None:
        return hit[2]
    weights = [max(w * a - b, ZERO) for a, b in zip(p, q)]
    total = sum(weights, ZERO)
    if not total:
        raise ValueError("max(w p - q, 0) is 0: no correction is possible")
    row = Row(x / total for x in weights)
    if len(_RESIDUALS) > 100_000:
        _RESIDUALS.clear()
    _RESIDUALS[key] = (p, q, row)
    return row


def draft_chain(run: Path, m: Models, context, k: int, draws: list | None = None) -> tuple[list, list]:
    """SPEC 4.1: up to ``k`` proposals drafted after ``context`` (stopping after a drafted EOS),
    each ``sample(q, u)``; ``draws``: the uniforms to use (shared by several chains) instead of
    fresh ones. Returns ``(tokens, draft rows)``."""
    tokens, rows = [], []
    for i in range(k):
        q = m.q(context)
        x = run.sample(draws[i] if draws is not None else run.draw(), q)
        tokens.append(x)
        rows.append(q)
        context = x
        if x == m.eos:
            break
    return tokens, rows


# ---------------------------------------------------------------- mode block (SPEC 10): a product of draws


def _weights(ps, qs, tokens) -> list:
    """SPEC 10.2: the weights ``w_0..w_k`` (``w_0 = 1``, ``w_i = min(1, w_(i-1) p_i(d_i) / q_i(d_i))``)."""
    w = [ONE]
    for p, q, x in zip(ps, qs, tokens):
        w.append(min(ONE, w[-1] * p[x] / q[x]))
    return w


def cumprod_block(run: Path, m: Models, last, carry, k: int, bonus_room: bool, variant: str):
    """One block of mode block under vllm-ascend's MagicMTP verifier (:data:`CUMPROD`;
    :class:`~.faulty.CumprodThresholds` with :class:`~.faulty.ResidualOrFirstToken`): tau is the
    largest i with ``u_1 ... u_i < a_i`` (:func:`cumprod_tau_law`: a product of draws, which no
    question to one draw asks, so the engine's enumeration cannot follow this decoder); the
    correction from ``max(w_tau p - q, 0)`` (``block-cumprod-scaled-residual``) or ``max(p - q,
    0)`` (``block-cumprod-acceptance``) normalised, the first token when it has no mass. Returns
    ``(committed tokens, None)``."""
    tokens, qs = draft_chain(run, m, last, k)
    ps = [m.p(c) for c in [last, *tokens[:-1]]]
    tau = run.sample(run.draw(), tuple(cumprod_tau_law(ps, qs, tokens)))
    out = tokens[:tau]
    if tau == len(tokens):
        if bonus_room and len(tokens) == k and (not tokens or tokens[-1] != m.eos):
            out.append(run.sample(run.draw(), m.p(tokens[-1] if tokens else last)))
        return tuple(out), None
    scale = ONE if variant == "block-cumprod-acceptance" else _weights(ps, qs, tokens)[tau]
    try:
        row = residual(ps[tau], qs[tau], scale)
    except ValueError:
        row = Row(ONE if y == 0 else ZERO for y in range(m.size))  # the arg max of an all-zero row
    out.append(run.sample(run.draw(), row))
    return tuple(out), None


CUMPROD = ("block-cumprod-acceptance", "block-cumprod-scaled-residual")
"""The block variants whose tau is read off the products of the draws (vllm-ascend's MagicMTP)."""


def cumprod_tau_law(ps, qs, tokens) -> list[Fraction]:
    """``P(tau = i)``, i = 0..k, for tau = the largest i with ``u_1 ... u_i < a_i``, ``a_i =
    prod_(j <= i) min(1, p_j(d_j) / q_j(d_j))`` and ``u_j`` independent uniforms on [0, 1)
    (0 when there is none): the MagicMTP acceptance of ``block-cumprod-*``.

    With ``e_j = -ln u_j`` (unit exponentials) the products are the arrival times ``S_i`` of a
    unit-rate Poisson process ``N``, and ``u_1 ... u_i < a_i`` iff ``S_i > b_i = -ln a_i`` iff
    ``N(b_i) <= i - 1``; ``b`` is non-decreasing. So ``tau = i`` iff ``N(b_i) <= i - 1`` and
    ``N(b_j) >= j`` for every ``j > i``: a forward pass over the independent Poisson increments
    between the ``b_j`` (:func:`_poisson_pass`). Floats (the law has logarithms), each rounded
    once to an exact :class:`~fractions.Fraction`; the last entry takes what the others leave,
    so they sum to exactly 1."""
    a, b = ONE, [0.0]
    for p, q, x in zip(ps, qs, tokens):
        a *= min(ONE, p[x] / q[x])
        b.append(inf if a == 0 else -log(float(a)))
    k = len(tokens)
    out = []
    for i in range(k):
        if b[i] == inf:
            out.append(ZERO)
            continue
        start = {n: _poisson(b[i], n) for n in range(i)} if i else {0: 1.0}
        out.append(Fraction(_poisson_pass(start, b, i, k)))
    return out + [ONE - sum(out, ZERO)]


def _poisson(mean: float, n: int) -> float:
    """The Poisson probability of ``n`` with ``mean``."""
    return exp(-mean + n * log(mean) - lgamma(n + 1)) if mean > 0 else (1.0 if n == 0 else 0.0)


def _poisson_pass(start: dict, b: list, i: int, k: int) -> float:
    """``P(N(b_j) >= j for j = i+1..k)`` from the law ``start`` of ``N(b_i)`` (``{count: p}``),
    counts capped at ``k`` (past it every later condition holds)."""
    alive = start
    for j in range(i + 1, k + 1):
        if b[j] == inf:  # N(b_j) is past every count: the conditions left hold
            break
        step = b[j] - b[j - 1]
        nxt: dict[int, float] = {}
        for n, m in alive.items():
            left = m
            for more in range(k - n):
                chance = m * _poisson(step, more)
                nxt[n + more] = nxt.get(n + more, 0.0) + chance
                left -= chance
            nxt[k] = nxt.get(k, 0.0) + max(left, 0.0)
        alive = {n: m for n, m in nxt.items() if n >= j}
    return fsum(alive.values())


# ---------------------------------------------------------------- mode tree (SPEC 11)


class Chains:
    """The D chains of a tree block (SPEC 11.1), drafted **lazily**: chain ``j``'s tokens are
    drafted (each ``sample(q, u)`` after the chain's previous token, stopping after an EOS, at
    most ``k``) only when the verification reads them. The chains are independent and each
    token's uniform is fresh, so drafting a token when it is first read has the same law as
    drafting every chain first, and the tokens never read are never enumerated.
    ``eager`` drafts every chain at once (``shared``: from the same uniforms)."""

    def __init__(self, run: Path, m: Models, last, k: int, eager: bool = False, shared: bool = False):
        self.run, self.m, self.last, self.k = run, m, last, k
        self.tokens: list[list[int]] = [[] for _ in range(m.drafts)]
        if eager:
            draws = [run.draw() for _ in range(k)] if shared else None
            self.tokens = [draft_chain(run, m, last, k, draws)[0] for _ in range(m.drafts)]
        self.done = [eager] * m.drafts

    def _grow(self, j: int, n: int) -> None:
        chain = self.tokens[j]
        while not self.done[j] and len(chain) < n:
            x = self.run.sample(self.run.draw(), self.m.q(chain[-1] if chain else self.last))
            chain.append(x)
            self.done[j] = x == self.m.eos or len(chain) >= self.k

    def has(self, j: int, depth: int) -> bool:
        """Whether chain ``j`` has a token at ``depth`` (0-based)."""
        self._grow(j, depth + 1)
        return len(self.tokens[j]) > depth

    def at(self, j: int, depth: int) -> int:
        """Chain ``j``'s token at ``depth``."""
        self._grow(j, depth + 1)
        return self.tokens[j][depth]


def _depth(run: Path, m: Models, chains: Chains, cands: list, depth: int, context, variant: str):
    """SPEC 11.2, one depth: ``(accepted token or None, last r, chains alive next)``."""
    p, q = m.p(context), m.q(context)
    r = p
    for j in cands:
        y = chains.at(j, depth)
        row = q if variant == "tree-tested-against-draft-row" else r
        if run.below(run.draw(), _threshold(row[y], q[y])):
            alive = cands if variant == "tree-disagreeing-chains-continue" else \
                [i for i in cands if chains.at(i, depth) == y]
            return y, r, alive
        if variant != "tree-residual-not-updated":
            r = residual(r, q)
    return None, r, []


def _threshold(r: Fraction, q: Fraction) -> Fraction:
    """The test ``u * q < r`` as ``u < threshold``: ``r / q``, or for ``q = 0`` (a disagreeing
    chain's token the accepted context's draft row never gives) 2 when ``r > 0`` (always
    accepted) and 0 otherwise (never)."""
    if q:
        return r / q
    return Fraction(2) if r > 0 else ZERO


def tree_block(run: Path, m: Models, last, carry, k: int, bonus_room: bool, variant: str):
    """One block of SPEC 11 (D = ``m.drafts`` chains) with the mistake ``variant``'s change:
    ``tree-residual-not-updated``, ``tree-tested-against-draft-row``,
    ``tree-disagreeing-chains-continue``, ``tree-shared-draws`` (every chain drafted from the
    same uniforms), ``tree-bonus-while-a-chain-goes-on`` (no candidates once the shortest chain
    has ended). Returns ``(committed tokens, None)``."""
    shortest = variant == "tree-bonus-while-a-chain-goes-on"
    chains = Chains(run, m, last, k, eager=shortest or variant == "tree-shared-draws",
                    shared=variant == "tree-shared-draws")
    end = min(len(c) for c in chains.tokens) if shortest else k
    out: list[int] = []
    alive, context = list(range(m.drafts)), last
    while True:
        depth = len(out)
        cands = [j for j in alive if chains.has(j, depth)] if depth < end else []
        if not cands:
            break
        token, r, alive = _depth(run, m, chains, cands, depth, context, variant)
        if token is None:
            out.append(run.sample(run.draw(), r))
            return tuple(out), None
        out.append(token)
        context = token
        if token == m.eos:
            return tuple(out), None
    if bonus_room or len(out) < k:
        out.append(run.sample(run.draw(), m.p(context)))
    return tuple(out), None


def _one_depth(run: Path, m: Models, context, lasts: tuple, variant: str):
    """SPEC 11.2 at one depth of a tree block whose candidates are chains with the last tokens
    ``lasts`` (in chain order): each candidate's token is drafted when first read (``sample(q,
    u)`` after its chain's last token), then tested as in :func:`_depth`. Returns ``("accept",
    y, the next depth's chains' last tokens)`` or ``("correct", c, ())``."""
    tokens: dict = {}

    def token(j: int) -> int:
        if j not in tokens:
            tokens[j] = run.sample(run.draw(), m.q(lasts[j]))
        return tokens[j]
    p, q = m.p(context), m.q(context)
    r = p
    for j in range(len(lasts)):
        y = token(j)
        row = q if variant == "tree-tested-against-draft-row" else r
        if run.below(run.draw(), _threshold(row[y], q[y])):
            if variant == "tree-disagreeing-chains-continue":
                return "accept", y, tuple(token(i) for i in range(len(lasts)))
            return "accept", y, tuple(y for i in range(len(lasts)) if token(i) == y)
        if variant != "tree-residual-not-updated":
            r = residual(r, q)
    return "correct", run.sample(run.draw(), r), ()


def tree_law(m: Models, last, k: int, bonus_room: bool, variant: str, budget: list | None = None) -> dict:
    """The exact law ``{committed tokens: probability}`` of one tree block (SPEC 11), depth by
    depth: given the accepted path, a depth depends only on its context and its candidates'
    chains' last tokens (their next tokens are fresh draws after them), so each ``(depth,
    context, last tokens)`` is enumerated once (:func:`_one_depth`) and the depths are chained by
    a memoised recursion, not multiplied out path by path. The same law as
    :func:`tree_block` (the correct rule and the mistakes whose draws are all fresh)."""
    memo: dict = {}

    def suffix(depth: int, context, lasts: tuple) -> dict:
        key = (depth, context, lasts)
        if key in memo:
            return memo[key]
        cands = tuple(x for x in lasts if x is None or x != m.eos) if depth < k else ()  # None: the empty prefix
        out: dict = {}
        if not cands:
            if bonus_room or depth < k:
                out = {(b,): pb for b, pb in enumerate(m.p(context)) if pb}
            else:
                out = {(): ONE}
        else:
            depth_law = enumerate_block(_one_depth, m, context, cands, variant, budget=budget)
            for (kind, y, nxt), chance in depth_law.items():
                if kind == "correct" or y == m.eos:
                    out[(y,)] = out.get((y,), ZERO) + chance
                    continue
                for rest, more in suffix(depth + 1, y, nxt).items():
                    out[(y, *rest)] = out.get((y, *rest), ZERO) + chance * more
        memo[key] = out
        return out
    return suffix(0, last, (last,) * m.drafts)


_EAGER = {"tree-shared-draws", "tree-bonus-while-a-chain-goes-on"}
"""Tree variants whose chains are drafted at once (shared uniforms, the shortest chain's length):
enumerated path by path with :func:`tree_block`."""


def decoder_kernel(config: Config, decoder: Any, key: tuple, budget: list | None = None) -> dict:
    """``{(committed tokens, carry): probability}`` of one block of ``decoder`` (a correct or
    faulty decoder, :mod:`.faulty`) after the last token ``last`` with ``k`` proposals and a bonus
    iff ``fits`` (``key = (last, carry, k, fits)``, :func:`block_shape`): the exact enumeration of
    the engine's own block (:func:`~specdec_service.engine.enumeration.block_law`) on a state of
    that shape (the config's width k, its limit one past the block iff a bonus fits). ``carry``:
    the rejected proposal a :class:`~.faulty.DraftAfterRejected` drafts after (``None`` for every
    other decoder). Raises :class:`TooLarge` past ``budget`` (``[paths left]``, each branch
    :data:`BRANCH_PATHS`),
    :class:`~specdec_service.engine.enumeration.NotEnumerable` for a rule that multiplies draws,
    ``ValueError`` where a rule is undefined."""
    last, carry, k, fits = key
    committed = () if last is None else (last,)
    state = State(replace(config, width=k, limit=len(committed) + k + int(fits)), committed)
    after = getattr(decoder.proposal, "after", None)
    if after is not None:
        decoder = replace(decoder, proposal=after(carry))

    def outcome(result, length: int) -> tuple:
        return result.state.committed[length:], result.rejected if after is not None else None
    try:
        return block_law(state, decoder, budget, outcome, BRANCH_PATHS)
    except NotEnumerable:
        if budget is not None and budget[0] < 0:
            raise TooLarge(f"the laws of this grade would take more than {MAX_PATHS} enumerated paths") from None
        raise


def _block_law(program: Any, m: Models, key: tuple, variant: str, budget: list) -> dict:
    """``{(committed tokens, carry): probability}`` of one block: the enumeration of a decoder's
    own block (:func:`decoder_kernel`), :func:`tree_law` for mode tree's fresh-draw variants,
    else :func:`enumerate_block` of ``program``."""
    if hasattr(program, "verifier"):
        return decoder_kernel(m.config, program, key, budget)
    if isinstance(program, type) and issubclass(program, TreeShapeLaw):  # a SPEC 12 tree's enumeration
        return shape_kernel(program, m, key)
    if program is tree_block and variant not in _EAGER:
        last, _, k, bonus_room = key
        return {(tokens, None): chance for tokens, chance in tree_law(m, last, k, bonus_room, variant, budget).items()}
    return enumerate_block(program, m, *key, variant, budget=budget)


# ---------------------------------------------------------------- whole sessions


ENUMERATED = (
    "keep-after-rejection", "committed-and-discarded", "reused-rejection-draw", "residual-not-clipped",
    "block-first-failing-eta", "block-unscaled-residual", "block-thresholds-row-early",
    # SPEC 9's mistakes: the correct block read through the mistake's own row reader
    "sampling-target-left-raw", "sampling-raw-q-in-ratio", "sampling-top-p-float-test",
)
"""The catalogued mistakes whose law is the enumeration of their own decoder (the engine's block
with the mistake's one rule swapped, :func:`decoder_kernel`)."""

PROGRAMS: dict[str, Any] = {
    **{name: BY_ID[name].rules for name in ENUMERATED},
    # closed forms where the enumeration of the decoder cannot follow or does not reach:
    "block-cumprod-acceptance": cumprod_block,  # a product of draws
    "block-cumprod-scaled-residual": cumprod_block,
    "tree-residual-not-updated": tree_block,  # D chains drafted lazily, depth by depth (tree_law)
    "tree-tested-against-draft-row": tree_block,
    "tree-disagreeing-chains-continue": tree_block,
    "tree-shared-draws": tree_block,
    **SHAPE_LAWS,  # SPEC 12's: the enumeration of engine/tree_law with one rule swapped (grading/tree_laws.py)
}
"""The catalogued mistakes whose law this module states, with their decoder or block program
(``tests/test_grading_laws_enumerated.py`` proves each program equal to its decoder's
enumeration where that enumeration runs)."""

TARGETS_LAW: dict[str, Any] = {"draft-from-discarded": BY_ID["draft-from-discarded"].rules,
                               "tree-bonus-while-a-chain-goes-on": tree_block}
"""Mistakes of :data:`UNSTATED` whose law is enumerated too: the target's (``tests/test_grading_laws.py``
checks it), which is why samples cannot name them."""

CORRECT: dict[str, Any] = {"speculative": SPECULATIVE, "block": BLOCK, "tree": tree_block}
"""The correct decoder or block program of each mode (variant ``""``): its law is the target's."""


SCHEDULES = {
    "spec": "k = min(width, limit - L) proposals a block, no bonus at the limit (SPEC 4.1, 4.4)",
    "last-from-target": "k = min(width, limit - L - 1) proposals a block, so that the target gives the last token "
                        "(Hugging Face transformers' assisted generation)",
    "target-first": "the first token sampled from the target before the first draft, then SPEC's blocks "
                    "(llama.cpp's speculative example)",
}
"""The block schedules real implementations use, by name, with what each does. The output of a
correct implementation has the target's law under every one of them; a mistake's law depends on
the schedule, so a mistake is named under the schedule whose law fits (``grading/samples.py``)."""


def block_shape(schedule: str, width: int, limit: int, length: int) -> tuple[int, bool]:
    """``(k, fits)`` of a block after ``length`` committed tokens under ``schedule`` (a key of
    :data:`SCHEDULES`): ``k`` proposals, and whether a bonus may follow when all are accepted
    (``spec``: ``k = min(width, limit - L)``, a bonus iff ``L + k < limit``;
    ``last-from-target``: ``k = min(width, limit - L - 1)``, always a bonus; ``target-first``:
    the first block has no proposals and a bonus (a target sample), then ``spec``). Width 0
    (mode autoregressive) is one target token a block under every schedule."""
    if schedule == "target-first" and length == 0:
        return 0, True
    if schedule == "last-from-target":
        return max(0, min(width, limit - length - 1)), True
    k = min(width, limit - length)
    return k, length + k < limit


def law_of_program(config: Config, program: Any, variant: str = "", paths: int | list = MAX_PATHS,
                   schedule: str = "spec", kernels: dict | None = None) -> dict:
    """The exact law of the output of ``program`` (a decoder, correct or faulty, read through its
    own row reader; or a block program above, with ``variant``) decoding ``config``, projected on rows: ``{(t, c): {outcome: probability > 0}}`` as
    :func:`.samples.law_of_rules` returns it. A block's law depends on the committed length
    only through ``k = min(width, limit - L)`` and whether a bonus fits (``L + k < limit``), so
    each ``(last, carry, k, fits)`` is enumerated once. Raises ``ValueError`` where the
    mistake's rule is undefined (a correction from a residual of zero mass), :class:`TooLarge`
    past ``paths`` enumerated paths (a number, or ``[paths left]`` shared by several laws).
    ``schedule``: the block schedule (:func:`block_shape`); ``kernels``: a dict shared by the
    laws of one program under several schedules (their blocks of the same shape are enumerated
    once)."""
    m = Models(config)
    budget = paths if isinstance(paths, list) else [paths]
    kernels = {} if kernels is None else kernels
    mass: dict = {}
    start: dict = {0: {(None, None): 1.0}}

    def add(row, y, x):
        cell = mass.setdefault(row, {})
        cell[y] = cell.get(y, 0.0) + x

    while start:
        length = min(start)
        frontier = start.pop(length)
        k, fits = block_shape(schedule, m.width, m.limit, length)
        for (last, carry), weight in sorted(frontier.items(), key=lambda kv: (_key(kv[0][0]), _key(kv[0][1]))):
            key = (last, carry, k, fits)
            if key not in kernels:
                kernels[key] = sorted(_block_law(program, m, key, variant, budget).items(),
                                      key=lambda kv: (kv[0][0], _key(kv[0][1])))
            for (tokens, nxt), chance in kernels[key]:
                share = weight * float(chance)
                t, prev = length, last
                for y in tokens:
                    add((t, prev), y, share)
                    t, prev = t + 1, y
                if (prev is not None and prev == m.eos) or t >= m.limit or not tokens:
                    add((t, prev), END, share)
                else:
                    at = start.setdefault(t, {})
                    at[(prev, nxt)] = at.get((prev, nxt), 0.0) + share
    law = {}
    for row, cell in mass.items():
        total = sum(cell[y] for y in sorted(cell))
        law[row] = {y: x / total for y, x in sorted(cell.items()) if x > 0}
    return law


def _key(c) -> int:
    return -1 if c is None else c


__all__ = [
    "CORRECT", "CUMPROD", "MAX_PATHS", "PROGRAMS", "SCHEDULES", "TARGETS_LAW", "UNSTATED", "Path", "Row", "TooLarge",
    "block_shape", "cumprod_tau_law", "decoder_kernel", "decoding_rows", "enumerate_block", "law_of_program", "residual",
]
