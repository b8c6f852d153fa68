"""Is a submitted trace well formed? (Malformed -> HTTP 422, not a failed grade.)

A submission is validated against the trace format's JSON Schema
(``engine/trace.schema.json``, draft 2020-12), with relaxations so that a *wrong* value a
student computed is a failed check rather than a malformed document:

- a probability may be any number (an unclipped residual has negative entries, an
  unnormalised one does not sum to 1);
- an acceptance ratio may be any number or null (a tree test's ``ratio`` and ``ratio_exact``
  too: a faulty tree decoder tests a token of draft probability 0, whose ratio is undefined and
  recorded null, ``engine.verifiers.tree``);
- a token list may hold one token more than the engine's limit (a bonus past the limit);
- a draw's ``u`` may be any number and its ``hex`` any string of at most :data:`MAX_HEX`
  characters (a wrong conversion or formatting of the 64-bit value);
- a proposal, verification or correction index may be any integer from 0 (counted from 0);
- mode block's weights and thresholds may be any numbers, and its records are not tied to the
  mode (a block-mode trace written with token-wise records, the catalogue's
  ``block-runs-token-wise``, is graded).

Its ``config`` must also be a valid session config (``engine.parse_config``: e.g. width 1-16).
Errors are :class:`~specdec_service.engine.InvalidInput` with the path of each fault.
"""

from __future__ import annotations

import json

import copy
import math
from decimal import Decimal
from functools import lru_cache
from itertools import islice
from typing import Any, Iterator, Mapping

from ..engine import MAX_LIMIT, MAX_POSITION, Config, Fault, InvalidInput, parse_config, trace_schema
from ..engine.errors import MAX_ERRORS
from ..engine.inputs import CONFIG, SizeMessages, real_path, within_bounds

MAX_HEX = 64
"""The longest ``hex`` of a draw the grader reads (the right one has 16 digits)."""


@lru_cache(maxsize=1)
def grading_schema() -> dict:
    """The trace JSON Schema with the relaxations of the module docstring."""
    schema = copy.deepcopy(trace_schema())
    defs = schema["$defs"]
    defs["probability"] = {"type": "number", "description": "Any number: a wrong probability is graded, not refused."}
    defs["verification_step"]["properties"]["ratio"] = {"oneOf": [{"type": "number"}, {"type": "null"}]}
    tree_test = defs["tree_test"]["properties"]
    tree_test["ratio"] = {"oneOf": [{"type": "number"}, {"type": "null"}]}
    tree_test["ratio_exact"] = {"oneOf": [tree_test["ratio_exact"], {"type": "null"}]}
    block_step = defs["block_verification_step"]["properties"]
    block_step["ratio"] = block_step["weight"] = block_step["threshold"] = {"type": "number"}
    defs["block_correction"]["properties"]["weight"] = {"type": "number"}
    # Mode block's records are tied to the mode by an if/then; without it a mode-block trace
    # written with token-wise records (the catalogue's block-runs-token-wise) is graded, not refused.
    defs["block"].pop("allOf")
    defs["tokens"]["maxItems"] = MAX_LIMIT + 1
    draw = defs["draw"]["properties"]
    draw["u"] = {"type": "number", "description": "Any number: a wrong conversion of the 64-bit value is graded."}
    draw["hex"] = {"type": "string", "maxLength": MAX_HEX,
                   "description": "Any string: a wrongly written value (upper case, unpadded) is graded."}
    for step in ("proposal_step", "verification_step", "correction"):
        defs[step]["properties"]["index"] = {"type": "integer", "minimum": 0, "maximum": MAX_POSITION,
                                             "description": "Any index: a wrong one (counted from 0) is graded."}
    # Distinct labels are left to parse_config (a 422 "is listed twice"): schemathesis 4.32's
    # negative generation fails on uniqueItems here (InvalidArgument: min_size=2 unique
    # elements drawn from one value), which would stop the contract test of /v1/grade.
    defs["model_table"]["properties"]["vocab"].pop("uniqueItems")
    schema["description"] = (
        "A `specdec-trace/1` trace written by a student's implementation: the `Trace` format read so that a wrong "
        "value is graded (a failed check), not refused: a probability may be any number, an acceptance ratio any "
        "number or null (a tree test's `ratio_exact` a fraction string or null), a token list may hold one token past the limit, a draw's `u` may be any number and its "
        f"`hex` any string of at most {MAX_HEX} characters, and an index any integer from 0 (docs/grading.md). The "
        "config must also be a valid session config (its cross-field rules as for `ConfigIn`).")
    return schema


