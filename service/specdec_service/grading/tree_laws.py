"""The exact laws of SPEC 12 trees for grading: the correct rule's and each catalogued SPEC 12
mistake's, by the enumeration of :class:`~specdec_service.engine.tree_law.TreeShapeLaw` with one
rule swapped (never a closed form).

- ``tree-distinct-tested-against-q``: siblings drawn without replacement (shape ``distinct``)
  but each tested against the fixed draft row q, and the residual updated with q, instead of
  its proposal law s_j (SPEC 12.3; the SpecInfer residual applied to Jeon et al.'s draws);
- ``tree-distinct-residual-not-updated``: shape ``distinct`` tested against s_j, but r is not
  updated after a rejected sibling (SPEC 12.3): every sibling is tested against p;
- ``tree-repeated-child-tested-twice``: shape ``chains`` walked by ``target_only`` with the
  trie's child of a token drafted by c chains tested c times in a row (not once, SPEC 12.1.1), so
  its p is added to acc c times (SPEC 12.4; fms-extras#12).

The enumeration takes u continuous. :func:`discrete_node_law` is one target-only node's law with
u as SPEC 2 draws it (a multiple of 2^-53), exact for a rule that differs from SPEC 12.4 only on
single values of u: ``tree-inclusive-coin-test`` (``u * threshold_acc <= acc_j``, sglang#35771).

These laws serve :func:`.laws.law_of_program` as block programs (:data:`SHAPE_LAWS`): a block
from context ``c`` with ``k`` levels is :meth:`TreeShapeLaw.block` with every committed token
kept. Pure Python, exact (:class:`fractions.Fraction`).
"""

from __future__ import annotations

from fractions import Fraction
from itertools import product
from math import ceil, floor
from typing import Any, Optional, Sequence

from ..engine.tree_law import ONE, ZERO, Node, Tree, TreeShapeLaw, _add, _normalised, _Shape, _Tally


class AgainstFixedQ(TreeShapeLaw):
    """``tree-distinct-tested-against-q``: every sibling tested against (and subtracted as) the
    fixed draft row q at the node's context, not its proposal law s_j (SPEC 12.3)."""

    def tested_row(self, node: Node, s: tuple) -> tuple:
        """q at the node's context."""
        return self.q_rows[node[0]]


class ResidualKept(TreeShapeLaw):
    """``tree-distinct-residual-not-updated``: r stays p after a rejected sibling (SPEC 12.3)."""

    def after_rejection(self, r: tuple, t: tuple) -> tuple:
        """r unchanged."""
        return r


class RepeatedChildTwice(TreeShapeLaw):
    """``tree-repeated-child-tested-twice``: with shape ``chains`` and ``target_only``, a trie
    child drafted by c chains is tested c times in a row, its p counted in acc_j each time
    (SPEC 12.1.1, 12.4); an accepted child leads to its merged subtree as in the correct rule."""

    def _target_only(self, shape: _Shape, node: Node, bonus: bool, keep: int, tally: _Tally) -> None:
        """Every ordered draw of the alive chains' tokens, then one u tests each distinct token
        (in order of first appearance) as many times as chains drew it."""
        c, _, alive = node
        q, p = self.q_rows[c], self.p_rows[c]
        for drawn in product([y for y, qy in enumerate(q) if qy], repeat=alive):
            w = ONE
            for y in drawn:
                w *= q[y]
            tokens = tuple(dict.fromkeys(drawn))
            state = (alive, tokens, tuple(drawn.count(y) for y in tokens))
            tally.counts[2] += w
            lower, acc = ZERO, ZERO
            for j, y in enumerate([y for y in tokens for _ in range(drawn.count(y))]):
                acc += p[y]
                if not p[y]:
                    continue
                upper = ONE if p[y] >= self.tree.threshold_single else min(ONE, acc / self.tree.threshold_acc)
                if upper > lower:
                    tally.counts[1] += w * (upper - lower) * j
                    self._accept(shape, node, state, y, w * (upper - lower), bonus, keep, tally)
                    lower = upper
            if lower < 1:
                tally.counts[1] += w * (1 - lower) * len(drawn)
                self._correct(_normalised([ZERO if y in tokens else x for y, x in enumerate(p)]), w * (1 - lower),
                              keep, tally)


SHAPE_LAWS = {
    "tree-distinct-tested-against-q": AgainstFixedQ,
    "tree-distinct-residual-not-updated": ResidualKept,
    "tree-repeated-child-tested-twice": RepeatedChildTwice,
}
"""The SPEC 12 mistakes whose law is the enumeration with one rule swapped, by catalogue id."""

SHAPES = {
    "tree-distinct-tested-against-q": ("distinct", "residual"),
    "tree-distinct-residual-not-updated": ("distinct", "residual"),
    "tree-repeated-child-tested-twice": ("chains", "target_only"),
}
"""The shape and verifier a mistake is made in: its law is computed only for configs of them."""


