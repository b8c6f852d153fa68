"""Session settings, counters and state (SPEC sections 6-8).

The service is stateless: a caller sends the whole :class:`State` (settings,
committed prefix, position, cumulative counters) and gets the next one back.
:func:`parse_config` and :func:`parse_state` read the JSON forms and raise
:class:`~.errors.InvalidInput` naming each bad field.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, partial
from operator import add
from typing import Any, Callable, NamedTuple, Optional

from .bounds import MAX_COUNTER, MAX_LIMIT, MAX_WIDTH, MIN_WIDTH  # noqa: F401  (re-exported)
from .errors import Fault, InvalidInput
from .models import Model, resolve_model
from .rows import Rows
from .sampling import ProcessedRows, Sampling, parse_sampling, sampling_echo
from .inputs import (
    CONFIG, COUNTERS, MODES, RUN, STATE, VERIFY, checker, integer_fields, shallow, strict_integers,  # noqa: F401
)
from .tree_settings import TreeSetting, parse_tree
DEFAULTS = {key: schema["default"] for key, schema in CONFIG["properties"].items() if "default" in schema}
"""Settings a config may leave out (target toy, mode speculative, width 3, limit 8, eos null, as
:data:`.inputs.CONFIG` states them); ``draft`` and ``seed`` are required."""
CONFIG_KEYS = tuple(CONFIG["properties"])
"""The session settings of SPEC section 8; changing any starts a new session."""


class Counters(NamedTuple):
    """The work counters of SPEC section 7: algorithmic counts, not time.

    ``target_passes`` one per block; ``draft_steps`` proposals drafted;
    ``accepted`` the length of each accepted prefix; ``rejected`` (0 or 1 a
    block); ``discarded`` proposals after a rejection; ``bonus_tokens``;
    ``committed`` tokens; ``draws`` random draws used. All non-negative.
    An immutable named tuple (every block makes two: the cheapest immutable
    record); ``+`` adds field by field.
    """

    target_passes: int = 0
    draft_steps: int = 0
    accepted: int = 0
    rejected: int = 0
    discarded: int = 0
    bonus_tokens: int = 0
    committed: int = 0
    draws: int = 0

    def __add__(self, other: tuple[Any, ...]) -> "Counters":
        """Field by field (not tuple concatenation)."""
        return counters_of(map(add, self, other))

    def to_json(self) -> dict:
        """``{name: count}`` in SPEC section 7's order."""
        return dict(zip(COUNTER_NAMES, self))


def _after_table(model: Model) -> dict:
    """``{token: model.after(token)}`` for ``None`` and every token index (SPEC section 1)."""
    return {None: model.start, **dict(enumerate(model.rows))}


counters_of = partial(tuple.__new__, Counters)
"""``counters_of(values)``: ``Counters(*values)`` for an iterable of the eight counts in
:data:`COUNTER_NAMES` order, without the named tuple's Python-level constructor (every block
makes two)."""
COUNTER_NAMES = Counters._fields
assert COUNTER_NAMES == tuple(COUNTERS["properties"]), "the counters of SPEC section 7, as stated in .requests"


