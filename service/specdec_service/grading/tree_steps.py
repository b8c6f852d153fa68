"""The grader's reading of a SPEC 12 tree block's own decisions (shapes chains, distinct and beam
walked by the residual or the target-only verifier; SPEC 11's chains + residual is
:mod:`.tree_checks`'s).

Each step of a tree block is judged against what SPEC 12 says *given the block's own earlier
records*, so that the first broken rule is the one a report names and its consequences are not
reported again as faults of their own:

- the **acceptance** check compares the block's tests with the correct verifier walking the
  block's **own tree** (its recorded nodes) from the draw after its own proposal draws
  (:func:`judge`): a wrong node token, parent or order fails the proposal check alone;
- the **correction**, **discard** and **bonus** checks compare the block's tail with what SPEC
  12.2 makes of its **own tests** (:func:`tree_tail`): after its last rejection, the correction
  from its own last residual (``residual``: the ``residual_exact`` it recorded) or from p without
  the children of the node its tests were at (``target_only``); after its last acceptance of a
  leaf, the bonus of SPEC 4.4; the drafted tokens it did not test are the discarded ones. A wrong
  test, compared value or residual update fails the acceptance check alone.

The rules applied are the engine's own (:data:`~..engine.trees.TREE_DECODERS`, the node
verifiers, :func:`~..engine.verifiers.tree.correction_record`, the bonus rule), not a second
implementation. A reading is left out when the records cannot be read as a tree of the config
(a label outside the vocabulary, a parent that is not an earlier node, a distinct sibling the
draft cannot give, a test of a node the tree does not have, a recorded residual that is no
distribution): that part of the block is then judged against the engine's own block.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Optional

from ..engine.bounds import MAX_POSITION, int_in
from ..engine.distributions import Dist
from ..engine.draws import Stream
from ..engine.shapes.distinct import without
from ..engine.shapes.nodes import DraftedNodes, DraftNode
from ..engine.trees import TREE_DECODERS, TreeDecoder
from ..engine.verifiers.tree import correction_record
from ..engine.verifiers.tree_target_only import outside
from ..engine.verifiers.walk import discarded


def judged_here(config) -> bool:
    """Whether ``config``'s blocks are read by this module: mode tree with a ``tree`` other than
    SPEC 11's chains + residual (SPEC 12)."""
    tree = config.tree
    return config.mode == "tree" and tree is not None and not tree.is_section_11


def _after(records, n: int) -> int:
    """The draw after the last valid draw recorded in ``records`` (``n`` when none is)."""
    for record in records:
        d = record.get("draw") if isinstance(record, dict) else None
        if isinstance(d, dict) and int_in(d.get("position"), 0, MAX_POSITION - 1):
            n = d["position"] + 1
    return n


def own_tree(state, rows, block: dict) -> Optional[DraftedNodes]:
    """The tree the block recorded (its ``nodes``: ``node`` 1, 2, ... in order, each ``parent`` an
    earlier node or the root 0), each node's proposal law as SPEC 12.1 gives it for that tree: q
    at the node's context (chains), s_j = q without the earlier siblings, normalised (distinct),
    none (beam); a chains node stands for the drafted tokens of the recorded chains through it
    (:func:`_copies`). ``None`` when the records are no such tree."""
    cfg = state.config
    tree = DraftedNodes(state.committed[-1] if state.committed else None)
    nodes = block["proposal"].get("nodes")
    if not isinstance(nodes, list):
        return None
    by_id = {0: tree.root}
    paths: dict[int, tuple] = {0: ()}
    for i, record in enumerate(nodes):
        up = record.get("parent") if isinstance(record, dict) else None
        parent = by_id.get(up) if isinstance(up, int) else None
        label = record.get("token") if parent is not None else None
        token = cfg.index.get(label) if isinstance(label, str) else None
        if token is None or record.get("node") != i + 1 or parent is None:
            return None
        law = _law(cfg, rows, tree, parent, token)
        if law is False:
            return None
        node = by_id[i + 1] = tree.add(parent, token, law)
        paths[node.id] = paths[parent.id] + (label,)
        tree.tokens.append(token)
    if cfg.tree.shape == "chains":
        _copies(tree, paths, block["proposal"].get("chains"))
    return tree


def _copies(tree: DraftedNodes, paths: dict, chains: Any) -> None:
    """SPEC 12.1.1: a chains node stands for the chains that pass through its path; nodes of the
    same path (a tree not merged) share them, one each and the rest to the first."""
    if not isinstance(chains, list):
        return
    seen: dict[tuple, list] = {}
    for node in tree.nodes:
        seen.setdefault(paths[node.id], []).append(node)
    for path, nodes in seen.items():
        through = sum(isinstance(c, list) and tuple(c[:len(path)]) == path for c in chains)
        nodes[0].copies = max(1, through - len(nodes) + 1)


