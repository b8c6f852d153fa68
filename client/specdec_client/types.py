"""Typed views of what the specdec service sends (SPEC sections 2-8).

Every class is a frozen dataclass whose fields carry the JSON keys' names
and values (token labels as ``str``, probabilities as ``float``, lists as
tuples). Each keeps the JSON object it was read from: ``to_dict()`` returns
exactly what the server sent (a deep copy), so nothing is lost, not even a
key this version of the SDK does not know. An object built by hand (no
``raw``) serialises its fields instead.

``from_dict`` raises ``KeyError``, ``TypeError`` or ``ValueError`` for a
malformed object; :class:`~specdec_client.transport.Transport` turns those into
:class:`~specdec_client.errors.InvalidResponse`.

The SDK has no decoding logic: these classes only hold what the service
computed. The field meanings are the SPEC's and ``docs/trace-format.md``'s.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, fields
from typing import Any, Iterator, Mapping, Optional, Sequence, Union

from .errors import InvalidSettings

TRACE_FORMAT = "specdec-trace/1"
"""The trace format this SDK reads and writes."""

COUNTER_NAMES = (
    "target_passes", "draft_steps", "accepted", "rejected", "discarded", "bonus_tokens", "committed", "draws",
)
"""The work counters of SPEC section 7, in order."""

CONFIG_KEYS = ("target", "draft", "mode", "width", "seed", "limit", "eos", "sampling", "drafts", "tree")
"""The session settings of SPEC section 8, in the order a trace echoes them (``sampling``: SPEC
section 9; ``drafts``: SPEC section 11, mode tree; ``tree``: SPEC section 12, mode tree)."""

SAMPLING_KEYS = ("temperature", "top_k", "top_p", "min_p", "draft")
"""The sampling parameters of SPEC section 9, in the order they are applied (``draft`` last:
which draft rows are drafted from)."""

TREE_KEYS = ("shape", "verify", "branching", "threshold_single", "threshold_acc")
"""The fields of the setting ``tree`` (SPEC section 12), in the order a config echoes them."""

OPTIONAL_SETTINGS = ("drafts", "sampling", "tree")
"""The settings a hand-built :class:`Config` leaves out of its JSON when they are ``None`` (the
service's defaults: one draft chain, no row processing, SPEC 11's tree)."""

ModelRef = Union[str, Mapping[str, Any]]
"""A model in a config: a built-in name (``"toy"``, ``"aligned"``,
``"biased"``) or a custom table ``{"vocab", "start", "next"}``."""


def _jsonable(value: Any) -> Any:
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


def _tuple(value: Any) -> tuple[Any, ...]:
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"expected a list, got {type(value).__name__}")
    return tuple(value)


def _floats(value: Any) -> tuple[float, ...]:
    return tuple(float(x) for x in _tuple(value))


def _opt(cls: Any, value: Any) -> Any:
    return None if value is None else cls.from_dict(value)


@dataclass(frozen=True)
class Record:
    """Base of every typed result: ``raw`` is the JSON object it came from.

    Each subclass has ``from_dict(obj)``, which reads the JSON object (raising
    ``KeyError``/``TypeError``/``ValueError`` when it is malformed) and keeps
    it as ``raw``, and :meth:`to_dict`, which gives it back."""

    raw: Optional[dict[str, Any]] = field(default=None, kw_only=True, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object: what the server sent (a deep copy), or, for an
        object built by hand, its fields in JSON form."""
        if self.raw is not None:
            return copy.deepcopy(self.raw)
        return {f.name: _jsonable(getattr(self, f.name)) for f in fields(self) if f.name != "raw"}


@dataclass(frozen=True)
class Draw(Record):
    """One random draw (SPEC section 2): ``position`` n >= 0, ``u`` in
    [0, 1), ``hex`` the raw 64-bit value as 16 hex digits."""

    position: int
    u: float
    hex: str

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Draw":
        return cls(int(d["position"]), float(d["u"]), str(d["hex"]), raw=dict(d))


