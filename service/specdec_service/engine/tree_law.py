"""The exact law of a draft tree walked by a tree verifier (SPEC section 12), by enumeration.

Every shape x verifier of SPEC 12 (``chains``, ``distinct``, ``beam`` x ``residual``,
``target_only``, the lossy thresholds included) is enumerated with one walk of the rules of
SPEC 12.2: each random question a rule asks is a branch with its exact probability, and
branches that reach the same state are merged.

- **Sampling a token** from a row s (a drafted token, a correction, a bonus) branches on every
  token y with s(y) > 0, with probability s(y).
- **An acceptance test** ``u * a < b`` (SPEC 12.3) has probability min(1, b / a).
- **The target-only draw** (SPEC 12.4, one u a node) accepts child j with probability
  ``max(0, min(1, acc_j / threshold_acc) - lower)`` (``lower``: the same bound of the children
  before it), all of what is left when ``p(y_j) >= threshold_single``; u is uniform on [0, 1).
- **Beam** asks nothing: its tree is built as SPEC 12.1.3 says.

**Drafting lazily.** The tokens below a node are drafted independently of the rest of the
tree (the models are bigrams, SPEC 1; every node draws its children from the row at its own
context), so a node's children are enumerated only when the walk reaches it. The expected
number of drafted nodes (``draft_steps``, SPEC 12.5) is counted separately, by linearity.

**Merging.** A walk's state at a node is its context, the depths left and what the shape still
draws there: ``chains`` keeps the number of alive chains (after a candidate y is accepted, the
later candidates are each y with probability q(y): the alive chains of the next depth are 1 +
Binomial); ``distinct`` the set of siblings drawn (s_j depends on it only); the residual row r.
Under ``"residual"`` with ``"chains"``, a rejected candidate's token is forgotten: a rejection
is possible only where r(y) < q(y), so r(y) is 0 afterwards and y is never accepted at that
node again.

A block's outcomes are then a recursion over the nodes of the walk, and a session the dynamic
program of :class:`.tree_analysis.TreeLaw` over (committed length, last token), whose
:meth:`~.tree_analysis.TreeLaw.block` :class:`TreeShapeLaw` replaces. Pure Python, exact
(:class:`fractions.Fraction`), no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import comb, perm
from typing import Any, NamedTuple, Optional, Sequence

from .chain_law import ONE, ZERO, row_of, step_denominator
from .errors import InvalidInput
from .state import Config
from .tree_analysis import TreeLaw, tree_cost

Row = tuple[Fraction, ...]
Node = tuple
"""A node of the walk: ``(context, depths left, shape state)``; the context is the node's token
(the last committed token at the root)."""


class Tree(NamedTuple):
    """A tree setting (SPEC 12): ``shape`` ``"chains"`` | ``"distinct"`` | ``"beam"``,
    ``verify`` ``"residual"`` | ``"target_only"``, ``branching`` (``"distinct"``: b_1, b_2, ...;
    ``None``: [D, 1, 1, ...]; 1 past its end) and the target-only thresholds, exact, in (0, 1]
    (1: lossless). The field names are those of the engine's ``tree`` setting, so that object
    serves as well."""

    shape: str = "chains"
    verify: str = "residual"
    branching: Optional[tuple[int, ...]] = None
    threshold_single: Fraction = ONE
    threshold_acc: Fraction = ONE


def is_lossless(tree: Any) -> bool:
    """Whether SPEC 12 makes ``tree``'s output exactly the target's: every verifier with both
    thresholds at 1 (SPEC 12.3 recursive rejection sampling, SPEC 12.4)."""
    return tree.verify == "residual" or (tree.threshold_single == 1 and tree.threshold_acc == 1)


def _add(table: dict, key, value) -> None:
    table[key] = table.get(key, ZERO) + value


def _normalised(weights: Sequence[Fraction]) -> Row:
    total = sum(weights, ZERO)
    return tuple(w / total for w in weights)


# ---------------------------------------------------------------- shapes: what a node's children are


class _Shape:
    """How a shape offers a node's children (SPEC 12.1), one question at a time.

    ``start(node)`` is the state before any child is drawn; ``draw(node, state)`` the next
    child's branches ``[(probability, token, proposal law or None, state)]`` (empty: no more
    children); ``tokens(state)`` the children so far (distinct, in order); ``after(node, state,
    y)`` the branches ``[(probability, node)]`` of the node child y leads to; ``forget(state)``
    what of a state a later test still reads under ``"residual"``; ``drafted(c, k)`` the
    expected drafted nodes of a block and ``draws_per_node`` whether each costs a draw."""

    draws_per_node = True

    def __init__(self, law: "TreeShapeLaw", drafts: int):
        self.law, self.drafts = law, drafts

    def root(self, c: Optional[int], k: int) -> Node:
        """The root of a block at context ``c`` with a tree of depth ``k``."""
        raise NotImplementedError

    def start(self, node: Node) -> Any:
        """The state of ``node`` before any child is drawn."""
        raise NotImplementedError

    def draw(self, node: Node, state: Any) -> list:
        """The next child's branches ``[(probability, token, proposal law or None, state)]``."""
        raise NotImplementedError

    def tokens(self, state: Any) -> tuple:
        """The children drawn so far: distinct tokens, in order."""
        raise NotImplementedError

    def after(self, node: Node, state: Any, y: int) -> list:
        """The branches ``[(probability, node)]`` of the node that accepting child ``y`` leads to."""
        raise NotImplementedError

    def forget(self, state: Any) -> Any:
        """What of ``state`` a later residual test still reads."""
        return state

    def drafted(self, c: Optional[int], k: int) -> Fraction:
        """The expected drafted nodes of a block at context ``c`` with depth ``k`` (SPEC 12.5)."""
        raise NotImplementedError