def _inline(node: Any, defs: dict) -> Any:
    """The schema with every ``$ref`` to ``#/$defs/...`` replaced by its target (the trace
    schema is not recursive) and ``oneOf`` by ``anyOf`` (its branches exclude each other):
    the same verdicts, three times faster with the pure-Python validator."""
    if isinstance(node, dict):
        if "$ref" in node:
            return _inline(defs[node["$ref"].rsplit("/", 1)[1]], defs)
        out = {k: _inline(v, defs) for k, v in node.items() if k not in ("$defs", "$id", "description")}
        if "oneOf" in out:
            out["anyOf"] = out.pop("oneOf")
        return out
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


@lru_cache(maxsize=1)
def _validator():
    """A check of :func:`grading_schema`: a function of a trace (within the schema's sizes, see
    :func:`validate_trace`) giving ``(faults, count)``, its ``(path, message)`` faults and how
    many it found. ``jsonschema_rs`` (Rust, about 0.1 ms for an eight-token trace) when
    installed, else ``jsonschema`` on the inlined schema (about 9 ms).

    ``jsonschema_rs`` lists every fault of what it checks, and writes each with a copy of the
    value at fault: a trace of 256 blocks full of wrong values holds hundreds of thousands. So
    the trace less its blocks is checked first, then the blocks one by one (a block is at most
    about 3,000 faults), and the search stops after the block where :data:`MAX_ERRORS` faults
    have been found; each later block that is not valid counts as one more fault (it has at
    least one). ``jsonschema_rs`` cannot read a string holding a lone surrogate (which only an
    in-process caller can pass: the service refuses one with a 400), so such a trace is checked
    by ``jsonschema``."""
    schema = grading_schema()
    python = _python_validator(schema)
    try:
        import jsonschema_rs
    except ImportError:
        return lambda instance: _all(python(instance))
    whole = jsonschema_rs.Draft202012Validator(schema)
    top = copy.deepcopy(schema)
    blocks_schema = top["properties"]["blocks"]
    top["properties"]["blocks"] = {k: v for k, v in blocks_schema.items() if k != "items"}
    outer = jsonschema_rs.Draft202012Validator(top)
    block = jsonschema_rs.Draft202012Validator({"$defs": schema["$defs"], **blocks_schema["items"]})
    clip = _largest_max_items(schema) + 1

    def errors(instance):
        try:
            if whole.is_valid(instance):
                return [], 0
            found = [_rs_fault(e, instance) for e in outer.iter_errors(instance)]
            blocks = instance.get("blocks") if isinstance(instance, dict) else None
            blocks = blocks if isinstance(blocks, list) else []
            count = len(found)
            for i, item in enumerate(blocks):
                if block.is_valid(item):
                    continue
                if len(found) >= MAX_ERRORS:
                    count += 1  # not searched: at least one fault
                    continue
                more = [(("blocks", i) + path, message) for path, message in _block_faults(block, item, clip)]
                found += more
                count += len(more)
            return found, count
        except UnicodeEncodeError:
            return _all(python(instance))
    return errors


def _block_faults(validator, item: Any, clip: int) -> list:
    """``validator``'s faults of one block as (path, message) pairs, with every list longer than
    ``clip`` (one more than the schema's largest ``maxItems``) cut to ``clip`` items first: the
    cut list still breaks its bound, and ``jsonschema_rs``, which finds every fault of a list
    before the first is read, does not spend seconds on the items past it (a list of 200,000
    wrong items took 5 s). The items past the cut are not searched, so the count is a lower
    bound, as for the blocks after :data:`MAX_ERRORS` (:func:`validate_trace` gives a message
    the list's real length)."""
    clipped = _clipped(item, clip)
    return [_rs_fault(e, clipped) for e in validator.iter_errors(clipped)]


def _clipped(value: Any, clip: int) -> Any:
    """``value`` with each list longer than ``clip`` cut to ``clip`` items."""
    if isinstance(value, list):
        return [_clipped(v, clip) for v in value[:clip]]
    if isinstance(value, dict):
        return {k: _clipped(v, clip) for k, v in value.items()}
    return value


def _real_lengths(trace: Any, errors: list) -> list:
    """``errors`` (path, message) with a message that gives a list's length (``a list of N
    items``, said of a copy cut to a bound) giving the length of that list in ``trace``."""
    fixed = []
    for path, message in errors:
        value = trace
        for key in path:
            try:
                value = value[key]
            except (KeyError, IndexError, TypeError):
                value = None
                break
        if isinstance(value, list) and message.startswith("a list of "):
            message = f"a list of {len(value)} items" + message.split(" items", 1)[1]
        fixed.append((path, message))
    return fixed