@dataclass(frozen=True)
class DraftStep(Record):
    """One proposal of a block (SPEC section 4.1): its 1-based ``index``,
    ``context`` (last committed-or-proposed token, ``None`` at the empty
    prefix), draft row ``q``, ``draw`` (``None`` when greedy), ``token``, and
    ``drafted``: whether the draft's own rule gives that token (``False``
    for a token the caller supplied that the draft would not have drawn);
    ``chain``: in mode tree, the 1-based chain it belongs to (SPEC 11.1),
    else ``None``."""

    index: int
    context: Optional[str]
    q: tuple[float, ...]
    draw: Optional[Draw]
    token: str
    drafted: bool
    chain: Optional[int] = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "DraftStep":
        chain = d.get("chain")
        return cls(int(d["index"]), d["context"], _floats(d["q"]), _opt(Draw, d["draw"]), str(d["token"]),
                   bool(d["drafted"]), None if chain is None else int(chain), raw=dict(d))


@dataclass(frozen=True)
class TreeNode(Record):
    """One node of a draft tree (SPEC 12): ``node`` (1-based, creation order), ``parent`` (0: the
    root, the committed prefix), ``depth``, ``context``, ``token``, its proposal ``law`` (the row
    it was drawn from; ``law_exact`` as fraction strings) or ``None`` for a beam node, and a beam
    node's ``score`` (the product of its path's draft probabilities; ``score_exact`` as a fraction
    string), else ``None``."""

    node: int
    parent: int
    depth: int
    context: Optional[str]
    token: str
    law: Optional[tuple[float, ...]]
    law_exact: Optional[tuple[str, ...]]
    score: Optional[float] = None
    score_exact: Optional[str] = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "TreeNode":
        law, exact, score = d["law"], d["law_exact"], d.get("score")
        return cls(int(d["node"]), int(d["parent"]), int(d["depth"]), d["context"], str(d["token"]),
                   None if law is None else _floats(law), None if exact is None else tuple(map(str, _tuple(exact))),
                   None if score is None else float(score), d.get("score_exact"), raw=dict(d))


@dataclass(frozen=True)
class NodeStep(Record):
    """One draw of a distinct tree (SPEC 12.1.2): the sibling ``token`` drawn for ``node``
    (child of ``parent``, at ``depth``) from its proposal ``law`` s_j after ``context``."""

    node: int
    parent: int
    depth: int
    context: Optional[str]
    law: tuple[float, ...]
    draw: Draw
    token: str

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "NodeStep":
        return cls(int(d["node"]), int(d["parent"]), int(d["depth"]), d["context"], _floats(d["law"]),
                   Draw.from_dict(d["draw"]), str(d["token"]), raw=dict(d))


def _step(d: Mapping[str, Any]) -> Union[DraftStep, NodeStep]:
    """A draft step by its keys: a distinct tree's (``node``, SPEC 12) or a chain's."""
    return NodeStep.from_dict(d) if "node" in d else DraftStep.from_dict(d)


@dataclass(frozen=True)
class Proposal(Record):
    """The uncommitted proposal of a block: ``tokens`` (labels) and one
    :class:`DraftStep` per token (SPEC section 4.1). In mode tree
    (SPEC 11.1) ``chains`` holds each chain's tokens and ``tokens``/``steps``
    are every chain's, chain 1's first; otherwise ``chains`` is ``None``."""

    tokens: tuple[str, ...]
    steps: tuple[Union[DraftStep, NodeStep], ...]
    chains: Optional[tuple[tuple[str, ...], ...]] = None
    nodes: Optional[tuple[TreeNode, ...]] = None
    """With a setting ``tree`` other than SPEC 11's (SPEC 12): every node of the draft tree, in
    creation order; else ``None``."""

    @property
    def drafted(self) -> bool:
        """True when every token is what the draft itself drew (no
        caller-supplied token)."""
        return all(not isinstance(s, DraftStep) or s.drafted for s in self.steps)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Proposal":
        chains, nodes = d.get("chains"), d.get("nodes")
        return cls(_tuple(d["tokens"]), tuple(_step(s) for s in _tuple(d["steps"])),
                   None if chains is None else tuple(_tuple(c) for c in _tuple(chains)),
                   None if nodes is None else tuple(TreeNode.from_dict(n) for n in _tuple(nodes)), raw=dict(d))