class _Chains(_Shape):
    """SPEC 12.1.1: m alive chains each draw their next token from q (shape state: m). State in
    a node: (drawn, distinct tokens in order of first appearance, their counts)."""

    def root(self, c: Optional[int], k: int) -> Node:
        return (c, k, self.drafts)

    def start(self, node: Node):
        return (0, (), ())

    def draw(self, node: Node, state) -> list:
        drawn, tokens, counts = state
        if drawn == node[2] or node[1] == 0:
            return []
        q = self.law.q_rows[node[0]]
        out = []
        for y, qy in enumerate(q):
            if qy:
                if y in tokens:
                    i = tokens.index(y)
                    grown = (drawn + 1, tokens, counts[:i] + (counts[i] + 1,) + counts[i + 1:])
                else:
                    grown = (drawn + 1, tokens + (y,), counts + (1,))
                out.append((qy, y, q, grown))
        return out

    def tokens(self, state) -> tuple:
        return state[1]

    def forget(self, state):
        return (state[0], (), ())

    def after(self, node: Node, state, y: int) -> list:
        drawn, tokens, counts = state
        later, alive = node[2] - drawn, counts[tokens.index(y)]
        qy = self.law.q_rows[node[0]][y]
        return [(comb(later, extra) * qy ** extra * (1 - qy) ** (later - extra), (y, node[1] - 1, alive + extra))
                for extra in range(later + 1) if qy ** extra * (1 - qy) ** (later - extra)]

    def drafted(self, c: Optional[int], k: int) -> Fraction:
        return self.drafts * self.law.chain_length(c, k)


