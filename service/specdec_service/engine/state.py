"""Session settings, counters and state (SPEC sections 6-8).

The service is stateless: a caller sends the whole :class:`State` (settings,
committed prefix, position, cumulative counters) and gets the next one back.
:func:`parse_config` and :func:`parse_state` read the JSON forms and raise
:class:`~.errors.InvalidInput` naming each bad field.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from operator import add
from collections.abc import Mapping
from typing import Any, NamedTuple, Optional

from .bounds import MAX_COUNTER, MAX_LIMIT, MAX_POSITION, MAX_SEED, MAX_WIDTH, MIN_LIMIT, MIN_WIDTH, int_in
from .errors import Fault, InvalidInput
from .models import Model, resolve_model

MODES = ("speculative", "greedy", "autoregressive")
"""Decoding modes: SPEC section 4 and the two of section 5."""
DEFAULTS = {"target": "toy", "mode": "speculative", "width": 3, "limit": 8, "eos": None}
"""Settings a config may leave out; ``draft`` and ``seed`` are required."""
CONFIG_KEYS = ("target", "draft", "mode", "width", "seed", "limit", "eos")
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

    def __add__(self, other: "Counters") -> "Counters":  # type: ignore[override]
        """Field by field (not tuple concatenation)."""
        return Counters(*map(add, self, other))

    def to_json(self) -> dict:
        """``{name: count}`` in SPEC section 7's order."""
        return dict(zip(COUNTER_NAMES, self))


COUNTER_NAMES = Counters._fields


