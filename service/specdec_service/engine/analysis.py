"""Exact analysis of a configuration over all sessions at once (issue 12).

Traces show one random session; this module answers for every session at
once, in exact rationals (:class:`fractions.Fraction`):

- per context, the acceptance probability ``alpha = sum_x min(p(x), q(x))``
  of one drafted token and the residual (correction) distribution
  (SPEC section 4.3; Leviathan et al. 2023, Chen et al. 2023);
- the expectation over all sessions of every work counter of SPEC section 7,
  counted exactly as a trace counts them (EOS rules of section 6, no bonus at
  the limit, discarded proposals are draft steps);
- the exact distribution of the first ``depth`` committed tokens, against
  plain sampling from the target, and their total variation distance (0 for
  ``speculative`` and ``autoregressive``: the theorem of speculative
  sampling, checked on the caller's own config);
- the same distribution under the *naive* rule (the correction sampled from
  the target p instead of the residual), which is biased.

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

The rows come from the engine's rules (:mod:`.rules`: the proposal rule and the
verifier of a decoder each state the exact law they induce): :func:`rules_for` turns a
:class:`~.rules.Decoder` into :class:`BlockRules`. ``autoregressive`` is the
block of width 0 (no proposal, the "bonus" is the sampled token); the naive
rule :data:`NAIVE` is speculative sampling with the catalogue's
``TargetRowCorrection`` swapped in (:data:`.rules.NAIVE`). docs/analysis.md explains every number.

Pure Python, no I/O; the HTTP layer is :mod:`specdec_service.api.analysis`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import lcm
from typing import Any, Optional, Sequence

from .distributions import Dist, exact_string, residual, to_float
from .bounds import MAX_DEPTH, MAX_DRAFT_COST, MIN_DEPTH  # noqa: F401  (re-exported)
from .errors import Fault, InvalidInput
from .models import digits_fault, exact_number
from .requests import ANALYSIS, ANALYSIS_CONFIG, checker, expectation, shallow
from .analysis_block import (
    BLOCK_CELL_COST, BLOCK_DP_FACTOR, BlockLaws, accepted_per_block, block_expectations, block_output, check_block_size, draft_block_cells,
)
from .rules import AUTOREGRESSIVE, MODE_RULES, NAIVE, RuleSet, at_limit, room
from .state import COUNTER_NAMES, Config, parse_around, parse_config

DEFAULT_WIDTHS = tuple(range(1, 9))
"""Widths swept when the caller names none."""

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
        """Proposals a block drafts after ``length`` committed tokens (:func:`.rules.room`)."""
        return room(self, length)

    def bonus_allowed(self, length: int, k: int) -> bool:
        """Whether a block that accepts all ``k`` proposals after ``length`` committed tokens
        adds a bonus (:func:`.rules.at_limit`: none at the limit)."""
        return not at_limit(self.bonus_rule, self, length, k)

    def at_width(self, width: int) -> "BlockRules":
        """The same rules with another width (autoregressive stays at 0)."""
        return self if self.width == 0 else BlockRules(**{**self.__dict__, "width": width})


def contexts_of(size: int) -> list[Context]:
    """Every context: the empty prefix, then each token in vocabulary order."""
    return [None, *range(size)]


def rules_for(config: Config, ruleset: Optional[RuleSet] = None) -> BlockRules:
    """The :class:`BlockRules` of ``config`` under ``ruleset`` (default: the
    rule set of its mode, :data:`~.rules.MODE_RULES`), from the exact
    distributions the rule objects state (:mod:`.rules`).

    In context c with target row p and draft row q: a proposal x has the
    law Q = ``proposal.distribution(q)`` and is accepted with probability
    A(x) = ``verifier.acceptance_probability(p, q, x)``, so ``accept = Q A`` and
    ``reject = Q (1 - A)``; after a rejection (probability
    ``miss = sum(reject)``) the correction has the law R =
    ``verifier.correction_law(p, q)``, so ``correct = miss R`` (for
    speculative sampling exactly ``max(p - q, 0)``, Leviathan et al. 2023);
    ``bonus = verifier.bonus_law(p, q)``. A rule set whose proposal drafts
    nothing (autoregressive) has width 0. Draws are counted when the rules
    use them (every rule set of :data:`~.rules.MODE_RULES` uses a draw for
    every proposal, verification, correction and bonus, or none: greedy).
    """
    ruleset = ruleset or MODE_RULES[config.mode]
    verifier = ruleset.verifier
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


def analysis_cost(config: Config, depth: int, widths: Sequence[int]) -> int:
    """An estimate of the work of :func:`analyze`, in units of about one
    microsecond of one core (measured, docs/analysis.md "Cost and budget").

    With V tokens, limit L and width w, :func:`expectations` does about
    ``L * (V + 1) * V * (w + 1)`` integer multiply-adds between blocks and
    ``(V + 1) * w * V * V`` inside blocks, for the config's width and each
    swept width. Its integers grow: a mass at committed length L is an
    integer over ``G**L`` (``G`` = :func:`step_denominator`), so one
    operation multiplies an ``L * log2(G)``-bit number by one of up to
    ``(w + 1) * log2(G)`` bits; each operation is weighted by
    ``1 + mass_limbs * move_limbs / 150`` (64-bit limbs), fitted to
    measurements. :func:`output_distribution` (target, this config and the
    naive rule) costs about ``3 * N * depth * V`` with N =
    :func:`supported_prefixes`. In mode block, the enumeration of draft blocks adds
    :data:`.analysis_block.BLOCK_CELL_COST` per draft-block cell
    (:func:`.analysis_block.draft_block_cells`), and the operations between blocks weigh
    :data:`.analysis_block.BLOCK_DP_FACTOR` times as much (exact fractions, not scaled integers).
    """
    if config.mode == "tree":  # SPEC 11-12: engine/tree_law.py states its own cost
        from .tree_analysis import TREE_DRAFTS
        from .tree_law import analysis_cost as tree_analysis_cost
        return tree_analysis_cost(config, depth, widths, TREE_DRAFTS)
    size, limit = len(config.vocab), config.limit
    bits = step_denominator(config).bit_length()
    mass_limbs = limit * bits / 64
    cost = 0.0
    between = BLOCK_DP_FACTOR if config.mode == "block" else 1  # mode block's programs run on Fractions
    for w in {config.width, *widths}:
        move_limbs = 1 + (w + 1) * bits / 128
        cost += between * limit * (size + 1) * size * (w + 1) * (1 + mass_limbs * move_limbs / 150)
        cost += (size + 1) * w * size * size
    cost += 3 * supported_prefixes(config, depth) * depth * size
    if config.mode == "block":  # the enumeration of draft blocks (engine/analysis_block.py)
        cost += BLOCK_CELL_COST * draft_block_cells(config, widths, depth)
    return int(cost)


# ---------------------------------------------------------------- the analysis


def _figure(value: Optional[Fraction]) -> tuple[Optional[float], Optional[str]]:
    return (None, None) if value is None else (to_float(value), exact(value))


def _with_exact(name: str, value: Optional[Fraction]) -> dict:
    x, x_exact = _figure(value)
    return {name: x, f"{name}_exact": x_exact}


def _distribution_json(dist: dict, vocab: Sequence[str]) -> list[dict]:
    return [{"tokens": [vocab[t] for t in tokens], **_with_exact("p", p)}
            for tokens, p in sorted(dist.items()) if p]


def _contexts_json(config: Config, rules: Optional[BlockRules]) -> list[dict]:
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
            **_with_exact("alpha", alpha),
            "residual": None if r is None else [to_float(x) for x in r],
            "residual_exact": None if r is None else [exact(x) for x in r],
        })
    return out


def _counters_json(counters: dict[str, Fraction], draft_cost: Fraction) -> dict:
    figures = ratios(counters, draft_cost)
    body = {"counters": {k: to_float(v) for k, v in counters.items()},
            "counters_exact": {k: exact(v) for k, v in counters.items()}}
    for name, value in figures.items():
        body.update(_with_exact(name, value))
    return body


check_values = checker(shallow(ANALYSIS, config={"description": "Read by parse_analysis_config."}))
"""What :func:`parse_analysis` checks with JSON Schema: :data:`.requests.ANALYSIS`, its config
read by :func:`parse_analysis_config`."""
_DRAFT_COST = ANALYSIS["properties"]["draft_cost"]


def check_request(config: Config, depth: int, widths: Sequence[int], draft_cost: Fraction) -> None:
    """The rules of an analysis request beyond its config, as :data:`.requests.ANALYSIS` states
    them (``depth``, distinct ``widths``, ``draft_cost`` in its bounds, read exactly). A depth
    above ``limit`` is valid (it is read as :func:`effective_depth`), so no rule here depends on
    another field: the contract's ``AnalysisIn`` states them all; in mode block, the draft blocks
    to enumerate must stay within :data:`.analysis_block.MAX_DRAFT_BLOCK_CELLS`
    (:func:`.analysis_block.check_block_size`). Raises :class:`InvalidInput` naming each bad
    field."""
    faults: list[Fault] = []
    more = 0
    try:
        check_values({"config": {}, "depth": depth, "widths": list(widths)})
    except InvalidInput as error:
        faults.extend(error.faults)
        more = error.more
    else:  # JSON Schema counts 3.0 an integer; in process, only an int is one
        properties = ANALYSIS["properties"]
        if type(depth) is not int:
            faults.append(Fault(("depth",), expectation(properties["depth"])))
        faults.extend(Fault(("widths", i), expectation(properties["widths"]["items"]))
                      for i, w in enumerate(widths) if type(w) is not int)
    if not _DRAFT_COST["minimum"] <= draft_cost <= _DRAFT_COST["maximum"]:
        faults.append(Fault(("draft_cost",), expectation(_DRAFT_COST)))
    if faults:
        raise InvalidInput(faults, len(faults) + more)
    if config.mode == "block":
        check_block_size(config, widths, effective_depth(config, depth))


def parse_analysis(obj: Any) -> tuple[Config, int, list[int], Fraction]:
    """``(config, depth, widths, draft_cost)`` of a ``POST /v1/analysis`` body
    (:data:`.requests.ANALYSIS`), defaults filled in: ``depth`` :func:`default_depth` (a depth
    above the limit read as :func:`effective_depth`),
    ``widths`` :data:`DEFAULT_WIDTHS`, ``draft_cost`` 0 (read exactly, as written). Raises
    :class:`InvalidInput` with paths relative to the body."""
    config = parse_around(check_values, obj, "config", parse_analysis_config)
    depth = obj.get("depth", default_depth(config))
    widths = obj.get("widths", list(DEFAULT_WIDTHS))
    too_long = digits_fault(obj.get("draft_cost"))  # before any exact arithmetic on it (issue 9)
    if too_long:
        raise InvalidInput.at(("draft_cost",), too_long)
    draft_cost = exact_number(obj.get("draft_cost", 0))
    if draft_cost is None:  # not a number: check_values has refused it already
        raise InvalidInput.at(("draft_cost",), expectation(_DRAFT_COST))
    check_request(config, depth, widths, draft_cost)
    return config, effective_depth(config, depth), widths, draft_cost


def analyze(config: Config, depth: Optional[int] = None, widths: Sequence[int] = DEFAULT_WIDTHS,
            draft_cost: Fraction = ZERO) -> dict:
    """The exact analysis of ``config`` as the body of ``POST /v1/analysis``.

    ``depth``: the output distribution is over the first ``depth`` committed
    tokens (default ``min(limit, 3)``; above ``limit``, the first ``limit``:
    :func:`effective_depth`, reported as ``output.depth``); ``widths``: the widths to sweep;
    ``draft_cost``: the cost of one draft step in target passes (exact).
    Every probability and expectation is given as the nearest float64 ``x``
    and exactly as ``x_exact`` (:func:`exact`).

    Raises :class:`InvalidInput` for bad arguments (:func:`check_request`).
    The work grows fast with the vocabulary, limit and width: a caller that
    must bound it checks :func:`analysis_cost` first (the HTTP route does).
    """
    depth = default_depth(config) if depth is None else depth
    widths = list(widths)
    draft_cost = Fraction(draft_cost)
    check_request(config, depth, widths, draft_cost)
    depth = effective_depth(config, depth)
    if config.mode == "tree":  # SPEC 11-12: its own exact law (engine/tree_analysis.py, engine/tree_law.py)
        from .tree_analysis import analyze_tree
        from .tree_law import law_for, tree_of
        return analyze_tree(config, depth, widths, draft_cost, law_for(config), tree_of(config))

    rules = rules_for(config)
    laws = BlockLaws(config) if config.mode == "block" else None
    counters = _session_counters(config, rules, laws, config.width)
    expected = _counters_json(counters, draft_cost)
    figures = ratios(counters, draft_cost)

    sweep, best = [], None
    for w in widths:
        at_w = counters if w == config.width else _session_counters(config, rules, laws, w)
        r = ratios(at_w, draft_cost)
        sweep.append({"width": w, **_with_exact("committed_per_pass", r["committed_per_pass"]),
                      **_with_exact("speedup", r["speedup"])})
        speedup = r["speedup"]
        assert speedup is not None  # only the acceptance rate may be None
        if best is None or speedup > best[1]:
            best = (w, speedup)
    assert best is not None  # check_request refuses an empty widths

    limit, vocab = config.limit, config.vocab
    target = output_weights(rules_for(config, AUTOREGRESSIVE), limit, depth)
    target_json = _distribution_json(target.fractions(), vocab)
    if laws is not None:
        dist_fractions = block_output(laws, config.width, depth)
        tv = total_variation(dist_fractions, target.fractions())
    else:
        dist = target if config.mode == "autoregressive" else output_weights(rules, limit, depth)
        tv = dist.total_variation(target, depth)
        dist_fractions = {} if tv == 0 else dist.fractions()  # read only when tv is not 0
    output = {"depth": depth, "distribution": target_json if tv == 0 else _distribution_json(dist_fractions, vocab),
              "target": target_json, **_with_exact("tv", tv)}
    naive = None
    if config.mode == "speculative":
        biased = output_weights(rules_for(config, NAIVE), limit, depth)
        naive = {"distribution": _distribution_json(biased.fractions(), vocab),
                 **_with_exact("tv", biased.total_variation(target, depth))}

    normalised = config.to_json()
    del normalised["seed"]
    extra = {} if laws is None else {"block": _block_comparison(config, laws, widths, draft_cost)}
    return {
        "config": normalised,
        "contexts": _contexts_json(config, rules),
        "expected": expected,
        "leviathan": leviathan(figures["acceptance_rate"], config.width, draft_cost),
        "draft_cost": to_float(draft_cost),
        "draft_cost_exact": exact(draft_cost),
        "sweep": sweep,
        "best_width": best[0],
        "output": output,
        "naive": naive,
        **extra,
    }


def effective_depth(config: Config, depth: int) -> int:
    """``min(depth, limit)``: the depth an analysis computes and reports (``output.depth``).
    Every session ends by ``limit`` tokens, so the first ``depth`` committed tokens of a
    deeper request are the whole output: its distribution over the first ``limit`` tokens is
    exactly the one asked for (as the outputs that EOS ends early are shorter)."""
    return min(depth, config.limit)


def _session_counters(config: Config, rules: BlockRules, laws: Optional[BlockLaws], width: int) -> dict:
    """The expected counters of a whole session at ``width``: mode block's by enumeration of the
    draft blocks (:mod:`.analysis_block`), every other mode's by :func:`expectations`."""
    if laws is not None:
        return block_expectations(laws, width)
    return expectations(rules if width == rules.width else rules.at_width(width), config.limit)