class _Distinct(_Shape):
    """SPEC 12.1.2: up to b_i siblings drawn without replacement from s_j (shape state: the
    node's depth i). State in a node: the siblings drawn, in order."""

    def __init__(self, law: "TreeShapeLaw", drafts: int, branching: Optional[tuple[int, ...]]):
        super().__init__(law, drafts)
        self.branching = branching if branching is not None else (drafts,)
        self.inclusion_memo: dict = {}

    def width_at(self, depth: int) -> int:
        """b_depth (1-based): the list's entry, 1 past its end."""
        return self.branching[depth - 1] if depth <= len(self.branching) else 1

    def root(self, c: Optional[int], k: int) -> Node:
        return (c, k, 0)

    def start(self, node: Node):
        return ()

    def law_after(self, c: Optional[int], drawn: tuple) -> Optional[Row]:
        """s_(j+1): q at ``c`` without the siblings ``drawn``, normalised; ``None`` without mass."""
        weights = [ZERO if y in drawn else x for y, x in enumerate(self.law.q_rows[c])]
        return _normalised(weights) if any(weights) else None

    def draw(self, node: Node, state) -> list:
        c, rem, depth = node
        if rem == 0 or len(state) == self.width_at(depth + 1):
            return []
        s = self.law_after(c, state)
        return [] if s is None else [(sy, y, s, state + (y,)) for y, sy in enumerate(s) if sy]

    def tokens(self, state) -> tuple:
        return state

    def forget(self, state):
        return tuple(sorted(state))

    def after(self, node: Node, state, y: int) -> list:
        return [(ONE, (y, node[1] - 1, node[2] + 1))]

    def inclusion(self, c: Optional[int], count: int) -> dict:
        """{y: P(y is among the up to ``count`` siblings drawn at context ``c``)}."""
        key = (c, count)
        if key not in self.inclusion_memo:
            sets: dict = {(): ONE}
            for _ in range(count):
                nxt: dict = {}
                for drawn, w in sets.items():
                    s = self.law_after(c, drawn)
                    if s is None:
                        _add(nxt, drawn, w)
                    for y, sy in enumerate(s or ()):
                        if sy:
                            _add(nxt, tuple(sorted(drawn + (y,))), w * sy)
                sets = nxt
            included: dict = {}
            for drawn, w in sets.items():
                for y in drawn:
                    _add(included, y, w)
            self.inclusion_memo[key] = included
        return self.inclusion_memo[key]

    def drafted(self, c: Optional[int], k: int) -> Fraction:
        total, level = ZERO, {c: ONE}
        for depth in range(1, k + 1):
            nxt: dict = {}
            for x, n in level.items():
                if depth > 1 and x == self.law.eos:
                    continue
                for y, share in self.inclusion(x, self.width_at(depth)).items():
                    _add(nxt, y, n * share)
            total += sum(nxt.values(), ZERO)
            level = nxt
        return total


@dataclass
class _BeamTree:
    """A built beam tree: ``tokens[i]``, ``children[i]`` (indices, in order), node 0 the root."""

    tokens: list
    children: list


class _Beam(_Shape):
    """SPEC 12.1.3: the deterministic top-D tree (shape state: (root context, k, node index)).
    State in a node: how many children were offered."""

    draws_per_node = False

    def __init__(self, law: "TreeShapeLaw", drafts: int):
        super().__init__(law, drafts)
        self.trees: dict = {}

    def tree(self, c: Optional[int], k: int) -> _BeamTree:
        """The beam tree of a block at context ``c`` with depth ``k`` (SPEC 12.1.3)."""
        if (c, k) not in self.trees:
            built = _BeamTree([c], [[]])
            level = [(0, ONE)]
            for _ in range(k):
                offers = []
                for rank, (i, score) in enumerate(level):
                    if i and built.tokens[i] == self.law.eos:
                        continue
                    q = self.law.q_rows[built.tokens[i]]
                    best = sorted((y for y, qy in enumerate(q) if qy), key=lambda y: -q[y])[:self.drafts]
                    offers += [(score * q[y], rank, y, i) for y in best]
                offers.sort(key=lambda offer: (-offer[0], offer[1], offer[2]))
                level = []
                for score, _, y, parent in offers[:self.drafts]:
                    built.tokens.append(y)
                    built.children.append([])
                    built.children[parent].append(len(built.tokens) - 1)
                    level.append((len(built.tokens) - 1, score))
            self.trees[(c, k)] = built
        return self.trees[(c, k)]

    def root(self, c: Optional[int], k: int) -> Node:
        return (c, k, (c, k, 0))

    def start(self, node: Node):
        return ()

    def draw(self, node: Node, state) -> list:
        c0, k0, i = node[2]
        children = self.tree(c0, k0).children[i]
        if len(state) == len(children):
            return []
        y = self.tree(c0, k0).tokens[children[len(state)]]
        return [(ONE, y, None, state + (y,))]

    def tokens(self, state) -> tuple:
        return state

    def after(self, node: Node, state, y: int) -> list:
        c0, k0, i = node[2]
        built = self.tree(c0, k0)
        child = next(j for j in built.children[i] if built.tokens[j] == y)
        return [(ONE, (y, node[1] - 1, (c0, k0, child)))]

    def drafted(self, c: Optional[int], k: int) -> Fraction:
        return Fraction(len(self.tree(c, k).tokens) - 1)