@dataclass(frozen=True)
class VerificationStep(Record):
    """The target's check of one proposal (SPEC section 4.2): rows ``p``
    and ``q`` for the ``context``, ``p_token``/``q_token`` the token's
    probabilities, ``ratio`` the acceptance ratio p/q (``None`` when
    greedy), ``draw`` (``None`` when greedy) and ``accepted``."""

    index: int
    context: Optional[str]
    token: str
    p: tuple[float, ...]
    q: tuple[float, ...]
    p_token: float
    q_token: float
    ratio: Optional[float]
    draw: Optional[Draw]
    accepted: bool

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "VerificationStep":
        ratio = d["ratio"]
        return cls(int(d["index"]), d["context"], str(d["token"]), _floats(d["p"]), _floats(d["q"]),
                   float(d["p_token"]), float(d["q_token"]), None if ratio is None else float(ratio),
                   _opt(Draw, d["draw"]), bool(d["accepted"]), raw=dict(d))


@dataclass(frozen=True)
class BlockVerificationStep(VerificationStep):
    """Mode block (SPEC section 10): the test of proposal d_i within its block. Beside the
    fields of :class:`VerificationStep`: the weight ``weight`` (w_i, float64) and
    ``weight_exact`` (``"5/8"``), the threshold ``threshold`` / ``threshold_exact`` (h_i,
    ``"4/9"``), ``below_threshold`` (eta_i < h_i; ``draw`` is eta_i), and ``accepted`` (i <= tau)."""

    weight: float
    weight_exact: str
    threshold: float
    threshold_exact: str
    below_threshold: bool

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "BlockVerificationStep":
        b = VerificationStep.from_dict(d)
        return cls(b.index, b.context, b.token, b.p, b.q, b.p_token, b.q_token, b.ratio, b.draw, b.accepted,
                   float(d["weight"]), str(d["weight_exact"]), float(d["threshold"]), str(d["threshold_exact"]),
                   bool(d["below_threshold"]), raw=dict(d))


@dataclass(frozen=True)
class TreeTest(Record):
    """One candidate tested in mode tree (SPEC 11.2), in the order tested:
    its ``depth`` and ``chain`` (1-based), ``context``, ``token`` y, rows
    ``p`` and ``q``, the row ``r`` it was tested against (``r_exact``: the
    same as fraction strings such as ``"1/2"``), ``r_token`` = r(y),
    ``q_token`` = q(y), ``ratio`` r(y)/q(y) (``ratio_exact`` exactly), its
    ``draw``, ``accepted`` (u * q(y) < r(y)) and ``alive``: the chains alive
    after the test."""

    depth: int
    chain: int
    context: Optional[str]
    token: str
    p: tuple[float, ...]
    q: tuple[float, ...]
    r: tuple[float, ...]
    r_exact: tuple[str, ...]
    r_token: float
    q_token: float
    ratio: float
    ratio_exact: str
    draw: Draw
    accepted: bool
    alive: tuple[int, ...]

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "TreeTest":
        return cls(int(d["depth"]), int(d["chain"]), d["context"], str(d["token"]), _floats(d["p"]),
                   _floats(d["q"]), _floats(d["r"]), tuple(str(x) for x in _tuple(d["r_exact"])),
                   float(d["r_token"]), float(d["q_token"]), float(d["ratio"]), str(d["ratio_exact"]),
                   Draw.from_dict(d["draw"]), bool(d["accepted"]), tuple(int(j) for j in _tuple(d["alive"])),
                   raw=dict(d))


@dataclass(frozen=True)
class ResidualTest(Record):
    """One child tested by the tree verifier ``"residual"`` (SPEC 12.3), in order: its ``depth``,
    ``node`` and ``parent``, ``context``, ``token`` y, the target row ``p``, its proposal ``law``
    s, the row ``r`` it is tested against (``r_exact``), ``s_token`` = s(y), ``r_token`` = r(y),
    ``u_s`` = u * s(y) (accepted iff below ``r_token``), its ``draw``, ``accepted``, and the
    ``residual`` max(r - s, 0) normalised after a rejection (``residual_exact`` as fraction
    strings; both ``None`` on acceptance)."""

    depth: int
    node: int
    parent: int
    context: Optional[str]
    token: str
    p: tuple[float, ...]
    law: tuple[float, ...]
    r: tuple[float, ...]
    r_exact: tuple[str, ...]
    s_token: float
    r_token: float
    u_s: float
    draw: Draw
    accepted: bool
    residual: Optional[tuple[float, ...]]
    residual_exact: Optional[tuple[str, ...]]

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "ResidualTest":
        residual, exact = d["residual"], d["residual_exact"]
        return cls(int(d["depth"]), int(d["node"]), int(d["parent"]), d["context"], str(d["token"]),
                   _floats(d["p"]), _floats(d["law"]), _floats(d["r"]), tuple(map(str, _tuple(d["r_exact"]))),
                   float(d["s_token"]), float(d["r_token"]), float(d["u_s"]), Draw.from_dict(d["draw"]),
                   bool(d["accepted"]), None if residual is None else _floats(residual),
                   None if exact is None else tuple(map(str, _tuple(exact))), raw=dict(d))