@dataclass(frozen=True)
class Config:
    """The settings of a session (SPEC section 8).

    ``target``/``draft`` are models over the same vocabulary; ``mode`` one of
    :data:`MODES`; ``width`` 1-16 proposals a block; ``seed`` 0..2**53-1;
    ``limit`` 1-256 output tokens; ``eos`` a token index or ``None``.
    """

    target: Model
    draft: Model
    seed: int
    mode: str = "speculative"
    width: int = 3
    limit: int = 8
    eos: Optional[int] = None

    @property
    def vocab(self) -> tuple[str, ...]:
        """The shared vocabulary."""
        return self.target.vocab

    def to_json(self) -> dict:
        """Every setting, defaults filled in, in :data:`CONFIG_KEYS` order."""
        return {
            "target": self.target.to_json(),
            "draft": self.draft.to_json(),
            "mode": self.mode,
            "width": self.width,
            "seed": self.seed,
            "limit": self.limit,
            "eos": None if self.eos is None else self.vocab[self.eos],
        }


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
        ``"eos"`` (an EOS was committed) or ``"limit"`` (SPEC section 6)."""
        eos = self.config.eos
        if eos is not None and self.committed and self.committed[-1] == eos:
            return "eos"
        if len(self.committed) >= self.config.limit:
            return "limit"
        return None

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


def _int_in(obj: Mapping, key: str, low: int, high: int, faults: list[Fault], what: str = "") -> Optional[int]:
    value = obj[key]
    if not int_in(value, low, high):
        faults.append(Fault((key,), f"must be an integer from {low} to {what or high}"))
        return None
    return value


def parse_config(obj: Any) -> Config:
    """Read a config (SPEC section 8) from its JSON form.

    Configs that name built-in models are memoised (a session sends the same
    config with every block; a :class:`Config` is immutable): the key holds
    each value's type, so ``True`` is never taken for ``1``.

    ``draft`` and ``seed`` are required; ``target`` ["toy"], ``mode``
    ["speculative"], ``width`` [3], ``limit`` [8] and ``eos`` [null] may be
    left out. Models are built-in names or custom tables and must share one
    vocabulary; ``eos`` must be a token of it.

    Raises :class:`InvalidInput` with paths relative to the config.
    """
    if type(obj) is dict and all(type(v) in _SCALARS for v in obj.values()):
        return _parse_scalar_config(tuple((k, type(v), v) for k, v in obj.items()))
    return _parse_config(obj)


_SCALARS = (str, int, type(None))


@lru_cache(maxsize=1024)
def _parse_scalar_config(items: tuple) -> Config:
    return _parse_config({k: v for k, _, v in items})


def _parse_config(obj: Any) -> Config:
    if not isinstance(obj, Mapping):
        raise InvalidInput.at((), "must be an object with the session settings")
    faults: list[Fault] = []
    for key in obj:
        if key not in CONFIG_KEYS:
            faults.append(Fault((key,), f"unknown setting: the settings are {', '.join(CONFIG_KEYS)}"))
    for key in ("draft", "seed"):
        if key not in obj:
            faults.append(Fault((key,), "is required"))
    if faults:
        raise InvalidInput(faults)
    obj = {**DEFAULTS, **obj}

    models = {}
    for role in ("target", "draft"):
        try:
            models[role] = resolve_model(obj[role], role)
        except InvalidInput as error:
            faults.extend(error.prefixed(role).faults)
    mode = obj["mode"]
    if mode not in MODES:
        faults.append(Fault(("mode",), f"must be one of {', '.join(MODES)}"))
    width = _int_in(obj, "width", MIN_WIDTH, MAX_WIDTH, faults)
    limit = _int_in(obj, "limit", MIN_LIMIT, MAX_LIMIT, faults)
    seed = _int_in(obj, "seed", 0, MAX_SEED, faults, "2^53-1")
    if faults:
        raise InvalidInput(faults)

    target, draft = models["target"], models["draft"]
    if target.vocab != draft.vocab:
        raise InvalidInput.at(("draft", "vocab"), f"the draft's vocabulary {list(draft.vocab)} differs from the target's {list(target.vocab)}")
    eos = obj["eos"]
    if eos is not None:
        if eos not in target.vocab:
            raise InvalidInput.at(("eos",), "must be null or a token of the vocabulary")
        eos = target.vocab.index(eos)
    return Config(target, draft, seed, mode, width, limit, eos)


def parse_state(obj: Any) -> State:
    """Read a session state from its JSON form
    ``{"config", "committed" [[]], "position" [0], "counters" [zeros]}``.

    ``committed`` holds vocabulary tokens, at most ``limit`` of them, with an
    EOS only as the last; ``position`` is 0..2**53-1; each counter a
    non-negative integer (omitted ones are 0).

    Raises :class:`InvalidInput` with paths relative to the state.
    """
    if not isinstance(obj, Mapping):
        raise InvalidInput.at((), "must be an object with config, committed, position and counters")
    faults: list[Fault] = []
    for key in obj:
        if key not in ("config", "committed", "position", "counters"):
            faults.append(Fault((key,), "unknown field: a state has config, committed, position and counters"))
    if "config" not in obj:
        faults.append(Fault(("config",), "is required"))
    if faults:
        raise InvalidInput(faults)
    try:
        config = parse_config(obj["config"])
    except InvalidInput as error:
        raise error.prefixed("config") from None

    committed = _parse_tokens(obj.get("committed", []), config, ("committed",), faults)
    if committed is not None and len(committed) > config.limit:
        faults.append(Fault(("committed",), f"holds {len(committed)} tokens, more than the limit ({config.limit})"))
    position = obj.get("position", 0)
    if not int_in(position, 0, MAX_POSITION):
        faults.append(Fault(("position",), "must be an integer from 0 to 2^53-1"))
    counters = _parse_counters(obj.get("counters", {}), faults)
    if faults:
        raise InvalidInput(faults)
    return State(config, tuple(committed), position, counters)


def parse_tokens(labels: Any, config: Config, path: tuple = ()) -> tuple[int, ...]:
    """Token labels as indices; EOS only as the last. Raises :class:`InvalidInput`."""
    faults: list[Fault] = []
    tokens = _parse_tokens(labels, config, path, faults)
    if faults:
        raise InvalidInput(faults)
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


def _parse_counters(obj: Any, faults: list[Fault]) -> Counters:
    if not isinstance(obj, Mapping):
        faults.append(Fault(("counters",), "must be an object of counters"))
        return Counters()
    values = {}
    for key, value in obj.items():
        if key not in COUNTER_NAMES:
            faults.append(Fault(("counters", key), f"unknown counter: the counters are {', '.join(COUNTER_NAMES)}"))
        elif not int_in(value, 0, MAX_COUNTER):
            faults.append(Fault(("counters", key), "must be an integer from 0 to 2^53-1"))
        else:
            values[key] = value
    return Counters(**values)