# ---------------------------------------------------------------- verifiers: how a node is tested


def target_only_choice(p: Row, children: Sequence[int], single: Fraction, scale: Fraction) -> tuple[list, Fraction]:
    """SPEC 12.4 at one node: ``([(j, probability that child j is accepted)], probability that
    none is)`` for children tokens ``children`` (distinct, in order), target row ``p`` and the
    thresholds, with u uniform on [0, 1): child j is accepted iff p(y_j) > 0 and (u *
    threshold_acc < acc_j or p(y_j) >= threshold_single) and no child before it is."""
    lower, acc, out = ZERO, ZERO, []
    for j, y in enumerate(children):
        acc += p[y]
        if not p[y]:
            continue
        upper = ONE if p[y] >= single else min(ONE, acc / scale)
        if upper > lower:
            out.append((j, upper - lower))
            lower = upper
    return out, ONE - lower


class _Tally:
    """A node's outcomes ``{(first tokens, committed, last): probability}`` and expected counts
    ``[accepted, rejected, tests, corrections, bonus_tokens]``."""

    def __init__(self) -> None:
        self.out: dict = {}
        self.counts = [ZERO] * 5

    def commit(self, tokens: tuple, n: int, last: Optional[int], w: Fraction) -> None:
        _add(self.out, (tokens, n, last), w)

    def merge(self, head: int, keep: int, sub: tuple, w: Fraction) -> None:
        """Add the tail ``sub`` (a walk's result) after committing ``head``, with weight ``w``."""
        out, counts = sub
        for (tokens, n, last), x in out.items():
            _add(self.out, (((head,) + tokens)[:keep], n + 1, last), w * x)
        self.counts = [a + w * b for a, b in zip(self.counts, counts)]
        self.counts[0] += w

    def result(self) -> tuple[dict, tuple]:
        return self.out, tuple(self.counts)


# ---------------------------------------------------------------- the law


