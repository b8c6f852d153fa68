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
value is reported once, where it is, not again in every later block. What the
trace derives from its blocks (a block's ``prefix``/``position`` from the block
before, the totals from every block) diverges only when it agrees neither with
the saved blocks nor with the service's: agreeing with one, its difference from
the other follows from a divergence already reported (an altered committed token
of block 0 is one divergence; block 1 starting where the service's block 0 ends
follows from it), listed apart as ``consequences`` and not counted. When a
block's saved start fails the chain check, the block is also replayed from where
the saved block before it ended, and that block is compared when it is the saved
one (only the start was altered) or when the service refuses the saved start
(HTTP 409/422), the broken start being reported once, by the chain check. A refusal that points into
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


CONSEQUENCES_SHOWN = 5
"""The text report names at most this many of the differences that follow from a divergence."""


@dataclass(frozen=True)
class ReplayReport:
    """The result of :func:`replay`: ``blocks`` replayed and every
    :class:`Divergence` in trace order (``ok`` when there is none; the first is
    :attr:`first`), and ``consequences``: the differences that follow from them (a block that
    starts where a diverging block ended in the trace but not in the service, or the reverse; the
    trace's totals, when they agree with its diverging blocks), not counted as divergences."""

    blocks: int
    divergences: tuple[Divergence, ...] = field(default_factory=tuple)
    consequences: tuple[Divergence, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        """True when every field of every block matches."""
        return not self.divergences

    @property
    def first(self) -> Optional[Divergence]:
        """The first divergence in trace order, or ``None`` when the trace matches."""
        return self.divergences[0] if self.divergences else None

    def to_dict(self) -> dict[str, Any]:
        """``{"ok", "blocks", "divergences": [...]}``, and ``"consequences": [...]`` when some
        difference follows from a divergence."""
        out = {"ok": self.ok, "blocks": self.blocks, "divergences": [d.to_dict() for d in self.divergences]}
        if self.consequences:
            out["consequences"] = [d.to_dict() for d in self.consequences]
        return out

    def __str__(self) -> str:
        noun = "block" if self.blocks == 1 else "blocks"
        if self.ok:
            return f"replay: {self.blocks} {noun} replayed, every field matches the service"
        n = len(self.divergences)
        lines = [f"replay: {self.blocks} {noun} replayed, {n} divergence{'s' if n != 1 else ''}"]
        lines += [f"  {d}" for d in self.divergences]
        if self.consequences:
            paths = [d.path for d in self.consequences]
            more = len(paths) - CONSEQUENCES_SHOWN
            named = ", ".join(paths[:CONSEQUENCES_SHOWN]) + (f" and {more} more" if more > 0 else "")
            lines.append(f"  later differences follow from {'it' if n == 1 else 'these'}, not counted: {named}")
        return "\n".join(lines)


# ---------------------------------------------------------------- replay


class _Ends:
    """Where a trace's blocks end so far, as the trace says and as the service computes (the
    chain each block's ``prefix``/``position`` is checked against, and the totals)."""

    def __init__(self) -> None:
        self.saved_end: tuple[list[Any], Any] = ([], 0)     # where the saved block before ended
        self.service_end: tuple[list[Any], Any] = ([], 0)   # where the service's block before ended
        self.running = {name: 0 for name in COUNTER_NAMES}   # saved counters of the blocks before
        self.totals = {name: 0 for name in COUNTER_NAMES}    # the service's counters, summed
        self.saved_output: list[Any] = []                    # the saved blocks' committed tokens, joined
        self.output: list[Any] = []                          # the service's committed tokens, joined
        self.saved_last: tuple[Any, Any] = (0, None)         # the last saved block's next_position, done
        self.last: tuple[Any, Any] = (0, None)               # the service's

    def advance(self, saved: Mapping[str, Any], got: Mapping[str, Any]) -> None:
        """After a block: ``saved`` as the trace has it, ``got`` as the service gives it."""
        _add(self.running, saved.get("counters"))
        _add(self.totals, got.get("counters"))
        self.saved_end = (_list(saved.get("prefix")) + _list(saved.get("committed")), saved.get("next_position"))
        self.service_end = (_list(got.get("prefix")) + _list(got.get("committed")), got.get("next_position"))
        self.saved_output += _list(saved.get("committed"))
        self.output += _list(got.get("committed"))
        self.saved_last = (saved.get("next_position"), saved.get("done"))
        self.last = (got.get("next_position"), got.get("done"))


Differences = list[tuple[str, Any, Any]]
"""``(path, saved value, service value)`` of :func:`diff`, as a list."""


def _derived(path: str, saved: Any, from_saved: Any, from_service: Any) -> tuple[Differences, Differences]:
    """A field the trace derives from others (a block's start, the trace's totals): ``(divergences,
    consequences)``. It diverges only when it agrees neither with the saved fields it derives from
    (``from_saved``) nor with the service's (``from_service``); agreeing with one of them, its
    differences from the other follow from a divergence of those fields, reported where it is."""
    against_service = list(diff(saved, from_service, path))
    if not against_service:
        return [], list(diff(saved, from_saved, path))
    if not list(diff(saved, from_saved, path)):
        return [], against_service
    return list(diff(saved, from_saved, path)), []


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
    following: list[Divergence] = []
    ends = _Ends()
    echoed_config: Any = None

    def note(block: Optional[int], differences: Iterable[tuple[str, Any, Any]], into: list[Divergence] = found) -> None:
        into.extend(Divergence(block, path, expected=service, got=saved) for path, saved, service in differences)

    for i, saved in enumerate(saved_blocks):
        if progress is not None:
            progress("replay", i, len(saved_blocks))
        where = f"blocks[{i}]"  # every saved block is an object: trace_from has read it as a Block
        # the chain: block 0 starts at the empty session, each later block where the block before it ended
        broken, consequent = _derived(where, _start(saved), _start_of(*ends.saved_end), _start_of(*ends.service_end))
        note(i, broken)
        note(i, consequent, following)
        state = {"config": config, "committed": saved.get("prefix", []), "position": saved.get("position", 0),
                 "counters": dict(ends.running)}
        try:
            result = _replay_from(client, saved, state, ends.saved_end if broken else None)
        except _Refused as refused:
            if refused.config:  # every block would be refused alike: report the config once, and stop
                found.extend(refused.config)
                return ReplayReport(len(saved_blocks), tuple(found), tuple(following))
            note(i, [(where, "a block", f"no block: HTTP {refused.error.status}: {refused.error.detail}")])
            got = dict(saved)  # carry on from the saved block, so the refusal is reported once
        else:
            got = result.block.to_dict()
            reported = {path for path, _, _ in broken}  # a broken start is reported once, by the chain
            note(i, (d for d in diff(saved, got, where) if d[0] not in reported))
            if echoed_config is None:
                echoed_config = result.state.to_dict().get("config")
        ends.advance(saved, got)

    if progress is not None:
        progress("replay", len(saved_blocks), len(saved_blocks))
    if echoed_config is not None:
        note(None, diff(config, echoed_config, "config"))
    for path, saved_value, from_saved, from_service in (
            ("output", data["output"], ends.saved_output, ends.output),
            ("counters", data["counters"], ends.running, ends.totals),
            ("position", data["position"], ends.saved_last[0], ends.last[0]),
            ("done", data["done"], ends.saved_last[1], ends.last[1])):
        wrong, consequent = _derived(path, saved_value, from_saved, from_service)
        note(None, wrong)
        note(None, consequent, following)
    return ReplayReport(len(saved_blocks), tuple(found), tuple(following))


def _start(block: Mapping[str, Any]) -> dict[str, Any]:
    return {"prefix": block.get("prefix", MISSING), "position": block.get("position", MISSING)}


def _start_of(prefix: list[Any], position: Any) -> dict[str, Any]:
    return {"prefix": prefix, "position": position}


class _Refused(Exception):
    """The service refused a block: ``error`` (HTTP 409/422), ``config`` the divergences of a
    refusal that points into the trace's config (:func:`_config_refusal`)."""

    def __init__(self, error: Any, config: list[Divergence]):
        super().__init__(str(error))
        self.error, self.config = error, config


def _replay_from(client: SessionsApi, saved: Mapping[str, Any], state: dict[str, Any],
                 chain_start: Optional[tuple[list[Any], Any]]) -> StepResult:
    """The service's block for ``saved``, from its saved start ``state``; when that start broke
    the chain (``chain_start``: where the saved block before ended), also from the chain's start,
    whose block is kept when it is the saved one (the start alone was altered) or when the saved
    start is refused. Raises :class:`_Refused`."""
    steps = (saved.get("proposal") or {}).get("steps") or []
    supplied = any(isinstance(s, Mapping) and s.get("drafted") is False for s in steps)
    tokens = _supplied(saved["proposal"]) if supplied else None
    result = None
    try:
        result = _replay_block(client, state, tokens)
    except (InvalidInput, SessionDone) as error:
        refused = _config_refusal(state["config"], error)
        if refused or chain_start is None:
            raise _Refused(error, refused) from None
    if chain_start is None:
        assert result is not None
        return result
    try:
        joined = _replay_block(client, {**state, "committed": chain_start[0], "position": chain_start[1]}, tokens)
    except (InvalidInput, SessionDone) as again:
        if result is None:
            raise _Refused(again, []) from None
        return result
    if result is None or not [d for d in diff(saved, joined.block.to_dict()) if d[0] not in ("prefix", "position")
                              and not d[0].startswith("prefix[")]:
        return joined
    return result


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


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _add(total: dict[str, Any], counters: Any) -> None:
    if isinstance(counters, Mapping):
        for name in total:
            value = counters.get(name, 0)
            if isinstance(value, int) and not isinstance(value, bool):
                total[name] += value