@dataclass(frozen=True)
class TargetOnlyTest(Record):
    """One child tested by the tree verifier ``"target_only"`` (SPEC 12.4), in order: its
    ``depth``, ``node``, ``parent``, ``context``, ``token`` y_j, the target row ``p``, ``p_token``
    = p(y_j), ``acc`` = p(y_1) + ... + p(y_j) (``acc_exact``), ``u_acc`` = u * threshold_acc
    (compared with ``acc``), the thresholds, the node's one ``draw``, ``accepted`` and ``by``
    (``"acc"``, ``"single"``, or ``None`` when rejected)."""

    depth: int
    node: int
    parent: int
    context: Optional[str]
    token: str
    p: tuple[float, ...]
    p_token: float
    acc: float
    acc_exact: str
    u_acc: float
    threshold_acc: float
    threshold_single: float
    draw: Draw
    accepted: bool
    by: Optional[str]

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "TargetOnlyTest":
        return cls(int(d["depth"]), int(d["node"]), int(d["parent"]), d["context"], str(d["token"]),
                   _floats(d["p"]), float(d["p_token"]), float(d["acc"]), str(d["acc_exact"]), float(d["u_acc"]),
                   float(d["threshold_acc"]), float(d["threshold_single"]), Draw.from_dict(d["draw"]),
                   bool(d["accepted"]), d["by"], raw=dict(d))


Test = Union[VerificationStep, TreeTest, ResidualTest, TargetOnlyTest]
"""Any verification record of a block."""


def _test(d: Mapping[str, Any]) -> Test:
    """A verification record by its keys: a tree verifier's test (``u_s``: residual, ``u_acc``:
    target-only, SPEC 12), a tree test (``depth``, SPEC 11), a block verification step
    (``threshold``, SPEC 10) or a token-wise step."""
    if "u_s" in d:
        return ResidualTest.from_dict(d)
    if "u_acc" in d:
        return TargetOnlyTest.from_dict(d)
    if "depth" in d:
        return TreeTest.from_dict(d)
    if "threshold" in d:
        return BlockVerificationStep.from_dict(d)
    return VerificationStep.from_dict(d)


@dataclass(frozen=True)
class Correction(Record):
    """What replaces the first rejected proposal (SPEC section 4.3): the
    residual / correction ``distribution`` max(p - q, 0) normalised (the
    target row itself when greedy), its ``draw`` and ``token``."""

    index: int
    context: Optional[str]
    distribution: tuple[float, ...]
    draw: Optional[Draw]
    token: str

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Correction":
        return cls(int(d["index"]), d["context"], _floats(d["distribution"]), _opt(Draw, d["draw"]),
                   str(d["token"]), raw=dict(d))


@dataclass(frozen=True)
class BlockCorrection(Correction):
    """Mode block (SPEC 10.5): the correction after d_(tau+1), drawn from the residual scaled by
    ``weight`` (w_tau, with ``weight_exact``): max(w_tau p - q, 0) normalised."""

    weight: float
    weight_exact: str

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "BlockCorrection":
        b = Correction.from_dict(d)
        return cls(b.index, b.context, b.distribution, b.draw, b.token, float(d["weight"]), str(d["weight_exact"]),
                   raw=dict(d))


def _correction(d: Optional[Mapping[str, Any]]) -> Optional[Correction]:
    if d is None:
        return None
    if "weight" in d:
        return BlockCorrection.from_dict(d)
    return Correction.from_dict(d)