def _largest_max_items(schema: Any) -> int:
    """The largest ``maxItems`` anywhere in ``schema`` (0 when none)."""
    if isinstance(schema, dict):
        own = schema.get("maxItems", 0)
        return max([own if isinstance(own, int) else 0] + [_largest_max_items(v) for v in schema.values()])
    if isinstance(schema, list):
        return max([0] + [_largest_max_items(v) for v in schema])
    return 0


def _all(faults: list) -> tuple[list, int]:
    return faults, len(faults)


def _python_validator(schema: dict):
    """``jsonschema``'s validator of ``schema`` (inlined) as a function of an instance giving
    ``(path, message)`` pairs."""
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(_inline(schema, schema["$defs"]))
    return lambda instance: [_python_fault(e) for e in validator.iter_errors(instance)]


def _python_fault(error) -> tuple[tuple, str]:
    """A ``jsonschema`` error as (path, message): for a value that matches none of its
    alternatives, the deepest reason inside them, as :func:`_rs_fault` reads ``jsonschema_rs``'s
    (a block's proposal is one of two forms, SPEC 4.1 and 11.1: the pointer names the bad field)."""
    reasons = [inner for inner in error.context or () if not inner.message.endswith("is not of type 'null'")]
    if reasons:
        return _python_fault(max(reasons, key=lambda inner: len(inner.absolute_path)))
    return tuple(error.absolute_path), _message(error)