class TreeShapeLaw(TreeLaw):
    """The exact law of mode tree with a ``tree`` setting (SPEC 12) for one config (its rows
    after SPEC 9, EOS and limit), at any width and D: :meth:`block` enumerates one block (the
    session's dynamic program, :meth:`first_block` and :meth:`output_weights` are
    :class:`~.tree_analysis.TreeLaw`'s). Raises :class:`~.errors.InvalidInput` for ``"residual"``
    with ``"beam"`` (SPEC 12: no draft law to test against)."""

    def __init__(self, config: Config, tree: Any = Tree()):
        super().__init__(config)
        if tree.shape == "beam" and tree.verify == "residual":
            raise InvalidInput.at(("tree", "verify"), 'must be "target_only" with shape "beam" (SPEC section 12)')
        self.tree = tree
        self.p_rows = {c: row_of(d) for c, d in self.p.items()}
        self.q_rows = {c: row_of(d) for c, d in self.q.items()}
        self.shapes: dict = {}
        self.walk_memo: dict = {}

    def shape(self, drafts: int) -> _Shape:
        """The shape of this law's tree with D = ``drafts``."""
        if drafts not in self.shapes:
            kind = self.tree.shape
            self.shapes[drafts] = (_Chains(self, drafts) if kind == "chains" else _Beam(self, drafts)
                                   if kind == "beam" else _Distinct(self, drafts, self.tree.branching))
        return self.shapes[drafts]

    def walk(self, shape: _Shape, node: Node, bonus: bool, keep: int) -> tuple[dict, tuple]:
        """The rest of a block from ``node`` (SPEC 12.2): ``(outcomes, counts)`` as
        :class:`_Tally`; ``bonus``: a bonus may follow the deepest level; ``keep``: the tokens
        the outcomes keep."""
        key = (shape.drafts, node, bonus, keep)
        if key not in self.walk_memo:
            self.walk_memo[key] = self._walk(shape, node, bonus, keep)
        return self.walk_memo[key]

    def _walk(self, shape: _Shape, node: Node, bonus: bool, keep: int) -> tuple[dict, tuple]:
        tally, (c, rem, _) = _Tally(), node
        if not shape.draw(node, shape.start(node)):  # no children: a bonus (SPEC 4.4)
            if rem == 0 and not bonus:
                tally.commit((), 0, c, ONE)
            else:
                tally.counts[4] = ONE
                for y, py in enumerate(self.p_rows[c]):
                    if py:
                        tally.commit((y,)[:keep], 1, y, py)
            return tally.result()
        if self.tree.verify == "residual":
            self._residual(shape, node, bonus, keep, tally)
        else:
            self._target_only(shape, node, bonus, keep, tally)
        return tally.result()

    def _accept(self, shape: _Shape, node: Node, state, y: int, w: Fraction, bonus: bool, keep: int,
                tally: _Tally) -> None:
        """Commit child ``y`` (weight ``w``) and walk on from it (an accepted EOS ends the block)."""
        for share, child in shape.after(node, state, y):
            if y == self.eos:
                tally.merge(y, keep, ({((), 0, y): ONE}, (ZERO,) * 5), w * share)
            else:
                tally.merge(y, keep, self.walk(shape, child, bonus, max(keep - 1, 0)), w * share)

    def _correct(self, r: Row, w: Fraction, keep: int, tally: _Tally) -> None:
        tally.counts[3] += w
        for y, ry in enumerate(r):
            if ry:
                tally.commit((y,)[:keep], 1, y, w * ry)

    def _residual(self, shape: _Shape, node: Node, bonus: bool, keep: int, tally: _Tally) -> None:
        """SPEC 12.3: each candidate y, drawn from its proposal law s, is accepted with
        probability min(1, r(y) / s(y)); on a rejection r = max(r - s, 0) normalised."""
        states: dict = {(self.p_rows[node[0]], shape.start(node)): ONE}
        while states:
            nxt: dict = {}
            for (r, state), w in states.items():
                branches = shape.draw(node, state)
                if not branches:
                    self._correct(r, w, keep, tally)
                for sy, y, s, grown in branches:
                    tally.counts[2] += w * sy
                    t = self.tested_row(node, s)
                    a = min(ONE, r[y] / t[y])
                    if a:
                        self._accept(shape, node, grown, y, w * sy * a, bonus, keep, tally)
                    if a < 1:
                        tally.counts[1] += w * sy * (1 - a)
                        _add(nxt, (self.after_rejection(r, t), shape.forget(grown)), w * sy * (1 - a))
            states = nxt

    def tested_row(self, node: Node, s: Row) -> Row:
        """The row a child drawn from ``s`` at ``node`` is tested against (SPEC 12.3: ``s``)."""
        return s

    def after_rejection(self, r: Row, t: Row) -> Row:
        """r after a child tested against ``t`` is rejected (SPEC 12.3): max(r - t, 0) normalised."""
        return _normalised([max(x - z, ZERO) for x, z in zip(r, t)])

    def _target_only(self, shape: _Shape, node: Node, bonus: bool, keep: int, tally: _Tally) -> None:
        """SPEC 12.4: the node's children are drafted whole, then one draw decides."""
        states: dict = {shape.start(node): ONE}
        complete: dict = {}
        while states:
            nxt: dict = {}
            for state, w in states.items():
                branches = shape.draw(node, state)
                if not branches:
                    _add(complete, state, w)
                for sy, _, _, grown in branches:
                    _add(nxt, grown, w * sy)
            states = nxt
        p = self.p_rows[node[0]]
        for state, w in complete.items():
            children = shape.tokens(state)
            tally.counts[2] += w
            chosen, miss = target_only_choice(p, children, self.tree.threshold_single, self.tree.threshold_acc)
            for j, a in chosen:
                tally.counts[1] += w * a * j
                self._accept(shape, node, state, children[j], w * a, bonus, keep, tally)
            if miss:
                tally.counts[1] += w * miss * len(children)
                self._correct(_normalised([ZERO if y in children else x for y, x in enumerate(p)]), w * miss,
                              keep, tally)

    def block(self, c: Optional[int], k: int, drafts: int, bonus: bool, keep: int = 0) -> tuple[dict, tuple]:
        """A block from context ``c`` with a tree of depth ``k`` (``bonus``: a bonus may follow
        its deepest level): its outcomes ``{(first keep tokens, committed, last): probability}``
        and expected counters (SPEC 12.5, in SPEC 7's order)."""
        shape = self.shape(drafts)
        out, (acc, rej, tests, cor, bon) = self.walk(shape, shape.root(c, k), bonus, keep)
        drafted = shape.drafted(c, k)
        draws = (drafted if shape.draws_per_node else ZERO) + tests + cor + bon
        return out, (ONE, drafted, acc, rej, drafted - acc - rej, bon, acc + cor + bon, draws)