@dataclass(frozen=True)
class Config:
    """The settings of a session (SPEC section 8).

    ``target``/``draft`` are models over the same vocabulary; ``mode`` one of
    :data:`MODES`; ``width`` 1-16 proposals a block; ``seed`` 0..2**53-1;
    ``limit`` 1-256 output tokens; ``eos`` a token index or ``None``; ``drafts`` 1-8 draft
    chains a block (SPEC 11; only mode ``tree`` reads it), ``drafts_sent`` whether the caller
    sent it (then, or in mode ``tree``, :meth:`to_json` echoes it; otherwise a config and its
    traces hold no ``drafts``). ``sampling`` the sampling parameters (SPEC 9; ``None`` when not
    sent) and ``sampling_sent`` their echo (:func:`~.sampling.sampling_echo`, ``(name, value)``
    pairs; ``None`` when not sent: then a config and its traces hold no ``sampling``). ``tree``
    the draft tree's shape and verifier (SPEC 12, mode ``tree`` only; ``None`` when not sent:
    then a config and its traces hold no ``tree``, and SPEC 11 holds).
    """

    target: Model
    draft: Model
    seed: int
    mode: str = "speculative"
    width: int = 3
    limit: int = 8
    eos: Optional[int] = None
    drafts: int = 1
    drafts_sent: bool = False
    sampling: Optional[Sampling] = None
    sampling_sent: Optional[tuple] = None
    tree: Optional[TreeSetting] = None

    @cached_property
    def vocab(self) -> tuple[str, ...]:
        """The shared vocabulary (an attribute once read: every block reads it)."""
        return self.target.vocab

    @cached_property
    def index(self) -> dict[str, int]:
        """Each label's token index (computed once per config)."""
        return {label: i for i, label in enumerate(self.target.vocab)}

    @cached_property
    def model_rows(self) -> Rows:
        """The models' own rows (:class:`~.rows.ModelRows`), made once per config: each row
        looked up by its context in a table (a C-level lookup; ``Model.after`` in effect)."""
        return Rows(*(_after_table(model).__getitem__ for model in (self.target, self.draft)))

    @cached_property
    def rows(self) -> Rows:
        """The rows every rule of this config reads (:class:`~.rows.ConfigRows`), made once per
        config: the models' own rows (:attr:`model_rows`) without sampling parameters (or with
        an empty ``sampling``), else the processed ones (SPEC section 9,
        :class:`~.sampling.ProcessedRows`: p' always, q' unless ``draft`` is ``"raw"``)."""
        if self.sampling is None or self.sampling.empty:
            return self.model_rows
        return ProcessedRows(self.sampling).read(self)

    def to_json(self) -> dict:
        """Every setting, defaults filled in, in :data:`CONFIG_KEYS` order; ``drafts`` only when
        the caller sent it or the mode is ``tree``, ``sampling`` only when the caller sent it,
        as sent (:func:`~.sampling.sampling_echo`), so no other config gains a field."""
        settings = {
            "target": self.target.to_json(),
            "draft": self.draft.to_json(),
            "mode": self.mode,
            "width": self.width,
            "seed": self.seed,
            "limit": self.limit,
            "eos": None if self.eos is None else self.vocab[self.eos],
        }
        if self.sampling_sent is not None:
            settings["sampling"] = dict(self.sampling_sent)
        if self.drafts_sent or self.mode == "tree":
            settings["drafts"] = self.drafts
        if self.tree is not None:
            settings["tree"] = dict(self.tree.echo)
        return settings


@dataclass(frozen=True)
class State:
    """A session between blocks: ``committed`` token indices (length at most
    ``config.limit``), the ``position`` of the next unused draw, and the
    cumulative ``counters``."""

    config: Config
    committed: tuple[int, ...] = ()
    position: int = 0
    counters: Counters = Counters()

    @property
    def done(self) -> Optional[str]:
        """``None`` while the session can go on, else why it ended:
        ``"eos"`` (an EOS was committed) or ``"limit"`` (SPEC section 6; :func:`ended`)."""
        committed = self.committed
        return ended(self.config, len(committed), committed[-1] if committed else None)

    def labels(self, tokens=None) -> list[str]:
        """Token indices (default: the committed prefix) as labels."""
        vocab = self.config.vocab
        return [vocab[t] for t in (self.committed if tokens is None else tokens)]

    def to_json(self) -> dict:
        """``{"config", "committed", "position", "counters"}``: what a caller
        sends back unchanged for the next block."""
        return {
            "config": self.config.to_json(),
            "committed": self.labels(),
            "position": self.position,
            "counters": self.counters.to_json(),
        }


def ended(config: Config, length: int, last: Optional[int]) -> Optional[str]:
    """SPEC section 6: why a session whose output holds ``length`` tokens, the last one
    ``last`` (an index; ``None`` when empty or not a token), has ended: ``"eos"`` (its last
    token is the EOS), ``"limit"`` (``length >= limit``), or ``None`` (it goes on). The
    engine's :attr:`State.done` and the grader's checks of a submitted block both ask it."""
    eos = config.eos
    if eos is not None and length and last == eos:
        return "eos"
    if length >= config.limit:
        return "limit"
    return None