def _law(cfg, rows, tree: DraftedNodes, parent: DraftNode, token: int) -> Any:
    """The proposal law of ``token`` as ``parent``'s next child: ``None`` for beam, q for chains,
    s_j for distinct; ``False`` when no law gives ``token`` (an earlier sibling's token again, or
    none of the draft's mass)."""
    if cfg.tree.shape == "beam":
        return None
    law: Optional[Dist] = rows.draft(tree.last if parent is tree.root else parent.token)
    if cfg.tree.shape == "distinct":
        for sibling in parent.children:
            law = None if law is None else without(law, sibling.token)  # type: ignore[arg-type]  # a node holds a token
    return law if law is not None and law.probability(token) else False


def judge(state, block: dict) -> dict:
    """What SPEC 12 makes of the block's own records (see the module doc), read once: ``{"verification"}``
    (the correct verifier's tests of the block's own tree) when its tree can be read and walked,
    and ``{"correction", "discarded", "bonus", "no_bonus"}`` (:func:`tree_tail`) when its tests
    can be read too; ``{}`` when neither can."""
    cfg = state.config
    decoder = TREE_DECODERS[(cfg.tree.shape, cfg.tree.verify)]
    rows = decoder.rows.read(cfg)
    tree = own_tree(state, rows, block)
    if tree is None:
        return {}
    out: dict = {}
    try:
        stream = Stream(cfg.seed, _after(block["proposal"]["steps"], block["position"]))
        out["verification"] = decoder.verifier.verify(state, rows, tree, stream).verification
    except ValueError:  # a residual of no mass: a tree no correct verifier walks to its end
        pass
    tail = tree_tail(state, rows, decoder, tree, block)
    return out if tail is None else {**out, **tail}


def tree_tail(state, rows, decoder: TreeDecoder, tree: DraftedNodes, block: dict) -> Optional[dict]:
    """``{"correction", "discarded", "bonus", "no_bonus"}`` as SPEC 12.2 makes them of the block's
    own ``tree`` and tests (see the module doc) under ``decoder``'s rules, with the draw after the
    block's last recorded draft or test draw; ``None`` when the tests cannot be read."""
    cfg = state.config
    records = block["verification"]
    walked = _walked(tree, records)
    if walked is None:
        return None
    node, accepted = walked
    context = node.token if node is not tree.root else tree.last
    stream = Stream(cfg.seed, _after(block["proposal"]["steps"] + records, block["position"]))
    gone = [cfg.vocab[t] for t in discarded(tree, records)]
    if records and records[-1].get("accepted") is not True:
        r = _correction_row(cfg, rows, tree, records)
        if r is None:
            return None
        return {"correction": correction_record(cfg.vocab, len(accepted), context, r, stream), "discarded": gone,
                "bonus": None, "no_bonus": "rejection"}
    if node.children and node.token != cfg.eos:  # SPEC 12.2: the walk goes on; the acceptance check says so
        return {"correction": None, "discarded": gone, "bonus": None, "no_bonus": None}
    bonus = decoder.verifier.bonus
    reason = bonus.missing(cfg, len(state.committed), accepted, False)
    return {"correction": None, "discarded": gone, "no_bonus": reason,
            "bonus": None if reason is not None else bonus.add(rows, context, cfg.vocab, stream)}


def _walked(tree: DraftedNodes, records: list) -> Optional[tuple[DraftNode, list[int]]]:
    """The node the block's tests ended at (the last accepted child, or the root) and the
    accepted tokens; ``None`` when a record tests a node the tree does not have, or a child of
    another node than the one reached."""
    by_id = {node.id: node for node in tree.nodes}
    node, accepted = tree.root, []
    for v in records:
        key = v.get("node")
        child = by_id.get(key) if isinstance(key, int) else None
        if child is None or child.parent is not node:
            return None
        if v.get("accepted") is True:
            node = child
            accepted.append(child.token)
    return node, accepted  # type: ignore[return-value]  # every node below the root holds a token


def _correction_row(cfg, rows, tree: DraftedNodes, records: list) -> Optional[Dist]:
    """SPEC 12.2's r after the block's last rejection: its own recorded residual (``residual``)
    or p at the node without the node's children's tokens (``target_only``, SPEC 12.4); ``None``
    when the recorded residual is not a distribution over the vocabulary."""
    last = records[-1]
    if cfg.tree.verify == "residual":
        return _exact_row(last.get("residual_exact"), len(cfg.vocab))
    parent = next(n for n in [tree.root, *tree.nodes] if n.id == last["node"]).parent
    assert parent is not None  # a tested node is below the root
    p = rows.target(tree.last if parent is tree.root else parent.token)
    left = [c.token for c in parent.children]
    if all(p.probability(y) == 0 for y in range(len(cfg.vocab)) if y not in left):
        return None  # no mass outside the children: no correct test rejects them all
    return outside(p, left)


def _exact_row(strings: Any, size: int) -> Optional[Dist]:
    """The distribution written as exact strings (``"1/2"``), or ``None`` when it is not one."""
    if not isinstance(strings, list) or len(strings) != size:
        return None
    try:
        values = [Fraction(s) for s in strings]
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    if any(v < 0 for v in values) or sum(values) != 1:
        return None
    return Dist.from_fractions(values)
