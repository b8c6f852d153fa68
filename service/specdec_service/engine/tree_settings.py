"""The setting ``tree`` of mode ``tree``: a shape and a verifier (SPEC section 12).

``tree`` is an object read only in mode ``tree``: ``shape`` (``"chains"``, ``"distinct"`` or
``"beam"``), ``verify`` (``"residual"`` or ``"target_only"``), ``branching`` (shape
``"distinct"`` only: 1 to 16 integers from 1 to 8, one per depth) and ``threshold_single``,
``threshold_acc`` (verify ``"target_only"`` only: numbers with 0 < t <= 1, read as the decimal
written). Absent, it is ``{"shape": "chains", "verify": "residual"}`` and SPEC section 11 holds
exactly. :func:`parse_tree` reads it and refuses, naming the field (SPEC 12): ``"residual"``
with ``"beam"``, ``branching`` with another shape, a threshold with another verifier, ``tree``
in another mode, and a distinct tree of more than :data:`MAX_TREE_NODES` nodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

from .errors import Fault, InvalidInput
from .inputs import MAX_TREE_NODES, TREE, expectation
from .sampling import exact_decimal, not_carried

SHAPES = tuple(TREE["properties"]["shape"]["enum"])
"""The shapes of SPEC 12.1: chains, distinct, beam."""
VERIFIERS = tuple(TREE["properties"]["verify"]["enum"])
"""The verifiers of SPEC 12.3-12.4: residual, target_only."""
TREE_KEYS = tuple(TREE["properties"])
"""The fields of a ``tree`` object, in the order a config echoes them."""
_MESSAGES = {key: expectation(schema) for key, schema in TREE["properties"].items()}
_ONE = Fraction(1)


@dataclass(frozen=True)
class TreeSetting:
    """A read ``tree`` (SPEC 12): ``shape``, ``verify``, ``branching`` (``None``: the default
    [D, 1, 1, ...]), the thresholds as exact fractions (default 1), and ``echo``: the fields
    sent, ``(name, value)`` pairs in :data:`TREE_KEYS` order, each number as float64."""

    shape: str = "chains"
    verify: str = "residual"
    branching: Optional[tuple[int, ...]] = None
    threshold_single: Fraction = _ONE
    threshold_acc: Fraction = _ONE
    echo: tuple = ()

    @property
    def is_section_11(self) -> bool:
        """Whether this is the default tree, SPEC section 11 exactly (chains, residual)."""
        return self.shape == "chains" and self.verify == "residual"

    def branching_at(self, depth: int, drafts: int) -> int:
        """b_depth (``depth`` 1-based): the list's entry, 1 past its end; default [D, 1, 1, ...]."""
        branching = self.branching if self.branching is not None else (drafts,)
        return branching[depth - 1] if depth <= len(branching) else 1


def distinct_nodes(branching: tuple[int, ...], depth: int) -> int:
    """The most nodes a distinct tree of ``depth`` levels can hold (SPEC 12, ``branching``):
    the sum over i = 1..depth of b_1 * ... * b_i (1 past the list's end)."""
    total, width = 0, 1
    for i in range(depth):
        width *= branching[i] if i < len(branching) else 1
        total += width
    return total


def parse_tree(obj: Any, mode: str, drafts: int, depth: int, path: tuple = ("tree",)) -> TreeSetting:
    """Read a ``tree`` object (SPEC 12) of a config in ``mode`` with ``drafts`` (D) and
    ``depth`` = min(width, limit) (K). Raises :class:`~.errors.InvalidInput` naming each bad
    field (paths under ``path``): a structure or bound of :data:`.inputs.TREE`, ``tree`` in a
    mode other than ``tree``, ``verify`` "residual" with ``shape`` "beam", ``branching`` with a
    shape other than "distinct" or above :data:`MAX_TREE_NODES` nodes, a threshold with a
    verifier other than "target_only"."""
    if mode != "tree":
        raise InvalidInput.at(path, f"is read only in mode tree, not in mode {mode} (SPEC section 12)")
    if not isinstance(obj, dict):
        raise InvalidInput.at(path, expectation(TREE))
    faults = [Fault(path + (key,), f"is not a tree setting ({', '.join(TREE_KEYS)})") for key in obj if key not in TREE_KEYS]
    shape, verify = obj.get("shape", "chains"), obj.get("verify", "residual")
    for key, allowed, value in (("shape", SHAPES, shape), ("verify", VERIFIERS, verify)):
        if value not in allowed:
            faults.append(Fault(path + (key,), _MESSAGES[key]))
    if shape == "beam" and verify == "residual":
        faults.append(Fault(path + ("verify",), 'must be "target_only" with shape "beam": a deterministic tree has no '
                                                "draft law to test against (SPEC section 12)"))
    branching = _branching(obj, shape, depth, path, faults)
    thresholds = [_threshold(obj, key, verify, path, faults) for key in ("threshold_single", "threshold_acc")]
    if faults:
        raise InvalidInput(faults)
    echo = tuple((key, _plain(obj[key])) for key in TREE_KEYS if key in obj)
    return TreeSetting(shape, verify, branching, thresholds[0], thresholds[1], echo)