def _eos_fault(eos: object, target: Model) -> str:
    """Why ``eos`` is refused: the value, the vocabulary (its first 8 labels), and for a built-in
    target that it has no EOS token (SPEC section 6)."""
    vocab = list(target.vocab)
    shown = ", ".join(vocab[:8]) + (f", ... ({len(vocab)} labels)" if len(vocab) > 8 else "")
    why = f"{eos!r} is not a token of the vocabulary [{shown}]: must be null or one of its labels"
    if target.name is not None:
        why += f" (the built-in {target.name!r} has no EOS token, SPEC 6: a custom model may name one)"
    return why

_MODEL = {"description": "A built-in name or a custom table: read by resolve_model."}
CONFIG_CHECK = shallow(CONFIG, target=_MODEL, draft=_MODEL)
"""What :func:`parse_config` checks with JSON Schema: :data:`.inputs.CONFIG`, its models
read by :func:`~.models.resolve_model`."""
check_config = checker(CONFIG_CHECK)
_CONFIG_INTEGERS = integer_fields(CONFIG)


def parse_config(obj: Any) -> Config:
    """Read a config (SPEC section 8) from its JSON form.

    ``draft`` and ``seed`` are required; ``target`` ["toy"], ``mode``
    ["speculative"], ``width`` [3], ``limit`` [8] and ``eos`` [null] may be
    left out. Models are built-in names or custom tables and must share one
    vocabulary; ``eos`` must be a token of it.

    Raises :class:`InvalidInput` with paths relative to the config.
    """
    check_config(obj)
    strict_integers(obj, _CONFIG_INTEGERS, CONFIG)
    sent, obj = obj, {**DEFAULTS, **obj}
    errors: list[InvalidInput] = []
    models = {}
    for role in ("target", "draft"):
        try:
            models[role] = resolve_model(obj[role], role)
        except InvalidInput as error:
            errors.append(error.prefixed(role))
    if errors:
        raise InvalidInput.joined(errors)

    target, draft = models["target"], models["draft"]
    if target.vocab != draft.vocab:
        # a built-in draft is a name: point at it, not at a vocab the body does not hold
        where = ("draft",) if draft.name is not None else ("draft", "vocab")
        raise InvalidInput.at(where, f"the draft's vocabulary {list(draft.vocab)} differs from the target's "
                                     f"{list(target.vocab)}")
    eos = obj["eos"]
    if eos is not None:
        if eos not in target.vocab:
            raise InvalidInput.at(("eos",), _eos_fault(eos, target))
        eos = target.vocab.index(eos)
    sent_sampling = sent.get("sampling")
    sampling = echo = None
    if sent_sampling is not None:
        sampling, echo = parse_sampling(sent_sampling, ("sampling",)), sampling_echo(sent_sampling)
    tree = None
    if "tree" in sent:
        tree = parse_tree(sent["tree"], obj["mode"], obj["drafts"], min(obj["width"], obj["limit"]))
    return Config(target, draft, obj["seed"], obj["mode"], obj["width"], obj["limit"], eos, obj["drafts"],
                  "drafts" in sent, sampling, echo, tree)


def parse_state(obj: Any) -> State:
    """Read a session state from its JSON form
    ``{"config", "committed" [[]], "position" [0], "counters" [zeros]}``.

    ``committed`` holds vocabulary tokens, at most ``limit`` of them, with an
    EOS only as the last; ``position`` is 0..2**53-1; each counter a
    non-negative integer (omitted ones are 0).

    Raises :class:`InvalidInput` with paths relative to the state.
    """
    config = parse_around(check_state, obj, "config", parse_config)
    faults: list[Fault] = []
    strict_integers(obj, _STATE_INTEGERS, STATE)
    counters = obj.get("counters")
    if counters:
        strict_integers(counters, COUNTER_NAMES, COUNTERS, ("counters",))
    committed = _parse_tokens(obj.get("committed", []), config, ("committed",), faults)
    if committed is not None and len(committed) > config.limit:
        faults.append(Fault(("committed",), f"holds {len(committed)} tokens, more than the limit ({config.limit})"))
    if faults:
        raise InvalidInput(faults)
    assert committed is not None  # _parse_tokens gives None only with a fault
    return State(config, tuple(committed), obj.get("position", 0), Counters(**counters) if counters else Counters())