TWO_53 = 2**53
"""SPEC 2's draws are u = m * 2^-53, m uniform in 0..2^53-1."""


def discrete_node_law(rule: Any, p: Sequence[Fraction], children: Sequence[int], threshold_acc: Fraction = ONE,
                      threshold_single: Fraction = ONE) -> dict[int, Fraction]:
    """``{token: probability}`` of the token one target-only node commits (SPEC 12.4, with its
    correction of SPEC 12.2) when u is SPEC 2's draw: u = m * 2^-53 for m uniform in 0..2^53-1,
    not a continuous uniform (the enumeration of :class:`TreeShapeLaw` is continuous, so it
    cannot see an event of one value of u). ``rule`` decides a child as
    :meth:`~..engine.verifiers.tree_target_only.TargetOnlyNode.accepted_by` does (that class or a
    catalogued mistake's), ``p`` is the target row at the node (exact, summing to 1),
    ``children`` the children's tokens in order (distinct), the thresholds in (0, 1].

    Exact: the decisions depend on m only through ``m * threshold_acc / 2^53`` against each
    acc_j, so m's range splits at ceil(b_j) and floor(b_j) + 1 (b_j = acc_j * 2^53 /
    threshold_acc) into intervals of one outcome, each weighed by its length. Raises
    ``ValueError`` when no child is accepted on an interval and p has no mass outside the
    children."""
    cuts, acc = {0, TWO_53}, ZERO
    for y in children:
        acc += p[y]
        b = acc * TWO_53 / threshold_acc
        cuts |= {c for c in (ceil(b), floor(b) + 1) if 0 <= c <= TWO_53}
    points = sorted(cuts)
    law: dict[int, Fraction] = {}
    rest = [ZERO if y in children else x for y, x in enumerate(p)]
    if not any(rest):
        rest = []  # every interval must accept: a ValueError below otherwise
    for start, end in zip(points, points[1:]):
        weight = Fraction(end - start, TWO_53)
        chosen = _node_choice(rule, p, children, Fraction(start, TWO_53) * threshold_acc, threshold_single)
        if chosen is not None:
            _add(law, chosen, weight)
            continue
        if not rest:
            raise ValueError("no child accepted and no target mass outside the children")
        for y, share in enumerate(_normalised(rest)):
            if share:
                _add(law, y, weight * share)
    return law


def _node_choice(rule: Any, p: Sequence[Fraction], children: Sequence[int], u_acc: Fraction,
                 single: Fraction) -> Optional[int]:
    """The child ``rule`` accepts at ``u_acc`` = u * threshold_acc, ``None`` when none."""
    acc = ZERO
    for y in children:
        acc += p[y]
        if rule.accepted_by(u_acc, acc, p[y], single) is not None:
            return y
    return None


def tree_setting(config: Any) -> Tree:
    """The config's tree as :class:`~specdec_service.engine.tree_law.Tree` (SPEC 12's default,
    chains walked by residual, when ``tree`` was not sent)."""
    tree = getattr(config, "tree", None)
    if tree is None:
        return Tree()
    return Tree(tree.shape, tree.verify, tree.branching, tree.threshold_single, tree.threshold_acc)


def applies(mistake_id: str, config: Any) -> bool:
    """Whether ``mistake_id`` (a key of :data:`SHAPE_LAWS`) can be made by ``config``'s tree."""
    tree = tree_setting(config)
    return (tree.shape, tree.verify) == SHAPES[mistake_id]


def shape_kernel(law_cls: type, models: Any, key: tuple) -> dict:
    """``{(committed tokens, None): probability}`` of one block of ``law_cls`` (a
    :class:`TreeShapeLaw` class) for the config of ``models`` (:class:`.laws.Models`, which
    keeps one law a class so that its walks are enumerated once), ``key`` = ``(last, carry,
    k, fits)`` as :func:`.laws.law_of_program` asks: from context ``last`` with ``k`` levels
    (``fits``: a bonus may follow the deepest one), every committed token kept."""
    laws = models.__dict__.setdefault("shape_laws", {})
    if law_cls not in laws:
        laws[law_cls] = law_cls(models.config, tree_setting(models.config))
    law = laws[law_cls]
    last, _, k, fits = key
    out, _ = law.block(last, k, models.drafts, fits, keep=k + 1)
    kernel: dict = {}
    for (tokens, _, _), chance in out.items():
        _add(kernel, (tokens, None), chance)
    return kernel


def first_token_tv(config: Any, law_cls: type = TreeShapeLaw) -> Fraction:
    """The total variation between the first committed token of ``config`` decoded by
    ``law_cls`` (a :class:`TreeShapeLaw` class) and the target's first token (SPEC 12.6's
    measure of a lossy tree)."""
    from ..engine.tree_law import target_output, total_variation

    law = law_cls(config, tree_setting(config))
    return total_variation(law.output_weights(1, config.width, config.drafts or 1), target_output(config, 1))