@dataclass(frozen=True)
class TargetSample(Record):
    """A token taken from the target row ``p`` after ``context``: the bonus
    token of SPEC section 4.4, or the token of an autoregressive block
    (section 5). ``draw`` is ``None`` when greedy."""

    context: Optional[str]
    p: tuple[float, ...]
    draw: Optional[Draw]
    token: str

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "TargetSample":
        return cls(d["context"], _floats(d["p"]), _opt(Draw, d["draw"]), str(d["token"]), raw=dict(d))


Bonus = TargetSample
"""The bonus token record (SPEC section 4.4)."""


@dataclass(frozen=True)
class Counters(Record):
    """The work counters of SPEC section 7 (algorithmic counts, not time)."""

    target_passes: int = 0
    draft_steps: int = 0
    accepted: int = 0
    rejected: int = 0
    discarded: int = 0
    bonus_tokens: int = 0
    committed: int = 0
    draws: int = 0

    def __add__(self, other: "Counters") -> "Counters":
        """Field-wise sum (a session's totals are the sum of its blocks')."""
        return Counters(*(getattr(self, n) + getattr(other, n) for n in COUNTER_NAMES))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Counters":
        return cls(**{n: int(d.get(n, 0)) for n in COUNTER_NAMES}, raw=dict(d))


@dataclass(frozen=True)
class Block(Record):
    """One block, as the service recorded it (``docs/trace-format.md``).

    ``mode``; ``prefix`` committed before the block; ``position`` its first
    draw; ``proposal``; ``verification`` (one step per proposal checked);
    ``correction`` (after a rejection) or ``None``; ``discarded`` proposals;
    ``bonus`` or ``None`` with ``no_bonus`` saying why (``"rejection"``,
    ``"limit"``, ``"eos"``); ``sample`` (autoregressive only); ``committed``
    tokens; the block's own ``counters``; ``next_position``; ``done``
    (``None``, ``"limit"`` or ``"eos"``: whether the session ended here);
    ``tau`` (mode block only, SPEC 10: its ``verification`` steps are
    :class:`BlockVerificationStep` and its ``correction`` a :class:`BlockCorrection`).
    """

    mode: str
    prefix: tuple[str, ...]
    position: int
    proposal: Proposal
    verification: tuple[Test, ...]
    correction: Optional[Correction]
    discarded: tuple[str, ...]
    bonus: Optional[TargetSample]
    no_bonus: Optional[str]
    sample: Optional[TargetSample]
    committed: tuple[str, ...]
    counters: Counters
    next_position: int
    done: Optional[str]
    tau: Optional[int] = None
    """Mode block only (SPEC 10.4): the largest i with eta_i < h_i (0 if none), the proposals
    committed; ``None`` in other modes, whose blocks have no such key."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON object (see :meth:`Record.to_dict`); ``tau`` only in mode block."""
        d = super().to_dict()
        if self.raw is None and self.tau is None:
            d.pop("tau", None)
        return d

    @property
    def rejected(self) -> Optional[Test]:
        """The (first) rejected verification step or tree test, if any."""
        return next((v for v in self.verification if not v.accepted), None)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Block":
        return cls(
            str(d["mode"]), _tuple(d["prefix"]), int(d["position"]), Proposal.from_dict(d["proposal"]),
            tuple(_test(v) for v in _tuple(d["verification"])),
            _correction(d.get("correction")), _tuple(d["discarded"]), _opt(TargetSample, d.get("bonus")),
            d.get("no_bonus"), _opt(TargetSample, d.get("sample")), _tuple(d["committed"]),
            Counters.from_dict(d["counters"]), int(d["next_position"]), d.get("done"),
            None if d.get("tau") is None else int(d["tau"]), raw=dict(d),
        )


