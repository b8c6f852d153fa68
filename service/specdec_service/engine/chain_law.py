"""The exact law of a chain of drafts, over all sessions at once (SPEC sections 4, 5, 7; modes
``speculative``, ``greedy``, ``autoregressive`` and the naive rule).

Shared by every analysis: :mod:`.analysis` (the route's entry and the mode dispatch),
:mod:`.tree_analysis` and :mod:`.tree_law` read their rows, scales and JSON figures here,
so that none of them imports another back.

Method: nothing is enumerated session by session. A block from a committed
prefix depends only on its last token (the models are bigrams, SPEC 1), the
committed length L (through ``k = min(width, limit - L)`` and whether a bonus
may follow) and the rules. ``_Blocks`` runs a dynamic program over the
positions inside one block (the probability of reaching proposal i in context
c with all earlier proposals accepted); :func:`expectations` runs one over
(context, committed length) between blocks; :func:`output_weights` one over
committed prefixes shorter than ``depth``. Probabilities are integers over a
power of one common denominator (see ``_Scaled``): exact, without a gcd per
operation.

The rows come from the engine's rules (:mod:`.decoders`: the proposal rule and the
verifier of a decoder each state the exact law they induce): :func:`rules_for` turns a
:class:`~.decoders.Decoder` into :class:`BlockRules`. ``autoregressive`` is the
block of width 0 (no proposal, the "bonus" is the sampled token); the naive
rule :data:`NAIVE` is speculative sampling with the catalogue's
``TargetRowCorrection`` swapped in (:data:`.decoders.NAIVE`). docs/analysis.md explains every number.

Pure Python, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import lcm
from typing import Optional, Sequence

from .distributions import Dist, exact_string, residual, to_float
from .decoders import MODE_RULES, RuleSet, TokenWise, at_limit
from .proposals import room
from .state import COUNTER_NAMES, Config


ZERO, ONE = Fraction(0), Fraction(1)
Context = Optional[int]
"""The last committed token (an index), ``None`` at the empty prefix."""
Row = tuple[Fraction, ...]


def exact(value: Fraction) -> str:
    """``"n/d"`` in lowest terms, or ``"n"`` when the denominator is 1 (any size:
    :func:`.distributions.exact_string`)."""
    return exact_string(value)


def row_of(dist: Dist) -> Row:
    """A :class:`Dist` as exact probabilities in vocabulary order."""
    return tuple(Fraction(w, dist.total) for w in dist.weights)


# ---------------------------------------------------------------- rules


@dataclass(frozen=True)
class BlockRules:
    """The rules of one block as exact rows per context (dicts keyed by
    :data:`Context`, rows in vocabulary order).

    ``accept[c][x]``: the probability that the proposal in context ``c`` is
    ``x`` and is accepted; ``reject[c][x]``: that it is ``x`` and is rejected;
    ``correct[c][y]``: that the proposal is rejected *and* the correction is
    ``y`` (for speculative sampling this is ``max(p(y) - q(y), 0)``: the
    residual times the rejection probability ``1 - alpha``, whose
    normalisation cancels); ``bonus[c][y]``: the bonus distribution.
    ``propose[c]``: the draft's proposal distribution (for the proposals
    drafted after a rejection, which are discarded). ``width``: proposals a
    block (0 for autoregressive); ``draws``: whether every proposal,
    verification, correction and bonus uses a draw (not greedy, SPEC 5).
    """

    size: int
    propose: dict
    accept: dict
    reject: dict
    correct: dict
    bonus: dict
    width: int
    draws: bool
    eos: Optional[int]
    limit: int
    bonus_rule: object

    def room(self, length: int) -> int:
        """Proposals a block drafts after ``length`` committed tokens (:func:`.proposals.room`)."""
        return room(self, length)

    def bonus_allowed(self, length: int, k: int) -> bool:
        """Whether a block that accepts all ``k`` proposals after ``length`` committed tokens
        adds a bonus (:func:`.decoders.at_limit`: none at the limit)."""
        return not at_limit(self.bonus_rule, self, length, k)

    def at_width(self, width: int) -> "BlockRules":
        """The same rules with another width (autoregressive stays at 0)."""
        return self if self.width == 0 else BlockRules(**{**self.__dict__, "width": width})


def contexts_of(size: int) -> list[Context]:
    """Every context: the empty prefix, then each token in vocabulary order."""
    return [None, *range(size)]


def rules_for(config: Config, ruleset: Optional[RuleSet] = None) -> BlockRules:
    """The :class:`BlockRules` of ``config`` under ``ruleset`` (default: the
    rule set of its mode, :data:`~.decoders.MODE_RULES`), from the exact
    distributions the rule objects state (:mod:`.decoders`).

    In context c with target row p and draft row q: a proposal x has the
    law Q = ``proposal.distribution(q)`` and is accepted with probability
    A(x) = ``verifier.acceptance_probability(p, q, x)``, so ``accept = Q A`` and
    ``reject = Q (1 - A)``; after a rejection (probability
    ``miss = sum(reject)``) the correction has the law R =
    ``verifier.correction_law(p, q)``, so ``correct = miss R`` (for
    speculative sampling exactly ``max(p - q, 0)``, Leviathan et al. 2023);
    ``bonus = verifier.bonus_law(p, q)``. A rule set whose proposal drafts
    nothing (autoregressive) has width 0. Draws are counted when the rules
    use them (every rule set of :data:`~.decoders.MODE_RULES` uses a draw for
    every proposal, verification, correction and bonus, or none: greedy).
    """
    ruleset = ruleset or MODE_RULES[config.mode]
    verifier = ruleset.verifier
    if not isinstance(verifier, TokenWise):
        raise TypeError("a chain's law reads a token-wise verifier's parts (SPEC 4-5, 10)")
    size = len(config.vocab)
    rows: dict = {name: {} for name in ("propose", "accept", "reject", "correct", "bonus")}
    uses_draw = ruleset.proposal.uses_draw or not ruleset.proposal.drafts
    read = ruleset.rows.read(config)  # the rules' rows: processed when the config sets sampling (SPEC 9)
    for c in contexts_of(size):
        p, q = read.target(c), read.draft(c)
        propose = row_of(ruleset.proposal.distribution(q))
        accept = tuple(x and x * verifier.acceptance_probability(p, q, i) for i, x in enumerate(propose))
        reject = tuple(x - a for x, a in zip(propose, accept))
        miss = sum(reject, ZERO)
        rows["propose"][c] = propose
        rows["accept"][c] = accept
        rows["reject"][c] = reject
        rows["correct"][c] = (tuple(miss * r for r in row_of(verifier.correction_law(p, q))) if miss
                              else (ZERO,) * size)
        rows["bonus"][c] = row_of(verifier.bonus_law(p, q))
    width = config.width if ruleset.proposal.drafts else 0
    return BlockRules(size, width=width, draws=uses_draw, eos=config.eos, limit=config.limit,
                      bonus_rule=verifier.bonus, **rows)


# ---------------------------------------------------------------- integer rows


def _common_denominator(rows) -> int:
    return lcm(*(x.denominator for row in rows for x in row))


class _Scaled:
    """The rules of one :class:`BlockRules` as integers over one common
    denominator ``G``: every committed token multiplies a probability by one
    step row, so the probability of a path that commits ``j`` tokens is an
    integer over ``G**j``. Integer multiply-adds (no gcd per operation as
    :class:`Fraction` does) keep the dynamic programs fast; exact values are
    built once, at the end.

    ``accept[c]``: [(x, weight)] of accepted proposals; ``correct[c]`` and
    ``bonus[c]``: [(y, weight)]; ``alpha_weight[c]`` and ``miss_weight[c]``:
    the acceptance and rejection probabilities (weights over ``G``).
    """

    def __init__(self, rules: BlockRules):
        self.rules = rules
        contexts = contexts_of(rules.size)
        step_rows = [rules.accept[c] for c in contexts] + [rules.reject[c] for c in contexts] + \
                    [rules.correct[c] for c in contexts] + [rules.bonus[c] for c in contexts]
        self.G = g = _common_denominator(step_rows)

        def pairs(row):
            return [(i, int(x * g)) for i, x in enumerate(row) if x]

        self.accept = {c: pairs(rules.accept[c]) for c in contexts}
        self.correct = {c: pairs(rules.correct[c]) for c in contexts}
        self.bonus = {c: pairs(rules.bonus[c]) for c in contexts}
        self.alpha_weight = {c: sum(w for _, w in self.accept[c]) for c in contexts}
        self.miss_weight = {c: int(sum(rules.reject[c], ZERO) * g) for c in contexts}


class _Blocks(_Scaled):
    """Block kernels of one :class:`BlockRules`: from each start context, the
    dynamic program over the positions inside a block, computed once and
    reused for every committed length."""

    def __init__(self, rules: BlockRules):
        super().__init__(rules)
        size, eos, width = rules.size, rules.eos, rules.width
        contexts = contexts_of(size)
        # drafted[r][x]: expected proposals drafted after a proposal x with r slots
        # left (drafting stops right after a drafted EOS, SPEC 6): they are discarded
        # when x is rejected.
        drafted = [{x: ZERO for x in range(size)}]
        for _ in range(width):
            last = drafted[-1]
            drafted.append({x: ZERO if x == eos else
                            1 + sum((qy * last[y] for y, qy in enumerate(rules.propose[x]) if qy), ZERO)
                            for x in range(size)})
        # discard[r]: ({c: numerator}, denominator) of the expected proposals discarded
        # after a rejection in context c with r slots left
        self.discard = []
        for d in drafted:
            values = {c: sum((m * d[x] for x, m in enumerate(rules.reject[c]) if m), ZERO) for c in contexts}
            denominator = lcm(*(v.denominator for v in values.values()))
            self.discard.append(({c: int(v * denominator) for c, v in values.items()}, denominator))
        # reach[c][i]: {context: weight over G**i} of the blocks from c whose proposals
        # 1..i were all accepted (none EOS); corrections[c][i]: [(y, weight over G**(i+1))]
        # of the blocks that commit i accepted proposals and then a correction y.
        self.reach: dict = {}
        self.corrections: dict = {}
        for start in contexts:
            reach = [{start: 1}]
            corrections = []
            for _ in range(width):
                nxt: dict = {}
                fixes: dict = {}
                for c, m in reach[-1].items():
                    for y, r in self.correct[c]:
                        fixes[y] = fixes.get(y, 0) + m * r
                    for x, a in self.accept[c]:
                        if x != eos:
                            nxt[x] = nxt.get(x, 0) + m * a
                reach.append(nxt)
                corrections.append(list(fixes.items()))
            self.reach[start], self.corrections[start] = reach, corrections
        # bonuses[c]: [(y, weight over G**(width+1))] of the blocks from c that accept all
        # ``width`` proposals and add the bonus y (a bonus follows only a full-width block)
        self.bonuses: dict = {}
        for start in contexts:
            tokens: dict = {}
            for x, m in self.reach[start][width].items():
                for y, b in self.bonus[x]:
                    tokens[y] = tokens.get(y, 0) + m * b
            self.bonuses[start] = list(tokens.items())
        self._counters: dict = {}

    def counters(self, start: Context, k: int, bonus_allowed: bool) -> tuple[Fraction, ...]:
        """The expected counters (SPEC 7 order) of a block from ``start`` with
        ``k`` proposals, a bonus drawn when all are accepted iff ``bonus_allowed``."""
        key = (start, k, bonus_allowed)
        if key not in self._counters:
            g, reach = self.G, self.reach[start]
            accepted: int | Fraction = 0  # integers over G**k
            rejected: int | Fraction = 0
            discarded = ZERO
            for i in range(k):
                up = g ** (k - 1 - i)
                accepted += up * sum(m * self.alpha_weight[c] for c, m in reach[i].items())
                rejected += up * sum(m * self.miss_weight[c] for c, m in reach[i].items())
                numerators, denominator = self.discard[k - i - 1]
                discarded += Fraction(sum(m * numerators[c] for c, m in reach[i].items()), denominator * g ** i)
            accepted, rejected = Fraction(accepted, g ** k), Fraction(rejected, g ** k)
            bonus = Fraction(sum(reach[k].values()), g ** k) if bonus_allowed else ZERO
            drafted = accepted + rejected + discarded
            draws = drafted + accepted + 2 * rejected + bonus if self.rules.draws else ZERO
            # an autoregressive block's token is its sample, not a bonus token (SPEC 5, 7)
            bonus_tokens = bonus if self.rules.width else ZERO
            self._counters[key] = (ONE, drafted, accepted, rejected, discarded, bonus_tokens,
                                   accepted + rejected + bonus, draws)
        return self._counters[key]


# ---------------------------------------------------------------- expectations


def first_block_accepted(rules: BlockRules, width: int) -> Fraction:
    """The expected accepted proposals of one block from the empty prefix with ``width``
    proposals and room for a bonus (no limit): the token-wise figure mode block is compared
    with (SPEC 10)."""
    return _Blocks(rules).counters(None, width, True)[2]


def expectations(rules: BlockRules, limit: int) -> dict[str, Fraction]:
    """The expected total of every work counter of SPEC section 7 over all
    sessions of ``rules`` from the empty prefix to the end (limit or EOS).

    Dynamic program over (last token, committed length L): ``mass[L][c]`` is
    the probability, as an integer over ``G**L``, that a session is between
    blocks with L tokens committed, the last being ``c``; each block's
    expected counters are weighted by it. Returns ``{counter name: Fraction}``.
    """
    blocks = _Blocks(rules)
    g, eos = blocks.G, rules.eos
    mass: list[dict] = [dict() for _ in range(limit)]
    mass[0][None] = 1
    weights: dict = {}  # (context, k, bonus_allowed) -> probability of such a block, over G**limit
    for length in range(limit):
        k = rules.room(length)
        bonus_allowed = rules.bonus_allowed(length, k)
        up = g ** (limit - length)
        for c, m in mass[length].items():
            key = (c, k, bonus_allowed)
            weights[key] = weights.get(key, 0) + m * up
            corrections = blocks.corrections[c]
            for i in range(min(k, limit - length - 1)):  # commit i accepted proposals and a correction
                row = mass[length + i + 1]
                for y, r in corrections[i]:
                    if y != eos:
                        row[y] = row.get(y, 0) + m * r
            if bonus_allowed and length + k + 1 < limit:
                row = mass[length + k + 1]
                for y, b in blocks.bonuses[c]:
                    if y != eos:
                        row[y] = row.get(y, 0) + m * b
    # each total = sum over block kinds of weight * counter / G**limit, in integers over
    # one common denominator per counter (one Fraction each at the end)
    kinds = [(w, blocks.counters(*key)) for key, w in weights.items()]
    totals = []
    for i in range(len(COUNTER_NAMES)):
        common = lcm(*(v[i].denominator for _, v in kinds))
        numerator = sum(w * v[i].numerator * (common // v[i].denominator) for w, v in kinds)
        totals.append(Fraction(numerator, common * g ** limit))
    return dict(zip(COUNTER_NAMES, totals))


def ratios(counters: dict[str, Fraction], draft_cost: Fraction) -> dict[str, Optional[Fraction]]:
    """``committed_per_pass`` = E[committed] / E[target_passes];
    ``acceptance_rate`` = E[accepted] / (E[accepted] + E[rejected]) (``None``
    when nothing is verified); ``speedup`` = E[committed] / (E[target_passes]
    + draft_cost x E[draft_steps]): autoregressive work over speculative work."""
    verified = counters["accepted"] + counters["rejected"]
    return {
        "committed_per_pass": counters["committed"] / counters["target_passes"],
        "acceptance_rate": counters["accepted"] / verified if verified else None,
        "speedup": counters["committed"] / (counters["target_passes"] + draft_cost * counters["draft_steps"]),
    }


def leviathan(acceptance_rate: Optional[Fraction], width: int, draft_cost: Fraction) -> Optional[dict]:
    """Leviathan et al. 2023's closed form with a constant acceptance rate a
    and no limit: ``tokens_per_pass = (1 - a^(w+1)) / (1 - a)`` (w + 1 when
    a = 1) and ``speedup = tokens_per_pass / (1 + w c)``, as floats; ``None``
    when there is no acceptance rate (autoregressive)."""
    if acceptance_rate is None:
        return None
    a = acceptance_rate
    tokens = Fraction(width + 1) if a == 1 else (1 - a ** (width + 1)) / (1 - a)
    return {"acceptance_rate": to_float(a), "width": width, "tokens_per_pass": to_float(tokens),
            "speedup": to_float(tokens / (1 + width * draft_cost))}


# ---------------------------------------------------------------- output distribution


@dataclass(frozen=True)
class Outcomes:
    """An exact distribution of first tokens as integers: outcome ``tokens`` has
    probability ``weights[tokens] / G**len(tokens)`` (> 0)."""

    weights: dict
    G: int

    def fractions(self) -> dict[tuple[int, ...], Fraction]:
        """``{tokens: Fraction}``."""
        g = self.G
        return {tokens: Fraction(w, g ** len(tokens)) for tokens, w in self.weights.items()}

    def total_variation(self, other: "Outcomes", depth: int) -> Fraction:
        """Half the sum of the absolute differences to ``other`` (outcomes of at most
        ``depth`` tokens), in integers over one common denominator ``lcm(G, G')**depth``."""
        common = lcm(self.G, other.G)
        scale = {}
        for g in (self.G, other.G):
            ratio = common // g
            scale[g] = [ratio ** n * common ** (depth - n) for n in range(depth + 1)]
        a, b = self.weights, other.weights
        mine, theirs = scale[self.G], scale[other.G]
        total = sum(abs(a.get(x, 0) * mine[len(x)] - b.get(x, 0) * theirs[len(x)]) for x in set(a) | set(b))
        return Fraction(total, 2 * common ** depth)


def output_distribution(rules: BlockRules, limit: int, depth: int) -> dict[tuple[int, ...], Fraction]:
    """The exact distribution of the first ``depth`` committed tokens
    (shorter where a committed EOS ends the session first): {tokens: p > 0}
    (:func:`output_weights` as fractions)."""
    return output_weights(rules, limit, depth).fractions()


def output_weights(rules: BlockRules, limit: int, depth: int) -> Outcomes:
    """The exact distribution of the first ``depth`` committed tokens
    (shorter where a committed EOS ends the session first) as :class:`Outcomes`.

    Dynamic program over committed prefixes shorter than ``depth`` at block
    boundaries (a prefix of length l has an integer weight over ``G**l``);
    inside a block, over the accepted proposals so far. Whatever happens after
    the ``depth``-th token does not matter and is not followed.
    """
    eos = rules.eos
    scaled = _Scaled(rules)
    g = scaled.G
    final: dict = {}
    boundary: list[dict] = [dict() for _ in range(depth)]
    boundary[0][()] = 1

    def commit(tokens: tuple, weight: int) -> None:
        if len(tokens) >= depth or tokens[-1] == eos:
            final[tokens] = final.get(tokens, 0) + weight
        else:
            boundary[len(tokens)][tokens] = boundary[len(tokens)].get(tokens, 0) + weight

    for length in range(depth):
        k = rules.room(length)
        bonus_allowed = rules.bonus_allowed(length, k)
        for prefix, weight in boundary[length].items():
            frontier = {prefix: weight}
            for _ in range(k):
                nxt: dict = {}
                for tokens, m in frontier.items():
                    c = tokens[-1] if tokens else None
                    for y, r in scaled.correct[c]:
                        commit(tokens + (y,), m * r)
                    for x, a in scaled.accept[c]:
                        longer = tokens + (x,)
                        if x == eos or len(longer) >= depth:
                            final[longer] = final.get(longer, 0) + m * a
                        else:
                            nxt[longer] = m * a
                frontier = nxt
            for tokens, m in frontier.items():
                if bonus_allowed:
                    for y, b in scaled.bonus[tokens[-1] if tokens else None]:
                        commit(tokens + (y,), m * b)
                else:  # pragma: no cover - the limit is at least depth, so the prefix was final already
                    final[tokens] = final.get(tokens, 0) + m
    return Outcomes(final, g)


# ---------------------------------------------------------------- cost


def supported_prefixes(config: Config, depth: int) -> int:
    """How many token sequences of length 1..``depth`` the target (p', when the config sets
    ``sampling``, SPEC 9) gives positive probability (EOS ends a sequence): every output distribution of
    :func:`output_distribution` lives on these (accepted, corrected and bonus
    tokens all have positive target probability). Integer counting, cheap."""
    eos = config.eos
    counts: dict = {None: 1}
    total = 0
    for _ in range(depth):
        nxt: dict = {}
        for c, n in counts.items():
            for y, w in enumerate(config.rows.target(c).weights):
                if w:
                    total += n
                    if y != eos:
                        nxt[y] = nxt.get(y, 0) + n
        counts = nxt
    return total


def step_denominator(config: Config) -> int:
    """A common denominator of every step row of every rule set an analysis uses
    (what :func:`expectations` scales by, or a multiple of it): the lcm over contexts of
    ``total(p) * total(q)``. ``min(p, q)``, ``max(p - q, 0)``, ``max(q - p, 0)`` and the
    naive ``(1 - alpha) p`` all have denominators dividing it; integers only, cheap. The rows
    are the config's (``Config.rows``: processed when it sets ``sampling``, SPEC 9)."""
    rows = config.rows
    return lcm(*(rows.target(c).total * rows.draft(c).total for c in contexts_of(len(config.vocab))))


def figure(value: Optional[Fraction]) -> tuple[Optional[float], Optional[str]]:
    """``(float, exact string)`` of a value, ``(None, None)`` for ``None``."""
    return (None, None) if value is None else (to_float(value), exact(value))


def with_exact(name: str, value: Optional[Fraction]) -> dict:
    """``{name: float, name_exact: "n/d"}``: a figure as JSON, both readings (docs/analysis.md)."""
    x, x_exact = figure(value)
    return {name: x, f"{name}_exact": x_exact}


def distribution_json(dist: dict, vocab: Sequence[str]) -> list[dict]:
    """An output distribution (token tuples -> probability) as JSON rows, its zeros left out."""
    return [{"tokens": [vocab[t] for t in tokens], **with_exact("p", p)}
            for tokens, p in sorted(dist.items()) if p]


def contexts_json(config: Config, rules: Optional[BlockRules]) -> list[dict]:
    """Per context: the target and draft rows, the acceptance probability alpha and the residual
    (SPEC 4.3), as JSON with exact strings."""
    vocab = config.vocab
    out = []
    for c in contexts_of(len(vocab)):
        p_dist, q_dist = config.rows.target(c), config.rows.draft(c)
        p, q = row_of(p_dist), row_of(q_dist)
        alpha = sum((min(a, b) for a, b in zip(p, q)), ZERO)
        r = None if alpha == 1 else row_of(residual(p_dist, q_dist))
        out.append({
            "context": None if c is None else vocab[c],
            "p": p_dist.to_json(), "q": q_dist.to_json(),
            **with_exact("alpha", alpha),
            "residual": None if r is None else [to_float(x) for x in r],
            "residual_exact": None if r is None else [exact(x) for x in r],
        })
    return out


def counters_json(counters: dict[str, Fraction], draft_cost: Fraction) -> dict:
    """The expected counters (SPEC 7) and :func:`ratios` of them as JSON with exact strings."""
    figures = ratios(counters, draft_cost)
    body = {"counters": {k: to_float(v) for k, v in counters.items()},
            "counters_exact": {k: exact(v) for k, v in counters.items()}}
    for name, value in figures.items():
        body.update(with_exact(name, value))
    return body
