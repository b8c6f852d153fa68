"""Is a submitted trace well formed? (Malformed -> HTTP 422, not a failed grade.)

A submission is validated against the trace format's JSON Schema
(``engine/trace.schema.json``, draft 2020-12), with four relaxations so that a *wrong* value a
student computed is a failed check rather than a malformed document:

- a probability may be any number (an unclipped residual has negative entries, an
  unnormalised one does not sum to 1);
- an acceptance ratio may be any number or null;
- a token list may hold one token more than the engine's limit (a bonus past the limit);
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
from typing import Any, Mapping

from ..engine import MAX_LIMIT, Config, Fault, InvalidInput, parse_config, trace_schema

MAX_ERRORS = 20
"""At most this many schema faults are reported for one trace."""


@lru_cache(maxsize=1)
def grading_schema() -> dict:
    """The trace JSON Schema with the relaxations of the module docstring."""
    schema = copy.deepcopy(trace_schema())
    defs = schema["$defs"]
    defs["probability"] = {"type": "number", "description": "Any number: a wrong probability is graded, not refused."}
    defs["verification_step"]["properties"]["ratio"] = {"oneOf": [{"type": "number"}, {"type": "null"}]}
    block_step = defs["block_verification_step"]["properties"]
    block_step["ratio"] = block_step["weight"] = block_step["threshold"] = {"type": "number"}
    defs["block_correction"]["properties"]["weight"] = {"type": "number"}
    # Mode block's records are tied to the mode by an if/then; without it a mode-block trace
    # written with token-wise records (the catalogue's block-runs-token-wise) is graded, not refused.
    defs["block"].pop("allOf")
    defs["tokens"]["maxItems"] = MAX_LIMIT + 1
    # Distinct labels are left to parse_config (a 422 "is listed twice"): schemathesis 4.32's
    # negative generation fails on uniqueItems here (InvalidArgument: min_size=2 unique
    # elements drawn from one value), which would stop the contract test of /v1/grade.
    defs["model_table"]["properties"]["vocab"].pop("uniqueItems")
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
    """A compiled validator of :func:`grading_schema`: ``jsonschema_rs`` (Rust, about 0.1 ms
    for an eight-token trace) when installed, else ``jsonschema`` on the inlined schema (about
    9 ms). Both yield errors with a path and a message. ``jsonschema_rs`` cannot read a string
    holding a lone surrogate (which only an in-process caller can pass: the service refuses
    one with a 400), so such a trace is checked by ``jsonschema``."""
    schema = grading_schema()
    python = _python_validator(schema)
    try:
        import jsonschema_rs
    except ImportError:
        return python
    validator = jsonschema_rs.Draft202012Validator(schema)

    def errors(instance):
        try:
            if validator.is_valid(instance):
                return []
            return [_rs_fault(e) for e in validator.iter_errors(instance)]
        except UnicodeEncodeError:
            return python(instance)
    return errors


def _python_validator(schema: dict):
    """``jsonschema``'s validator of ``schema`` (inlined) as a function of an instance giving
    ``(path, message)`` pairs."""
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(_inline(schema, schema["$defs"]))
    return lambda instance: [(tuple(e.absolute_path), _message(e)) for e in validator.iter_errors(instance)]


def _rs_fault(error) -> tuple[tuple, str]:
    """A ``jsonschema_rs`` error as (path, message): for a value that matches none of its
    alternatives (``oneOf``/``anyOf``, e.g. a draw or null), the deepest reason inside them,
    so the pointer names the bad field (``.../draw/hex``), not the whole value; and the
    message without a long dump of the value (``a list of 300 items has more than 257 items``)."""
    reasons = [inner for branch in getattr(error.kind, "context", None) or () for inner in branch
               if not inner.message.endswith('is not of type "null"')]  # the value is not null: say why not the rest
    if reasons:
        return _rs_fault(max(reasons, key=lambda inner: len(inner.instance_path)))
    message = error.message
    dump = json.dumps(error.instance, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    if len(dump) > 60 and message.startswith(dump):
        message = _describe(error.instance) + message[len(dump):]
    return tuple(error.instance_path), _short(message)


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
    if isinstance(config, Mapping) and not (type(config.get("target")) is str and type(config.get("draft")) is str):
        config = {key: _decimals(value) if key in ("target", "draft") else value for key, value in config.items()}
    try:
        return parse_config(config)
    except InvalidInput as error:
        raise error.prefixed("config") from None


def _decimals(value: Any) -> Any:
    """A custom model with every float as the Decimal of its shortest repr (the same exact
    value the engine reads from a float), so the engine's bounds on huge numbers apply."""
    if isinstance(value, float):
        return Decimal(repr(value)) if math.isfinite(value) else value
    if isinstance(value, Mapping):
        return {k: _decimals(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decimals(v) for v in value]
    return value


def validate_trace(trace: Any) -> None:
    """Raise :class:`InvalidInput` listing up to :data:`MAX_ERRORS` schema faults of ``trace``
    (with their paths), or return when it matches the grading schema. A NaN or infinity (which
    only an in-process caller can pass) is refused first, at its path."""
    errors = _non_finite(trace)  # first: jsonschema_rs would read a NaN as null and say so
    if not errors:
        errors = sorted(_validator()(trace), key=lambda e: (len(e[0]), list(map(str, e[0]))))
    if errors:
        raise InvalidInput(Fault(path, message) for path, message in errors[:MAX_ERRORS])


def _non_finite(trace: Any) -> list[tuple[tuple, str]]:
    """``(path, message)`` of every NaN or infinity in ``trace`` (JSON has none; only an
    in-process caller can pass one, and the Rust validator would read it as ``null``)."""
    faults, stack = [], [((), trace)]
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