@dataclass(frozen=True)
class Sampling(Record):
    """Sampling parameters (SPEC section 9), each ``None`` when not set (then not sent):
    ``temperature`` 0 or 0.05-20, ``top_k`` 1-64, ``top_p`` above 0 and at most 1, ``min_p``
    0-1, and ``draft``: ``"processed"`` (the service's default: proposals drafted from the
    processed draft rows q') or ``"raw"`` (from the unprocessed q). The service reads each
    number as the decimal it is written as (``0.8`` is exactly 4/5) and processes every row
    exactly, in the order temperature, top-k, top-p, min-p; it validates the values (HTTP 422
    names each bad field and its bound)."""

    temperature: Optional[float] = None
    top_k: Optional[int] = None
    top_p: Optional[float] = None
    min_p: Optional[float] = None
    draft: Optional[str] = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Sampling":
        return cls(**_known(d, SAMPLING_KEYS, "sampling", "sampling parameters"), raw=dict(d))

    def to_dict(self) -> dict[str, Any]:
        """What was sent/received, or the parameters that are set, in SPEC section 9 order."""
        return _set_fields(self, SAMPLING_KEYS)


def _known(d: Any, keys: Sequence[str], name: str, what: str) -> dict[str, Any]:
    """The object ``d`` of a setting ``name`` as a dict, when it holds only ``keys``. Raises
    ``TypeError`` (not an object) or ``ValueError`` naming the unknown ``what``."""
    if not isinstance(d, Mapping):
        raise TypeError(f"{name} is an object, not {type(d).__name__}")
    unknown = set(d) - set(keys)
    if unknown:
        raise ValueError(f"unknown {what} {sorted(unknown)}: they are {', '.join(keys)}")
    return dict(d)


def _set_fields(record: Record, keys: Sequence[str]) -> dict[str, Any]:
    """What ``record`` was read from, or its fields among ``keys`` that are set, in that order."""
    if record.raw is not None:
        return copy.deepcopy(record.raw)
    return {k: _jsonable(getattr(record, k)) for k in keys if getattr(record, k) is not None}


@dataclass(frozen=True)
class Tree(Record):
    """The setting ``tree`` of mode tree (SPEC section 12), each field ``None`` when not set (then
    not sent; the service's defaults): ``shape`` ``"chains"`` (D chains, SPEC 11.1),
    ``"distinct"`` (siblings drawn without replacement) or ``"beam"`` (the top-D tree, no draws);
    ``verify`` ``"residual"`` (SPEC 12.3) or ``"target_only"`` (SPEC 12.4: the draft's
    probabilities never read); ``branching`` (shape distinct: children a node per depth, 1-8 each,
    at most 16 depths); ``threshold_single`` and ``threshold_acc`` (verify target_only: 0 < t <= 1,
    SGLang's lossy thresholds below 1). The service validates them (HTTP 422 names the field)."""

    shape: Optional[str] = None
    verify: Optional[str] = None
    branching: Optional[Sequence[int]] = None
    threshold_single: Optional[float] = None
    threshold_acc: Optional[float] = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Tree":
        return cls(**_known(d, TREE_KEYS, "tree", "tree settings"), raw=dict(d))

    def to_dict(self) -> dict[str, Any]:
        """What was sent/received, or the fields that are set, in :data:`TREE_KEYS` order."""
        return _set_fields(self, TREE_KEYS)


def _tree(value: Any) -> Optional[Tree]:
    """A config's ``tree``: ``None``, a :class:`Tree`, or its JSON object."""
    if value is None or isinstance(value, Tree):
        return value
    return Tree.from_dict(value)


def _sampling(value: Any) -> Optional[Sampling]:
    """A config's ``sampling``: ``None``, a :class:`Sampling`, or its JSON object."""
    if value is None or isinstance(value, Sampling):
        return value
    return Sampling.from_dict(value)