STATE_CHECK = shallow(STATE, config={"description": "Read by parse_config."})
"""What :func:`parse_state` checks with JSON Schema: :data:`.inputs.STATE` (counters,
position, the committed labels), its config read by :func:`parse_config`."""
check_state = checker(STATE_CHECK)
_STATE_INTEGERS = integer_fields(STATE)


def parse_tokens(labels: Any, config: Config, path: tuple = ()) -> tuple[int, ...]:
    """Token labels as indices; EOS only as the last. Raises :class:`InvalidInput`."""
    faults: list[Fault] = []
    tokens = _parse_tokens(labels, config, path, faults)
    if faults:
        raise InvalidInput(faults)
    assert tokens is not None  # _parse_tokens gives None only with a fault
    return tuple(tokens)


def _parse_tokens(labels: Any, config: Config, path: tuple, faults: list[Fault]) -> Optional[list[int]]:
    if not isinstance(labels, list):
        faults.append(Fault(path, "must be a list of token labels"))
        return None
    if len(labels) > MAX_LIMIT:
        faults.append(Fault(path, f"must hold at most {MAX_LIMIT} tokens"))
        return None
    vocab = config.vocab
    tokens: list[int] = []
    for i, label in enumerate(labels):
        if not isinstance(label, str) or label not in vocab:
            faults.append(Fault(path + (i,), f"{label!r} is not a token of the vocabulary {list(vocab)}"))
        else:
            tokens.append(vocab.index(label))
    eos = config.eos
    if eos is not None and eos in tokens[:-1]:
        faults.append(Fault(path, f"has tokens after the EOS token {vocab[eos]!r}"))
    return tokens


def parse_around(check: Callable[..., None], obj: Any, field: str, parse: Callable[[Any], Any]) -> Any:
    """``parse(obj[field])`` after ``check(obj)`` (the body around it), every fault of both
    named together, the nested ones under ``field``."""
    errors: list[InvalidInput] = []
    try:
        check(obj)
    except InvalidInput as error:
        errors.append(error)
    value = None
    if isinstance(obj, dict) and field in obj:
        try:
            value = parse(obj[field])
        except InvalidInput as error:
            errors.insert(0, error.prefixed(field))
    if errors:
        raise InvalidInput.joined(errors)
    return value


check_run = checker(shallow(RUN, config={"description": "Read by parse_config."}))
check_verify = checker(shallow(VERIFY, state={"description": "Read by parse_state."}))


def parse_run(obj: Any) -> Config:
    """The config of a ``POST /v1/runs`` body ``{"config": {...}}`` (:data:`.inputs.RUN`).
    Raises :class:`InvalidInput` with paths relative to the body."""
    return parse_around(check_run, obj, "config", parse_config)


def parse_verify(obj: Any) -> tuple[State, list]:
    """The state and the proposal's token labels of a ``POST /v1/verify`` body
    ``{"state": {...}, "proposal": {"tokens": [...]}}`` (:data:`.inputs.VERIFY`; ``None``
    when the proposal gives ``chains`` instead, :func:`parse_verify_chains`); the
    proposal's rules beyond its structure (tokens of the vocabulary, room for it) are
    :func:`~.block_loop.verify`'s. Raises :class:`InvalidInput` with paths relative to the body."""
    state = parse_around(check_verify, obj, "state", parse_state)
    return state, obj["proposal"].get("tokens")


def parse_verify_chains(obj: Any) -> tuple[State, Optional[list], Optional[list]]:
    """:func:`parse_verify`, and the proposal's ``chains`` (mode tree, SPEC 11; ``None`` when
    the proposal gives ``tokens``): ``(state, tokens, chains)``."""
    state, tokens = parse_verify(obj)
    return state, tokens, obj["proposal"].get("chains")