def _branching(obj: dict, shape: str, depth: int, path: tuple, faults: list) -> Optional[tuple[int, ...]]:
    """SPEC 12: ``branching``, a list of 1 to 16 integers from 1 to 8, shape "distinct" only,
    at most :data:`MAX_TREE_NODES` nodes over ``depth`` levels; ``None`` when absent."""
    if "branching" not in obj:
        return None
    value, where = obj["branching"], path + ("branching",)
    if shape != "distinct":
        faults.append(Fault(where, f'is read only with shape "distinct", not "{shape}" (SPEC section 12)'))
        return None
    schema = TREE["properties"]["branching"]
    items = schema["items"]
    if (not isinstance(value, list) or not schema["minItems"] <= len(value) <= schema["maxItems"]
            or any(type(b) is not int or not items["minimum"] <= b <= items["maximum"] for b in value)):
        faults.append(Fault(where, _MESSAGES["branching"]))
        return None
    nodes = distinct_nodes(tuple(value), depth)
    if nodes > MAX_TREE_NODES:
        faults.append(Fault(where, f"gives {nodes} nodes over min(width, limit) = {depth} depths: the sum of "
                                   f"b_1 * ... * b_i must be at most {MAX_TREE_NODES} (SPEC section 12)"))
    return tuple(value)


def _threshold(obj: dict, key: str, verify: str, path: tuple, faults: list) -> Fraction:
    """SPEC 12: a threshold, 0 < t <= 1 read as the decimal written, verify "target_only" only;
    1 when absent."""
    if key not in obj:
        return _ONE
    where = path + (key,)
    if verify != "target_only":
        faults.append(Fault(where, f'is read only with verify "target_only", not "{verify}" (SPEC section 12)'))
        return _ONE
    value = exact_decimal(obj[key])
    why = _MESSAGES[key] if value is None or not 0 < value <= 1 else not_carried(obj[key])
    if why:
        faults.append(Fault(where, why))
        return _ONE
    assert value is not None  # checked above
    return value


def _plain(x: Any) -> Any:
    """A sent value as a config echoes it: a number as float64 (integral: an integer)."""
    if type(x) in (str, int, list):
        return x
    x = float(x)
    return int(x) if x.is_integer() else x


def block_drafts(config) -> int:
    """The chains a block of ``config`` counts as, for cost: ``drafts`` (D chains of ``width``, or
    D beam nodes a depth), or with shape distinct the least D' with D' * width at least the tree's
    most nodes (:func:`distinct_nodes` over min(width, limit) depths)."""
    tree = config.tree
    if config.mode != "tree" or tree is None or tree.shape != "distinct":
        return config.drafts
    depth = min(config.width, config.limit)
    nodes = distinct_nodes(tuple(tree.branching_at(i, config.drafts) for i in range(1, depth + 1)), depth)
    return max(config.drafts, -(-nodes // config.width))


def block_shape(config) -> tuple[int, int, int]:
    """``(nodes, candidates, rejections)`` of one block's tree of ``config``, for the cost model
    (``budget.tree_block_work``): the nodes drafted, the most children tested at one node, the
    most tests failed in one block. D chains of ``width`` (SPEC 11, and the trie of
    ``"target_only"``): ``D * width``, ``D``, ``D`` (a rejected candidate's chains end). Beam
    (SPEC 12.1.3): at most D nodes a depth, D children of one node, D passed over a depth. Distinct
    (SPEC 12.1.2): :func:`distinct_nodes`, the largest branching, and at most that many a depth.
    Outside mode tree: ``(width, 1, 1)``."""
    if config.mode != "tree":
        return config.width, 1, 1
    tree, drafts, width = config.tree, config.drafts, config.width
    depth = min(width, config.limit)
    if tree is None or tree.shape == "chains":
        return drafts * width, drafts, drafts
    if tree.shape == "beam":
        return drafts * depth, drafts, drafts * depth
    branching = tuple(tree.branching_at(i, drafts) for i in range(1, depth + 1))
    most = max(branching)
    return distinct_nodes(branching, depth), most, most * depth