@dataclass(frozen=True)
class Config(Record):
    """Session settings (SPEC section 8). ``draft`` and ``seed`` are
    required; the others default as the service does. ``target``/``draft``
    are built-in names or custom tables; ``mode`` ``"speculative"``,
    ``"greedy"``, ``"autoregressive"``, ``"block"`` (SPEC 10) or ``"tree"`` (SPEC 11); ``width`` 1-16;
    ``seed`` 0..2^53-1; ``limit`` 1-256; ``eos`` a token label or ``None``;
    ``drafts`` 1-8 draft chains (mode ``"tree"``, SPEC 11) or ``None``
    (not sent: the service's default 1); ``sampling`` the sampling parameters
    (a :class:`Sampling`, or its JSON object, which is read into one; SPEC 9)
    or ``None`` (not sent: rows unprocessed); ``tree`` the draft tree's shape and verifier (a
    :class:`Tree`, or its JSON object; SPEC 12, mode tree) or ``None`` (not sent: SPEC 11's
    chains with the residual). The service validates them (HTTP 422 names each bad field)."""

    draft: ModelRef
    seed: int
    target: ModelRef = "toy"
    mode: str = "speculative"
    width: int = 3
    limit: int = 8
    eos: Optional[str] = None
    drafts: Optional[int] = None
    sampling: Optional[Sampling] = None
    tree: Optional[Tree] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "sampling", _sampling(self.sampling))
        object.__setattr__(self, "tree", _tree(self.tree))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Config":
        unknown = set(d) - set(CONFIG_KEYS)
        if unknown:
            raise ValueError(f"unknown settings {sorted(unknown)}: the settings are {', '.join(CONFIG_KEYS)}")
        return cls(**dict(d), raw=dict(d))

    def to_dict(self) -> dict[str, Any]:
        """What was sent/received, or every setting in SPEC section 8 order (``drafts`` and
        ``sampling`` only when set)."""
        if self.raw is not None:
            return copy.deepcopy(self.raw)
        return {k: _jsonable(getattr(self, k)) for k in CONFIG_KEYS
                if k not in OPTIONAL_SETTINGS or getattr(self, k) is not None}

    def replace(self, **changes: Any) -> "Config":
        """A new config with ``changes``; unknown names raise
        :class:`~specdec_client.errors.InvalidSettings` (a ``TypeError``)."""
        unknown = set(changes) - set(CONFIG_KEYS)
        if unknown:
            raise InvalidSettings(_unknown(unknown))
        values = {k: getattr(self, k) for k in CONFIG_KEYS}
        values.update(changes)
        return Config(**values)

    def vocab(self) -> Optional[tuple[str, ...]]:
        """The vocabulary when the target is a custom table, else ``None``
        (a built-in's vocabulary comes from ``GET /v1/models``)."""
        target = self.target
        if isinstance(target, Mapping) and isinstance(target.get("vocab"), list):
            return tuple(target["vocab"])
        return None


@dataclass(frozen=True)
class State(Record):
    """A session between blocks: ``config``, ``committed`` labels,
    ``position`` of the next unused draw, cumulative ``counters``. The
    service is stateless: this is what a caller sends for the next block."""

    config: Config
    committed: tuple[str, ...] = ()
    position: int = 0
    counters: Counters = field(default_factory=Counters)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "State":
        return cls(Config.from_dict(d["config"]), _tuple(d.get("committed", [])), int(d.get("position", 0)),
                   Counters.from_dict(d.get("counters", {})), raw=dict(d))


@dataclass(frozen=True)
class StepResult(Record):
    """The answer of ``POST /v1/step`` and ``/v1/verify``: the committed
    ``block``, the next ``state`` and ``done`` (``None``, ``"limit"`` or
    ``"eos"``)."""

    block: Block
    state: State
    done: Optional[str]

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "StepResult":
        return cls(Block.from_dict(d["block"]), State.from_dict(d["state"]), d.get("done"), raw=dict(d))


@dataclass(frozen=True)
class Trace(Record):
    """A whole session (format ``specdec-trace/1``): ``config`` (the
    settings, defaults filled in), ``blocks``, the ``output``, the total
    ``counters``, the final ``position`` and ``done``."""

    config: Config
    blocks: tuple[Block, ...]
    output: tuple[str, ...]
    counters: Counters
    position: int
    done: Optional[str]
    format: str = TRACE_FORMAT

    def __iter__(self) -> Iterator[Block]:
        return iter(self.blocks)

    def __len__(self) -> int:
        return len(self.blocks)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Trace":
        if d.get("format") != TRACE_FORMAT:
            raise ValueError(f"format is {d.get('format')!r}, not {TRACE_FORMAT!r}")
        return cls(Config.from_dict(d["config"]), tuple(Block.from_dict(b) for b in _tuple(d["blocks"])),
                   _tuple(d["output"]), Counters.from_dict(d["counters"]), int(d["position"]), d.get("done"),
                   format=d["format"], raw=dict(d))

    def to_dict(self) -> dict[str, Any]:
        """The trace JSON, keys in the format's order."""
        if self.raw is not None:
            return copy.deepcopy(self.raw)
        return {"format": self.format, "config": self.config.to_dict(),
                "blocks": [b.to_dict() for b in self.blocks], "output": list(self.output),
                "counters": self.counters.to_dict(), "position": self.position, "done": self.done}