def total_variation(a: dict, b: dict) -> Fraction:
    """Half the sum of the absolute differences of two exact distributions ``{outcome: p}``."""
    return sum((abs(a.get(x, ZERO) - b.get(x, ZERO)) for x in set(a) | set(b)), ZERO) / 2


def _block_comparison(config: Config, laws: BlockLaws, widths: Sequence[int], draft_cost: Fraction) -> dict:
    """Mode block against token-wise verification (SPEC 10, Sun et al. 2025 theorem 2), per
    width (the config's, then the swept ones): the expected accepted proposals of the first
    block from the empty prefix with k = width (no limit), and the expected committed tokens
    per target pass of a whole session, under each rule."""
    tokenwise = rules_for(config, MODE_RULES["speculative"])
    rows = []
    for w in dict.fromkeys([config.width, *widths]):
        at_w = tokenwise.at_width(w)
        first = _Blocks(at_w).counters(None, w, True)[2]
        block_pass = ratios(block_expectations(laws, w), draft_cost)["committed_per_pass"]
        tokenwise_pass = ratios(expectations(at_w, config.limit), draft_cost)["committed_per_pass"]
        rows.append({"width": w,
                     **_with_exact("accepted_per_block", accepted_per_block(laws, w)),
                     **_with_exact("token_wise_accepted_per_block", first),
                     **_with_exact("committed_per_pass", block_pass),
                     **_with_exact("token_wise_committed_per_pass", tokenwise_pass)})
    return {"comparison": rows}


def default_depth(config: Config) -> int:
    """``min(limit, 3)``: the depth of the output distribution when none is given."""
    return min(config.limit, 3)


ANALYSIS_SEED = 0
"""The seed put into a config that has none: nothing in an analysis is random."""


check_analysis_config = checker(shallow(ANALYSIS_CONFIG, target={}, draft={}))


def parse_analysis_config(obj) -> Config:
    """A config for an analysis (:data:`.requests.ANALYSIS_CONFIG`): as
    :func:`~.state.parse_config`, but ``seed`` may be left out (it is ignored). Raises
    :class:`InvalidInput`."""
    check_analysis_config(obj)
    if "seed" not in obj:
        obj = {**obj, "seed": ANALYSIS_SEED}
    return parse_config(obj)