# ---------------------------------------------------------------- a report


def total_variation(a: dict, b: dict) -> Fraction:
    """Half the sum of the absolute differences of two exact distributions ``{outcome: p}``."""
    return sum((abs(a.get(x, ZERO) - b.get(x, ZERO)) for x in set(a) | set(b)), ZERO) / 2


def target_output(config: Config, depth: int) -> dict:
    """The law of the first ``depth`` tokens of plain sampling from the target's rows (after
    SPEC 9; shorter where an EOS ends the session, at most ``limit``)."""
    rows, eos, out = config.rows, config.eos, dict[tuple, Fraction]()
    prefixes: dict = {(): ONE}
    for _ in range(min(depth, config.limit)):
        nxt: dict = {}
        for prefix, w in prefixes.items():
            if prefix and prefix[-1] == eos:
                _add(out, prefix, w)
                continue
            for y, py in enumerate(row_of(rows.target(prefix[-1] if prefix else None))):
                if py:
                    _add(nxt, prefix + (y,), w * py)
        prefixes = nxt
    for prefix, w in prefixes.items():
        _add(out, prefix, w)
    return out


def tree_report(config: Config, tree: Any, width: int, drafts: int, depth: int) -> dict:
    """The exact analysis of ``config`` (mode tree) with ``tree`` at ``width`` and D =
    ``drafts``: ``committed_per_pass`` of one block from the empty prefix with no limit (SPEC
    12.6's figures), ``expected`` the session's counters (SPEC 7, to the limit or EOS),
    ``output`` the law of the first ``depth`` committed tokens, ``target`` plain sampling's,
    ``tv`` their total variation (exactly 0 when lossless) and ``verdict`` ``"lossless"`` or
    ``"lossy"``. Raises :class:`~.errors.InvalidInput` for a refused tree (:class:`TreeShapeLaw`)."""
    law = TreeShapeLaw(config, tree)
    output = law.output_weights(min(depth, config.limit), width, drafts)
    target = target_output(config, depth)
    tv = total_variation(output, target)
    return {"committed_per_pass": law.first_block(width, drafts)["committed"],
            "expected": law.expectations(width, drafts), "output": output, "target": target, "tv": tv,
            "verdict": "lossless" if tv == 0 else "lossy"}