@dataclass(frozen=True)
class Health(Record):
    """``GET /health``: ``status`` (``"ok"``) and the service ``version``."""

    status: str
    version: Optional[str]

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Health":
        return cls(str(d["status"]), d.get("version"), raw=dict(d))


@dataclass(frozen=True)
class ModelInfo(Record):
    """A built-in model (``GET /v1/models``): ``name``, ``role``
    (``"target"``/``"draft"``), ``vocab``, ``start`` row and ``next`` rows
    by token (SPEC section 1)."""

    name: str
    role: str
    vocab: tuple[str, ...]
    start: tuple[float, ...]
    next: Mapping[str, tuple[float, ...]]

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "ModelInfo":
        rows = d["next"]
        if not isinstance(rows, Mapping):
            raise TypeError("next must be an object of rows")
        return cls(str(d["name"]), str(d["role"]), _tuple(d["vocab"]), _floats(d["start"]),
                   {k: _floats(v) for k, v in rows.items()}, raw=dict(d))


def merge_settings(config: Union[Config, Mapping[str, Any], None] = None, *, required: Sequence[str] = ("draft", "seed"),
                   **settings: Any) -> dict[str, Any]:
    """Session settings as a dict from a Config, a JSON-shaped mapping and/or
    keyword settings (keywords win). Raises
    :class:`~specdec_client.errors.InvalidSettings` (a ``SpecdecError`` and a
    ``TypeError``) for unknown settings or a missing ``required`` one; the
    values are left to the service to check."""
    values: dict[str, Any] = {}
    if isinstance(config, Config):
        values.update({k: getattr(config, k) for k in CONFIG_KEYS})
    elif config is not None:
        values.update(dict(config))
    values.update(settings)
    unknown = set(values) - set(CONFIG_KEYS)
    if unknown:
        raise InvalidSettings(_unknown(unknown))
    missing = [k for k in required if k not in values]
    if missing:
        examples = {"draft": 'draft="biased"', "seed": "seed=1"}
        verb = "is" if len(required) == 1 else "are"
        raise InvalidSettings(f"missing required settings: {', '.join(missing)} ({' and '.join(required)} {verb} "
                              f"required, e.g. {', '.join(examples.get(k, k) for k in required)})")
    return values


def as_config(config: Union[Config, Mapping[str, Any], None] = None, **settings: Any) -> Config:
    """A :class:`Config` from a Config, a JSON-shaped mapping and/or keyword
    settings (keywords win), see :func:`merge_settings`: ``draft`` and
    ``seed`` are required."""
    return Config(**merge_settings(config, **settings))


def _unknown(names: Any) -> str:
    return f"unknown settings {sorted(names)}: the settings are {', '.join(CONFIG_KEYS)}"


def proposal_body(proposal: Union[Proposal, Sequence[str], Sequence[Sequence[str]]]) -> dict[str, Any]:
    """The ``proposal`` of a ``POST /v1/verify`` body: ``{"tokens": [...]}``, or in mode tree
    (a :class:`Proposal` with ``chains``, or a list of lists of labels) ``{"chains": [[...], ...]}``
    (SPEC section 11)."""
    if isinstance(proposal, Proposal) and proposal.chains is not None:
        return {"chains": [list(c) for c in proposal.chains]}
    if not isinstance(proposal, (Proposal, str)) and proposal and all(
            isinstance(c, (list, tuple)) for c in proposal):
        return {"chains": [list(c) for c in proposal]}
    return {"tokens": tokens_of(proposal)}  # type: ignore[arg-type]


def tokens_of(proposal: Union[Proposal, Sequence[str]]) -> list[str]:
    """A proposal's token labels, from a :class:`Proposal` or a list."""
    if isinstance(proposal, Proposal):
        return list(proposal.tokens)
    if isinstance(proposal, str):
        raise TypeError("a proposal is a list of token labels, not one string")
    return list(proposal)