def _rs_fault(error, instance: Any) -> tuple[tuple, str]:
    """A ``jsonschema_rs`` error as (path, message): for a value that matches none of its
    alternatives (``oneOf``/``anyOf``, e.g. a draw or null), the deepest reason inside them,
    so the pointer names the bad field (``.../draw/hex``), not the whole value; and the
    message without a long dump of the value (``a list of 300 items has more than 257 items``)."""
    reasons = [inner for branch in getattr(error.kind, "context", None) or () for inner in branch
               if not inner.message.endswith('is not of type "null"')]  # the value is not null: say why not the rest
    if reasons:
        return _rs_fault(max(reasons, key=lambda inner: len(inner.instance_path)), instance)
    message = error.message
    dump = json.dumps(error.instance, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    if len(dump) > 60 and message.startswith(dump):
        message = _describe(error.instance) + message[len(dump):]
    return real_path(instance, error.instance_path, error.instance), _short(message)


def _describe(value: Any) -> str:
    if isinstance(value, list):
        return f"a list of {len(value)} items"
    if isinstance(value, Mapping):
        return f"an object with {len(value)} fields"
    if isinstance(value, str):
        return f"a string of {len(value)} characters"
    return "the value"


def parse_trace_config(trace: Any) -> Config:
    """The session config of a submitted trace, read first so the reference can be computed.

    Raises :class:`InvalidInput` when ``trace`` is not an object, has no ``config``, or its
    config is invalid (paths under ``config``).
    """
    if not isinstance(trace, Mapping):
        raise InvalidInput.at((), "must be a trace object (format specdec-trace/1)")
    if "config" not in trace:
        raise InvalidInput.at(("config",), "is required: the trace's session settings")
    config = trace["config"]
    if isinstance(config, Mapping) and len(config) <= len(CONFIG["properties"]) and not (type(config.get("target")) is str and type(config.get("draft")) is str):
        config = {key: _decimals(value) if key in ("target", "draft") else value for key, value in config.items()}
    try:
        return parse_config(config)
    except InvalidInput as error:
        raise error.prefixed("config") from None


def _decimals(value: Any) -> Any:
    """A custom model with every float as the Decimal of its shortest repr (the same exact
    value the engine reads from a float), so the engine's bounds on huge numbers apply. (The
    built-in types are asked first: ``isinstance`` of the ``Mapping`` ABC costs about 2 us, and a
    table has 4,000 entries.)"""
    if isinstance(value, float):
        return Decimal(repr(value)) if math.isfinite(value) else value
    if isinstance(value, list):
        return [_decimals(v) for v in value]
    if isinstance(value, (str, int)) or value is None:
        return value
    if isinstance(value, Mapping):
        return {k: _decimals(v) for k, v in value.items()}
    return value


@lru_cache(maxsize=1)
def _is_valid():
    """``jsonschema_rs``'s ``is_valid`` of :func:`grading_schema`, or ``None`` without it."""
    try:
        import jsonschema_rs
    except ImportError:
        return None
    return jsonschema_rs.Draft202012Validator(grading_schema()).is_valid


def schema_valid(trace: Any) -> bool:
    """Whether ``trace`` matches the grading schema, by ``jsonschema_rs`` (about 0.03 ms for an
    eight-token trace), which reads a NaN or an infinity as ``null`` (only an in-process caller
    can pass one; :func:`validate_trace` refuses it). ``False`` when it cannot tell (not
    installed, a string holding a lone surrogate): then :func:`validate_trace` decides."""
    is_valid = _is_valid()
    try:
        return is_valid is not None and is_valid(trace)
    except (UnicodeEncodeError, ValueError):
        return False


def validate_trace(trace: Any) -> None:
    """Raise :class:`InvalidInput` listing up to :data:`MAX_ERRORS` schema faults of ``trace``
    (with their paths; ``count``: how many were found), or return when it matches the grading
    schema.

    The sizes come first (:func:`~specdec_service.engine.inputs.within_bounds`): a list
    longer, an object with more names, a string longer than the schema allows, and each object
    holding names it does not allow, is one fault, and the rest of the check reads the trace
    cut to those bounds (so a body of 10^6 unknown entries costs what a valid trace does).
    Then a NaN or infinity (which only an in-process caller can pass) is refused at its path
    (before the schema: jsonschema_rs would read a NaN as null), and then the schema's faults
    (:func:`_validator`). A valid trace costs one ``jsonschema_rs`` check and a walk for NaNs."""
    if schema_valid(trace):  # within the schema's sizes, so the walk is too
        errors = _non_finite(trace)
        if errors:
            raise InvalidInput(Fault(path, message) for path, message in errors[:MAX_ERRORS])
        return
    bounded = within_bounds(grading_schema(), trace, TRACE_SIZES)
    errors = _non_finite(bounded.value)
    count = len(errors)
    if not errors:
        errors, count = _validator()(bounded.value)
    errors = [(f.path, f.message) for f in bounded.faults] + _real_lengths(trace, errors)
    count += len(bounded.faults) + bounded.more
    if errors:
        errors.sort(key=lambda e: (len(e[0]), list(map(str, e[0]))))
        raise InvalidInput((Fault(path, message) for path, message in errors[:MAX_ERRORS]), count)


def _too_big(keyword: str, schema: dict, value: Any) -> str:
    """A size fault as ``jsonschema_rs`` words it (the value described when long)."""
    bound = schema[keyword]
    if keyword == "maxLength":
        return f"{_shown(value)} is longer than {bound} character{'s' * (bound != 1)}"
    return f"{_shown(value)} has more than {bound} {'items' if keyword == 'maxItems' else 'properties'}"


def _shown(value: Any) -> str:
    if isinstance(value, str) and len(value) <= 58:
        return json.dumps(value, ensure_ascii=False)
    return _describe(value)


def _unexpected(schema: dict, names: Iterator[str], count: int) -> tuple[list[tuple[tuple, str]], int]:
    """Unknown names as ``jsonschema_rs`` words them: one fault at the object naming them (the
    first ten, then how many more)."""
    listed = [repr(name) if len(name) <= 40 else repr(name[:37] + "...") for name in islice(names, 10)]
    more = f" and {count - len(listed)} more" if count > len(listed) else ""
    verb = "was" if count == 1 else "were"
    return [((), f"Additional properties are not allowed ({', '.join(listed)}{more} {verb} unexpected)")], 1


TRACE_SIZES = SizeMessages(_too_big, _unexpected)
"""How :func:`validate_trace` words a size fault: as ``jsonschema_rs`` does."""


def _non_finite(trace: Any) -> list[tuple[tuple, str]]:
    """``(path, message)`` of every NaN or infinity in ``trace`` (JSON has none; only an
    in-process caller can pass one, and the Rust validator would read it as ``null``). A trace
    that ``json``'s C encoder writes without ``allow_nan`` has none: the walk in Python (about 1 s
    for the traces of an 8 MiB body) is only for one it refuses."""
    try:
        json.dumps(trace, allow_nan=False)
        return []
    except (ValueError, TypeError):  # a NaN or an infinity, or a value JSON cannot hold: walk
        pass
    faults: list[tuple[tuple, str]] = []
    stack: list[tuple[tuple, Any]] = [((), trace)]
    while stack:
        path, node = stack.pop()
        kind = type(node)
        if kind is float or isinstance(node, float):
            if not math.isfinite(node):
                faults.append((path, f"{node!r} is not a JSON number: a number must be finite"))
        elif isinstance(node, dict):
            stack.extend((path + (key,), value) for key, value in node.items())
        elif isinstance(node, (list, tuple)):
            stack.extend((path + (i,), value) for i, value in enumerate(node))
    return faults


def _message(error) -> str:
    message = error.message
    if error.validator == "anyOf" and error.context:
        message = min(error.context, key=lambda e: len(e.absolute_path)).message + " (nor any other allowed form)"
    return _short(message)


def _short(message: str) -> str:
    return message if len(message) <= 200 else message[:197] + "..."
