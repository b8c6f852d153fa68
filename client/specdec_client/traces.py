"""Traces on disk, and replay: does a saved trace still match the service?

:func:`load_trace` / :func:`save_trace` read and write ``specdec-trace/1``
JSON. :func:`replay` re-sends each block's starting state to the service and
compares every field of every block with the saved one:

- block i starts from ``{"config": trace.config, "committed":
  blocks[i].prefix, "position": blocks[i].position, "counters": the sum of
  the saved counters of blocks 0..i-1}``; it is replayed with ``POST
  /v1/step``, or with ``POST /v1/verify`` and the saved proposal's tokens
  when the proposal was supplied by a caller (a step with ``"drafted":
  false``);
- the returned block is compared with the saved block field by field, and
  each block's ``prefix``/``position`` with where the saved block before it
  ended (its prefix + committed, its ``next_position``; the empty prefix and
  0 for the first), so blocks that do not join up are reported too;
- the trace's ``config`` is compared with the config the service echoes,
  and ``output``, ``counters``, ``position`` and ``done`` with the service's
  blocks (their committed tokens joined, their counters summed, the last
  ``next_position`` and ``done``).

Every block is replayed from its own saved starting point, so one altered
value is reported once, where it is, not again in every later block. When
the service refuses a block (HTTP 409/422) whose saved ``prefix``/``position``
already failed the chain check, the refusal is not reported too: the block is
replayed from where the saved block before it ended and compared, the broken
start being reported once, by the chain check. A refusal that points into
the trace's ``config`` (an invalid setting: every block would be refused
alike) is reported once, one divergence per bad field (``config.width``: the
trace has 99, the service gives ``"refused: ..."``), and the replay stops.
Comparison is exact (the service is deterministic and JSON floats round-trip
exactly); a boolean never equals a number.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, fields
from typing import Any, Iterable, Iterator, Mapping, NoReturn, Optional, Union

from .api.sessions import SessionsApi
from .errors import InvalidInput, SessionDone, TraceFormatError
from .progress import Progress
from .types import COUNTER_NAMES, TRACE_FORMAT, StepResult, Trace

TRACE_KEYS = ("format",) + tuple(f.name for f in fields(Trace) if f.name not in ("format", "raw"))
"""The keys of a ``specdec-trace/1`` document: the fields of :class:`Trace`
(``tests/client/test_schema_fields.py`` checks them against the trace schema)."""
MAX_TRACE_BYTES = 64 * 1024 * 1024
"""The largest trace file :func:`load_trace` reads (a 256-block trace of a
64-token vocabulary is a few MB)."""


class _Missing:
    """Marks a key or item absent on one side of a comparison."""

    def __repr__(self) -> str:
        return "<missing>"


MISSING = _Missing()
"""The value of ``expected`` or ``got`` when that side has no such field."""


# ---------------------------------------------------------------- files


def load_trace(source: Union[str, os.PathLike[str], Any]) -> Trace:
    """Read a trace from a path or an open text file.

    Raises :class:`~specdec_client.errors.TraceFormatError` when the file is
    not JSON, too large, or not a ``specdec-trace/1`` document, and
    ``OSError`` when it cannot be read.
    """
    name = source_name(source)
    if hasattr(source, "read"):
        text = source.read(MAX_TRACE_BYTES + 1)
    else:
        if os.path.getsize(source) > MAX_TRACE_BYTES:
            raise TraceFormatError(f"{name}: larger than {MAX_TRACE_BYTES} bytes")
        with open(source, encoding="utf-8") as f:
            text = f.read()
    if len(text) > MAX_TRACE_BYTES:
        raise TraceFormatError(f"{name}: larger than {MAX_TRACE_BYTES} bytes")
    try:
        data = loads_json(text)
    except ValueError as error:
        raise TraceFormatError(f"{name}: not JSON ({error})") from None
    return trace_from(data, name)


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a JSON number (RFC 8259 has no NaN or Infinity; Python's json.dumps "
                     "writes them unless allow_nan=False)")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text[:40]} is beyond the float64 range (about 1.8e308), which the SDK cannot send")
    return value


def loads_json(text: str) -> Any:
    """``json.loads`` of a trace's text as RFC 8259 has it: ``NaN``, ``Infinity`` and
    ``-Infinity`` (which Python's ``json`` reads and writes by default), and a number beyond
    float64 (``1e999``, which it reads as an infinity), are refused with a ``ValueError``
    saying so, since the service cannot be sent them."""
    return json.loads(text, parse_constant=_no_constant, parse_float=_finite)


def source_name(source: Any) -> str:
    """How errors name a trace's source: the path, an open file's ``name``
    (``<stdin>`` for standard input), or ``"<stream>"`` for a stream without
    one (e.g. ``io.StringIO``)."""
    if hasattr(source, "read"):
        name = getattr(source, "name", None)
        return name if isinstance(name, str) else "<stream>"
    try:
        return os.fsdecode(source)
    except TypeError:
        return "<stream>"


def _fields(*keys: str, **shapes: Any) -> tuple[Any, ...]:
    return tuple((k, "any") for k in keys) + tuple(shapes.items())


# The objects and lists of a trace (docs/trace-format.md), for shape_fault: a
# shape is "any" (a scalar, checked by the typed readers), "list" (of
# anything), ("list", item shape), ("object", fields) or ("object?", fields)
# (an object or null); fields are (key, shape) pairs, a key ending in "?"
# may be absent.
_DRAW = ("object?", _fields("position", "u", "hex"))
_SAMPLE = ("object?", _fields("context", "token", p="list", draw=_DRAW))
# A draft step and a test hold these in every mode and tree setting (SPEC 4, 10, 11, 12); the
# rest of each kind of record is read by its typed reader (types.py).
_BLOCK = ("object", _fields(
    "mode", "position", "next_position", prefix="list",
    proposal=("object", _fields(tokens="list", steps=("list", ("object", _fields("context", "token", draw=_DRAW))))),
    verification=("list", ("object", _fields("context", "token", "accepted", p="list", draw=_DRAW))),
    discarded="list", committed="list", counters=("object", ()),
    **{"correction?": ("object?", _fields("index", "context", "token", distribution="list", draw=_DRAW)),
       "bonus?": _SAMPLE, "sample?": _SAMPLE},
))
_TRACE = ("object", (("config", ("object", ())), ("blocks", ("list", _BLOCK)), ("output", "list"),
                     ("counters", ("object", ())), ("position", "any")))


def json_kind(value: Any) -> str:
    """What a JSON value is, in words for a message: ``null``, ``a boolean``, ``a number``,
    ``a string``, ``a list`` or ``an object``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object" if isinstance(value, Mapping) else type(value).__name__


def shape_fault(value: Any, shape: Any = _TRACE, path: str = "") -> Optional[str]:
    """The first place where ``value`` (a trace's JSON form) does not have
    the objects and lists of a ``specdec-trace/1`` trace, as a sentence
    naming the field (``"blocks[0] must be an object, not null"``,
    ``"blocks[1].proposal is missing"``), or ``None``. Scalars are not
    checked here (the typed readers check them)."""
    where = path or "the trace"
    if shape == "any":
        return None
    if shape == "list":
        shape = ("list", "any")
    kind, inner = shape
    if kind == "object?":
        if value is None:
            return None
        kind = "object"
    if kind == "list":
        if not isinstance(value, list):
            return f"{where} must be a list, not {json_kind(value)}"
        for i, item in enumerate(value):
            fault = shape_fault(item, inner, f"{path}[{i}]")
            if fault:
                return fault
        return None
    if not isinstance(value, Mapping):
        return f"{where} must be an object, not {json_kind(value)}"
    for key, sub in inner:
        optional = key.endswith("?")
        key = key.rstrip("?")
        child = f"{path}.{key}" if path else key
        if key not in value:
            if optional:
                continue
            return f"{child} is missing"
        fault = shape_fault(value[key], sub, child)
        if fault:
            return fault
    return None


def trace_from(data: Any, name: Any = "trace") -> Trace:
    """A :class:`Trace` from its JSON form; raises :class:`TraceFormatError`
    naming ``name`` (the source) and the faulty field."""
    if isinstance(data, Trace):
        return data
    if not isinstance(data, Mapping):
        raise TraceFormatError(f"{name}: a trace is a JSON object, not {json_kind(data)}")
    missing = [k for k in TRACE_KEYS if k not in data]
    if missing:
        raise TraceFormatError(f"{name}: not a {TRACE_FORMAT} trace (missing {', '.join(missing)})")
    if data.get("format") == TRACE_FORMAT:
        fault = shape_fault(data)
        if fault:
            raise TraceFormatError(f"{name}: not a {TRACE_FORMAT} trace ({fault})")
    try:
        return Trace.from_dict(data)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        what = f"missing {error}" if isinstance(error, KeyError) else str(error)
        raise TraceFormatError(f"{name}: not a {TRACE_FORMAT} trace ({what})") from None


def save_trace(trace: Union[Trace, Mapping[str, Any]], target: Union[str, os.PathLike[str], Any]) -> None:
    """Write a trace as JSON (2-space indent, UTF-8) to a path or open text file."""
    data = trace.to_dict() if isinstance(trace, Trace) else dict(trace)
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if hasattr(target, "write"):
        target.write(text)
    else:
        with open(target, "w", encoding="utf-8") as f:
            f.write(text)


# ---------------------------------------------------------------- comparison


def same(expected: Any, got: Any) -> bool:
    """Exact equality of two JSON scalars; ``true`` never equals ``1``."""
    if isinstance(expected, bool) or isinstance(got, bool):
        return type(expected) is type(got) and expected == got
    if isinstance(expected, (int, float)) and isinstance(got, (int, float)):
        return expected == got
    return type(expected) is type(got) and expected == got


def diff(expected: Any, got: Any, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    """Every difference between two JSON values, as ``(path, expected,
    got)``, recursing into objects and arrays; a field present on one side
    only gives :data:`MISSING` on the other. Paths look like
    ``blocks[1].verification[0].draw.u``."""
    if isinstance(expected, Mapping) and isinstance(got, Mapping):
        for key in list(expected) + [k for k in got if k not in expected]:
            sub = f"{path}.{key}" if path else str(key)
            if key in expected and key in got:
                yield from diff(expected[key], got[key], sub)
            else:
                yield sub, expected.get(key, MISSING), got.get(key, MISSING)
    elif isinstance(expected, list) and isinstance(got, list):
        for i in range(max(len(expected), len(got))):
            sub = f"{path}[{i}]"
            if i < len(expected) and i < len(got):
                yield from diff(expected[i], got[i], sub)
            else:
                yield sub, expected[i] if i < len(expected) else MISSING, got[i] if i < len(got) else MISSING
    elif not same(expected, got):
        yield path, expected, got


# ---------------------------------------------------------------- report


def _show(value: Any) -> str:
    if value is MISSING:
        return "<missing>"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 120 else text[:117] + "..."


@dataclass(frozen=True)
class Divergence:
    """One field where the saved trace disagrees with the service:
    ``block`` (index, or ``None`` for a trace-level field), ``path`` (e.g.
    ``blocks[1].verification[0].draw.u``), ``expected`` (the reference: what
    the service computes from the block's starting state) and ``got`` (what
    the saved trace holds), as in a grading report; either may be
    :data:`MISSING`. ``str()`` says it without the jargon:
    ``blocks[0].verification[1].draw.u: the trace has 0.1, the service gives 0.4443...``."""

    block: Optional[int]
    path: str
    expected: Any
    got: Any

    def __str__(self) -> str:
        return f"{self.path}: the trace has {_show(self.got)}, the service gives {_show(self.expected)}"

    def to_dict(self) -> dict[str, Any]:
        """JSON form; a missing side is the string ``"<missing>"``."""
        def j(v: Any) -> Any:
            return "<missing>" if v is MISSING else v
        return {"block": self.block, "path": self.path, "expected": j(self.expected), "got": j(self.got)}


@dataclass(frozen=True)
class ReplayReport:
    """The result of :func:`replay`: ``blocks`` replayed and every
    :class:`Divergence` in trace order; ``ok`` when there is none."""

    blocks: int
    divergences: tuple[Divergence, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        """True when every field of every block matches."""
        return not self.divergences

    def to_dict(self) -> dict[str, Any]:
        """``{"ok", "blocks", "divergences": [...]}``."""
        return {"ok": self.ok, "blocks": self.blocks, "divergences": [d.to_dict() for d in self.divergences]}

    def __str__(self) -> str:
        noun = "block" if self.blocks == 1 else "blocks"
        if self.ok:
            return f"replay: {self.blocks} {noun} replayed, every field matches the service"
        n = len(self.divergences)
        lines = [f"replay: {self.blocks} {noun} replayed, {n} divergence{'s' if n != 1 else ''}"]
        lines += [f"  {d}" for d in self.divergences]
        return "\n".join(lines)


# ---------------------------------------------------------------- replay


def replay(client: SessionsApi, trace: Union[Trace, Mapping[str, Any]], progress: Optional[Progress] = None) -> ReplayReport:
    """Replay a saved trace against the service (see the module docstring).

    ``client``: anything with the block routes (a
    :class:`~specdec_client.Client` or a
    :class:`~specdec_client.api.sessions.SessionsApi`); ``trace``: a
    :class:`Trace` or its JSON form. Returns a
    :class:`ReplayReport`. A block the service refuses (its saved starting
    state is invalid, HTTP 422, or the session was already done, HTTP 409)
    is reported as a divergence at ``blocks[i]``, unless its saved start
    already broke the chain (then it is replayed from where the block before
    ended, see the module docstring). ``progress``, when given, is called as
    ``progress("replay", blocks done, blocks)`` before each block and at the end
    (:data:`specdec_client.progress.Progress`). Raises
    :class:`TraceFormatError` for a document that is not a trace, and the
    client's connection errors.
    """
    data = trace_from(trace).to_dict()
    config = data["config"]
    saved_blocks = data["blocks"]
    found: list[Divergence] = []
    running = {name: 0 for name in COUNTER_NAMES}    # saved counters of the blocks before
    totals = {name: 0 for name in COUNTER_NAMES}     # the service's counters, summed
    output: list[Any] = []                                # the service's committed tokens, joined
    position: Any = 0
    start_prefix: list[Any] = []                          # where the saved block before ended
    start_position: Any = 0
    done: Any = None
    echoed_config: Any = None

    def note(block: Optional[int], differences: Iterable[tuple[str, Any, Any]]) -> None:  # differences: (path, saved value, service value)
        found.extend(Divergence(block, path, expected=service, got=saved) for path, saved, service in differences)

    for i, saved in enumerate(saved_blocks):
        if progress is not None:
            progress("replay", i, len(saved_blocks))
        where = f"blocks[{i}]"  # every saved block is an object: trace_from has read it as a Block
        # the chain: block 0 starts at the empty session, each later block
        # where the saved block before it ended
        broken = list(_chain(where, saved, start_prefix, start_position))
        note(i, broken)
        state = {"config": config, "committed": saved.get("prefix", []), "position": saved.get("position", 0),
                 "counters": dict(running)}
        steps = (saved.get("proposal") or {}).get("steps") or []
        supplied = any(isinstance(s, Mapping) and s.get("drafted") is False for s in steps)
        tokens = _supplied(saved["proposal"]) if supplied else None
        try:
            result = _replay_block(client, state, tokens)
        except (InvalidInput, SessionDone) as error:
            refused = _config_refusal(config, error)
            if refused:  # every block would be refused alike: report the config once, and stop
                found.extend(refused)
                return ReplayReport(len(saved_blocks), tuple(found))
            result, refusal = None, error
            if broken:  # refused from a saved start already reported: replay from where the block before ended
                try:
                    result = _replay_block(client, {**state, "committed": start_prefix, "position": start_position},
                                           tokens)
                except (InvalidInput, SessionDone) as again:
                    refusal = again
        if result is None:
            note(i, [(where, "a block", f"no block: HTTP {refusal.status}: {refusal.detail}")])
            got = dict(saved)  # carry on from the saved block, so the refusal is reported once
        else:
            got = result.block.to_dict()
            reported = {path for path, _, _ in broken}  # a broken start is reported once, by the chain
            note(i, (d for d in diff(saved, got, where) if d[0] not in reported))
            if echoed_config is None:
                echoed_config = result.state.to_dict().get("config")
        _add(running, saved.get("counters"))
        _add(totals, got.get("counters"))
        start_prefix = _list(saved.get("prefix")) + _list(saved.get("committed"))
        start_position = saved.get("next_position")
        output = output + _list(got.get("committed"))
        position = got.get("next_position")
        done = got.get("done")

    if progress is not None:
        progress("replay", len(saved_blocks), len(saved_blocks))
    if echoed_config is not None:
        note(None, diff(config, echoed_config, "config"))
    note(None, diff(data["output"], output, "output"))
    note(None, diff(data["counters"], totals, "counters"))
    note(None, diff(data["position"], position, "position"))
    note(None, diff(data["done"], done, "done"))
    return ReplayReport(len(saved_blocks), tuple(found))


_CONFIG_POINTERS = ("#/config", "#/state/config")


def _config_refusal(config: Any, error: Exception) -> list[Divergence]:
    """The divergences of a refusal (422) that points into the saved config: one per bad field
    (path ``config.width``; the trace has its value, the service gives ``"refused: why"``), or
    ``[]`` when the refusal is not about the config."""
    if not isinstance(error, InvalidInput):
        return []
    found = []
    for item in error.errors:
        pointer = item.pointer or ""
        prefix = next((p for p in _CONFIG_POINTERS if pointer == p or pointer.startswith(p + "/")), None)
        if prefix is None:
            continue
        path, value = "config", config
        for part in pointer[len(prefix) + 1:].split("/") if pointer != prefix else []:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(value, list) and part.isdigit():
                path, value = f"{path}[{part}]", value[int(part)] if int(part) < len(value) else MISSING
            else:
                path = f"{path}.{part}"
                value = value.get(part, MISSING) if isinstance(value, Mapping) else MISSING
        found.append(Divergence(None, path, expected=f"refused: {item.detail}", got=value))
    return found


def _supplied(proposal: Mapping[str, Any]) -> list[Any]:
    """A saved caller-supplied proposal as ``POST /v1/verify`` takes it: its chains in mode tree
    (SPEC 11), else its tokens."""
    chains = proposal.get("chains")
    return [list(c) for c in chains] if isinstance(chains, list) else list(proposal.get("tokens", []))


def _replay_block(client: SessionsApi, state: dict[str, Any], tokens: Optional[list[Any]]) -> StepResult:
    """The service's block from ``state``: ``POST /v1/verify`` with the saved
    ``tokens`` of a caller-supplied proposal, else ``POST /v1/step``."""
    return client.verify(state, tokens) if tokens is not None else client.step(state)


def _chain(where: str, saved: Mapping[str, Any], prefix: list[Any], position: Any) -> Iterator[tuple[str, Any, Any]]:
    yield from diff(saved.get("prefix", MISSING), prefix, f"{where}.prefix")
    yield from diff(saved.get("position", MISSING), position, f"{where}.position")


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _add(total: dict[str, Any], counters: Any) -> None:
    if isinstance(counters, Mapping):
        for name in total:
            value = counters.get(name, 0)
            if isinstance(value, int) and not isinstance(value, bool):
                total[name] += value