def cost(config: Config, tree: Any, depth: int, widths: Sequence[int],
         sweep_drafts: Sequence[int] = ()) -> int:
    """An estimate of the work of a tree analysis, in analysis units (about a microsecond of one
    core, as :func:`.analysis.analysis_cost`), computed before any of it from V (vocabulary), D
    (drafts), k = min(largest width, limit), the limit, ``depth`` and the rows' bit size: the
    session's expectations at the config's width and each of ``widths``, the law of the first
    ``depth`` tokens (:func:`tree_report`), and one block from the empty prefix for each D of
    ``sweep_drafts`` and each width (``tree_sweep``).

    - **walk nodes** per width: (V + 1) contexts x k depths x the shape's states (``chains``: D
      alive counts; ``distinct``: k depths; ``beam``: the k D nodes of a beam tree), x 2 (a
      bonus at the deepest level or not);
    - **branches at a node** (:func:`branches`): the children's states enumerated, each asking
      one question of V answers;
    - **outcome tables** merged at each acceptance: (k + 1) lengths x V^keep first tokens, keep
      0 for the expectations and 1..depth for the output law;
    - **the session**: limit x (V + 1) contexts x (k + 1) V outcomes, growing with the limit;
    - all times ``1 + max(0, bits - 64) / 32 * (1 + limit / 32)``, ``bits`` the size of the
      rows' common step denominator (:func:`.chain_law.step_denominator`): exact fractions grow
      with the rows' digits and the session's length.

    Measured (docs/analysis.md): between 0.01 and 1.2 microseconds a unit above 100,000 units
    (an over-estimate for wide vocabularies), up to 3.3 on configs of a few thousand units.
    """
    size, limit = len(config.vocab), config.limit
    k = min(max([config.width, *widths]), limit)
    width_count = len({config.width, *widths})

    def walk(drafts: int, depth_: int) -> float:
        states = {"chains": drafts, "distinct": k}.get(tree.shape, k * drafts)
        return 2 * (size + 1) * k * states * branches(tree, size, drafts) * (k + 1) * size ** depth_

    session = width_count * (walk(config.drafts, 0) * (1 + limit / 8) + limit * (size + 1) * (k + 1) * size
                             * (1 + limit / 4))
    output = sum(walk(config.drafts, keep) for keep in range(1, min(depth, limit) + 1))
    sweep = width_count * sum(walk(d, 0) for d in sweep_drafts)
    bits = step_denominator(config).bit_length()
    return int((session + output + sweep) * (1 + max(0, bits - 64) / 32 * (1 + limit / 32)) / 4)


def branches(tree: Any, size: int, drafts: int) -> int:
    """The branches the walk enumerates and merges at one node of ``tree`` (SPEC 12) with V =
    ``size`` tokens and D = ``drafts``: ``chains`` + ``"residual"`` D V x D (one candidate at a
    time, the rejected ones forgotten, then up to D alive counts after an acceptance); ``chains`` +
    ``"target_only"`` V min(V, D) (each state drawn, then each child accepted) times the ordered
    draws merged by (distinct tokens in order, their counts): sum over d <= D, j <= d of
    P(V, j) C(d - 1, j - 1); ``distinct`` V times the
    ordered sibling lists of fewer than b tokens, sum over j < b of P(V, j) (b the widest
    branching); ``beam`` D."""
    if tree.shape == "beam":
        return drafts
    if tree.shape == "chains" and tree.verify == "residual":
        return drafts * size * drafts
    if tree.shape == "chains":
        return size * min(size, drafts) * sum(perm(size, j) * comb(d - 1, j - 1) for d in range(1, drafts + 1)
                                              for j in range(1, min(d, size) + 1))
    b = max(tree.branching or (drafts,))
    return size * sum(perm(size, j) for j in range(min(b, size)))


# ---------------------------------------------------------------- what /v1/analysis reads


def tree_of(config: Config) -> Optional[Any]:
    """The config's ``tree`` setting (SPEC 12; its fields as :class:`Tree`'s), ``None`` when it
    was not sent: then SPEC 11 holds and the analysis is :class:`.tree_analysis.TreeLaw`'s."""
    return getattr(config, "tree", None)


def law_for(config: Config) -> TreeLaw:
    """The exact law of a mode-tree ``config``: SPEC 11's per-depth recursion
    (:class:`.tree_analysis.TreeLaw`) for chains walked by ``"residual"`` (the default tree,
    sent or not: equal to the enumeration, tests/test_tree_law.py), else the enumeration of
    :class:`TreeShapeLaw`."""
    tree = tree_of(config)
    if tree is None or (tree.shape == "chains" and tree.verify == "residual"):
        return TreeLaw(config)
    return TreeShapeLaw(config, tree)


def analysis_cost(config: Config, depth: int, widths: Sequence[int], sweep_drafts: Sequence[int]) -> int:
    """The cost of ``POST /v1/analysis`` for a mode-tree ``config`` in analysis units: SPEC 11's
    (:func:`.tree_analysis.tree_cost`) for chains walked by ``"residual"``, else :func:`cost`
    with the ``tree_sweep`` over ``sweep_drafts``."""
    tree = tree_of(config)
    if tree is None or (tree.shape == "chains" and tree.verify == "residual"):
        return tree_cost(config, depth, widths, sweep_drafts)
    return cost(config, tree, depth, widths, sweep_drafts)
