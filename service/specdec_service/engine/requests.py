"""The request bodies of the engine's routes, stated once as JSON Schema and checked from them.

Each body is one JSON Schema (draft 2020-12, plain data) whose bounds are read from
:mod:`.bounds`; both ends read it:

- the parsers: :func:`~.state.parse_config`, :func:`~.state.parse_state`,
  :func:`~.models.parse_model`, :func:`parse_verify`, :func:`parse_run` and
  :func:`~.analysis.parse_analysis` check the structure of what they read (types, bounds,
  required fields, no unknown field) with :func:`checker` (``jsonschema_rs``: well under a
  microsecond for a session state) and then apply the rules no JSON Schema states, in the
  engine's own code: each row sums to 1, target and draft share a vocabulary, tokens are in
  it, the committed prefix fits the limit, EOS only last, a proposal fits the room;
- the contract: ``api/trace_components.request_components`` publishes each schema as a
  component (:data:`COMPONENTS`: ``$defs/<name>`` as its component name), so the OpenAPI
  document and the parsers cannot drift (``tests/test_request_contract.py``).

A parser checks a *shallow* form of a nested schema where the nested part is read by another
parser (a config's models by :func:`~.models.resolve_model`, a state's config by
``parse_config``): :func:`shallow` replaces those properties.

A fault is an :class:`~.errors.InvalidInput` naming each bad field by its path, with a message
written from the schema's keywords (:func:`expectation`), so a bound is never restated in
prose. No Flask and no marshmallow here.
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Iterable

import jsonschema_rs

from .bounds import (
    MAX_DRAFTS, MIN_DRAFTS, MAX_COUNTER, MAX_DEPTH, MAX_DRAFT_COST, MAX_LABEL, MAX_LIMIT, MAX_POSITION, MAX_SAFE_INTEGER, MAX_SEED,
    MAX_VOCAB, MAX_WIDTH, MIN_DEPTH, MIN_LABEL, MIN_LIMIT, MIN_VOCAB, MIN_WIDTH,
)
from .errors import Fault, InvalidInput

MODES = ("speculative", "greedy", "autoregressive", "tree")
"""Decoding modes: SPEC section 4, the two of section 5, and ``tree`` (section 11)."""
COUNTER_NAMES = ("target_passes", "draft_steps", "accepted", "rejected", "discarded", "bonus_tokens",
                 "committed", "draws")
"""The work counters of SPEC section 7, in its order."""
BUILTIN_TARGET_NAMES = ("toy",)
BUILTIN_DRAFT_NAMES = ("aligned", "biased")
"""The built-in models' names (SPEC section 1; the models are :mod:`.models`')."""

LABEL = {"type": "string", "minLength": MIN_LABEL, "maxLength": MAX_LABEL}
"""A token label (SPEC section 1)."""
PROBABILITY = {"type": "number", "minimum": 0, "maximum": 1, "description": "A probability, read exactly as written."}
ROW = {"type": "array", "title": "probabilities", "minItems": MIN_VOCAB, "maxItems": MAX_VOCAB, "items": PROBABILITY}
"""A distribution in vocabulary order (its length and sum are the engine's rules)."""


def _count(description: str = "") -> dict:
    return {"type": "integer", "minimum": 0, "maximum": MAX_COUNTER, **({"description": description} if description else {})}


def _model(role: str, names: tuple) -> dict:
    return {"description": f"The {role} model: a built-in name or a custom table.",
            "oneOf": [{"type": "string", "enum": list(names)}, {"$ref": "#/$defs/model_table"}]}


MODEL_TABLE = {
    "type": "object",
    "description": "A custom bigram model (SPEC section 1): the `start` row and one row after each token, each a "
                   "distribution in vocabulary order that sums to 1 within 1e-9 (normalised exactly).",
    "properties": {
        "vocab": {"type": "array", "title": "token labels", "minItems": MIN_VOCAB, "maxItems": MAX_VOCAB,
                  "uniqueItems": True, "items": LABEL, "description": "The distinct token labels, in order."},
        "start": {**ROW, "description": "The distribution after the empty prefix."},
        "next": {"type": "object", "minProperties": MIN_VOCAB, "maxProperties": MAX_VOCAB, "propertyNames": LABEL,
                 "additionalProperties": ROW,
                 "description": "The distribution after a prefix ending in each token, by label (one row per "
                                "vocabulary token)."},
    },
    "required": ["vocab", "start", "next"],
    "additionalProperties": False,
}
CONFIG = {
    "type": "object",
    "description": "Session settings (SPEC section 8). `draft` and `seed` are required; the others take the "
                   "defaults shown.",
    "properties": {
        "target": {**_model("target", BUILTIN_TARGET_NAMES), "default": "toy"},
        "draft": _model("draft", BUILTIN_DRAFT_NAMES),
        "mode": {"type": "string", "enum": list(MODES), "default": "speculative",
                 "description": "speculative (SPEC 4), greedy or autoregressive (SPEC 5), tree (SPEC 11)."},
        "width": {"type": "integer", "minimum": MIN_WIDTH, "maximum": MAX_WIDTH, "default": 3,
                  "description": "Draft width: proposals per block."},
        "seed": {"type": "integer", "minimum": 0, "maximum": MAX_SEED,
                 "description": "Seed of the SplitMix64 draw stream (SPEC section 2)."},
        "limit": {"type": "integer", "minimum": MIN_LIMIT, "maximum": MAX_LIMIT, "default": 8,
                  "description": "Output tokens after which the session ends (SPEC 6)."},
        "eos": {**LABEL, "type": ["string", "null"], "default": None,
                "description": "End-of-sequence token of the vocabulary, or null (SPEC 6)."},
        "drafts": {"type": "integer", "minimum": MIN_DRAFTS, "maximum": MAX_DRAFTS, "default": 1,
                   "description": "Draft chains per block, D (SPEC 11); only mode tree reads it. Echoed in the "
                                  "session's config when sent or in mode tree."},
    },
    "required": ["draft", "seed"],
    "additionalProperties": False,
}
ANALYSIS_CONFIG = {
    **CONFIG,
    "description": "Session settings as for `POST /v1/runs`; `seed` may be left out and is ignored (nothing in an "
                   "analysis is random).",
    "properties": {**CONFIG["properties"],
                   "seed": {**CONFIG["properties"]["seed"], "description": "Ignored: an analysis covers every seed."}},
    "required": ["draft"],
}
COUNTERS = {
    "type": "object",
    "description": "Cumulative work counters (SPEC section 7); omitted ones are 0.",
    "properties": {name: _count() for name in COUNTER_NAMES},
    "additionalProperties": False,
}
STATE = {
    "type": "object",
    "description": "A session between blocks, exactly as a previous response returned it (or a fresh one: only "
                   "`config` is required).",
    "properties": {
        "config": {"$ref": "#/$defs/config"},
        "committed": {"type": "array", "title": "token labels", "minItems": 0, "maxItems": MAX_LIMIT, "items": LABEL,
                      "default": [], "description": "The committed prefix; at most `limit` tokens."},
        "position": {"type": "integer", "minimum": 0, "maximum": MAX_POSITION, "default": 0,
                     "description": "Index of the next unused draw (SPEC section 2)."},
        "counters": {"$ref": "#/$defs/counters"},
    },
    "required": ["config"],
    "additionalProperties": False,
}
PROPOSAL = {
    "type": "object",
    "description": "The proposal to verify: `tokens`, 1..min(width, limit - committed) tokens (none in mode "
                   "autoregressive); in mode tree `chains` instead: exactly `drafts` chains of 1..min(width, limit - "
                   "committed) tokens each (SPEC 11).",
    "properties": {"tokens": {"type": "array", "title": "token labels", "minItems": 0, "maxItems": MAX_WIDTH,
                              "items": LABEL},
                   "chains": {"type": "array", "title": "draft chains", "minItems": MIN_DRAFTS, "maxItems": MAX_DRAFTS,
                              "items": {"type": "array", "title": "token labels", "minItems": 0,
                                        "maxItems": MAX_WIDTH, "items": LABEL}}},
    "oneOf": [{"required": ["tokens"]}, {"required": ["chains"]}],
    "additionalProperties": False,
}
VERIFY = {
    "type": "object",
    "description": "`POST /v1/verify`: a state and the proposal to verify in it.",
    "properties": {"state": {"$ref": "#/$defs/state"}, "proposal": {"$ref": "#/$defs/proposal"}},
    "required": ["state", "proposal"],
    "additionalProperties": False,
}
RUN = {
    "type": "object",
    "description": "`POST /v1/runs`: the settings of the session to run to its end.",
    "properties": {"config": {"$ref": "#/$defs/config"}},
    "required": ["config"],
    "additionalProperties": False,
}
ANALYSIS = {
    "type": "object",
    "description": "`POST /v1/analysis`: a config and what to compute about it.",
    "properties": {
        "config": {"$ref": "#/$defs/analysis_config"},
        "depth": {"type": "integer", "minimum": MIN_DEPTH, "maximum": MAX_DEPTH,
                  "description": "The output distribution is over the first `depth` committed tokens (at most "
                                 "`limit`; default min(limit, 3))."},
        "widths": {"type": "array", "title": "widths", "minItems": 1, "maxItems": MAX_WIDTH, "uniqueItems": True,
                   "items": {"type": "integer", "minimum": MIN_WIDTH, "maximum": MAX_WIDTH},
                   "description": "The distinct widths to sweep (default 1-8)."},
        "draft_cost": {"type": "number", "minimum": 0, "maximum": MAX_DRAFT_COST,
                       "description": "The cost of one draft step in target passes, read as the decimal it is "
                                      "written as (default 0)."},
    },
    "required": ["config"],
    "additionalProperties": False,
}

DEFS = {"model_table": MODEL_TABLE, "config": CONFIG, "analysis_config": ANALYSIS_CONFIG, "counters": COUNTERS,
        "state": STATE, "proposal": PROPOSAL, "verify": VERIFY, "run": RUN, "analysis": ANALYSIS}
"""Every body and part of a body, by name; references between them are ``#/$defs/<name>``."""
COMPONENTS = {"model_table": "ModelTableIn", "config": "ConfigIn", "analysis_config": "AnalysisConfigIn",
              "counters": "CountersIn", "state": "StateIn", "proposal": "ProposalIn", "verify": "VerifyIn",
              "run": "RunIn", "analysis": "AnalysisIn"}
"""The OpenAPI component of each of :data:`DEFS`."""


def shallow(schema: dict, **properties: dict) -> dict:
    """``schema`` (with :data:`DEFS` as its ``$defs``) with the given ``properties`` replaced,
    e.g. ``shallow(STATE, config={"type": "object"})``: a part another parser reads."""
    top = copy.deepcopy(schema)
    top["properties"].update(properties)
    top["$defs"] = DEFS
    return top


def checker(schema: dict) -> Callable[..., None]:
    """A check of values against ``schema`` (compiled once with ``jsonschema_rs``):
    ``check(value, path=())`` returns when ``value`` is valid and otherwise raises
    :class:`InvalidInput` naming each fault (one per field, in the schema's field order) by its
    path under ``path``, with a message written from the schema (:func:`expectation`)."""
    validator = jsonschema_rs.Draft202012Validator(schema)

    def check(value: Any, path: tuple = ()) -> None:
        try:
            try:
                if validator.is_valid(value):
                    return
            except UnicodeEncodeError:  # a lone surrogate, which jsonschema_rs cannot read
                value = _encodable(value)
                if validator.is_valid(value):
                    return
            errors = [(_real_path(value, e.instance_path), tuple(e.schema_path)) for e in validator.iter_errors(value)]
        except ValueError as error:  # a name that is not a string: only possible in process
            raise InvalidInput.at(path, f"must be JSON: {error}") from None
        raise InvalidInput(Fault(path + f.path, f.message) for f in _faults(schema, value, errors))

    check.schema = schema  # type: ignore[attr-defined]
    return check


def _encodable(value: Any) -> Any:
    """``value`` with each lone surrogate of its strings (which only an in-process caller can
    pass: the service refuses one with a 400) as a distinct private-use character, so that
    ``jsonschema_rs`` can read it and every length and distinctness stays as it was."""
    kind = type(value)
    if kind is str:
        return "".join(chr(0xF0000 + ord(c) - 0xD800) if "\ud800" <= c <= "\udfff" else c for c in value)
    if kind is list or kind is tuple:
        return [_encodable(v) for v in value]
    if isinstance(value, dict):
        return {_encodable(k): _encodable(v) for k, v in value.items()}
    return value


def _faults(schema: dict, payload: Any, errors: Iterable[tuple[tuple, tuple]]) -> list[Fault]:
    """The faults of ``errors`` (instance path, schema path), one per path: a value of the
    wrong type gets that fault only (nothing about its content)."""
    errors = list(errors)
    wrong_type = {path for path, where in errors if where[-1] == "type"}
    faults: dict[tuple, Fault] = {}
    for path, where in errors:
        keyword, subschema = where[-1], _at(schema, where[:-1])
        if keyword == "type":
            faults[path] = Fault(path, expectation(subschema))
        elif not any(path[:len(wrong)] == wrong for wrong in wrong_type):
            for fault in _keyword_faults(keyword, subschema, path, _at(payload, path)):
                faults.setdefault(fault.path, fault)
    order = list(schema.get("properties", ()))
    return sorted(faults.values(), key=lambda f: (order.index(f.path[0]) if f.path and f.path[0] in order
                                                  else len(order), len(f.path)))


def _keyword_faults(keyword: str, schema: dict, path: tuple, value: Any) -> list[Fault]:
    if keyword == "required":
        return [Fault(path + (key,), "is required") for key in schema["required"] if key not in value]
    if keyword == "additionalProperties":
        fields = ", ".join(sorted(schema["properties"]))
        return [Fault(path + (key,), f"unknown field: the fields are {fields}")
                for key in value if key not in schema["properties"]]
    if keyword == "oneOf":
        names = [branch["required"][0] for branch in schema["oneOf"]]
        return [Fault(path + (names[0],), f"give exactly one of {' and '.join(names)}")]
    if keyword == "uniqueItems":
        repeated = [Fault(path + (i,), f"{item!r} is listed twice: the {schema['title']} must be distinct")
                    for i, item in enumerate(value) if item in value[:i]]
        return repeated or [Fault(path, f"must list distinct {schema['title']}")]
    if keyword in ("minProperties", "maxProperties"):
        return [Fault(path, f"must have {schema['minProperties']} to {schema['maxProperties']} entries")]
    return [Fault(path, expectation(schema))]


def _real_path(value: Any, path: Iterable) -> tuple:
    """``path`` (``jsonschema_rs``'s instance path) with each key as ``value`` holds it: it
    gives the name ``"0"`` of an object as the integer 0."""
    real, node = [], value
    for key in path:
        if isinstance(node, dict) and key not in node:
            key = str(key)
        real.append(key)
        node = node[key]
    return tuple(real)


def _at(node: Any, path: tuple) -> Any:
    for key in path:
        node = node[int(key) if isinstance(node, list) else key]
    return node


def _number(value: int) -> str:
    return "2^53-1" if value == MAX_SAFE_INTEGER else str(value)


def expectation(schema: dict) -> str:
    """What a value of ``schema`` must be, in words written from its keywords: ``"must be an
    integer from 1 to 4"``, ``"must be a number between 0 and 1 (exclusive)"``, ``"must be a
    number from 0 to 1"``, ``"must be one of speculative, greedy, autoregressive"``, ``"must be
    a list of 1 to 1000000 sampled outputs"`` (its ``title``), ``"must be an object with prefix
    and count"`` (its required fields), ``"... or null"``."""
    if "enum" in schema:
        return "must be one of " + ", ".join(map(str, schema["enum"]))
    types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    kind = next(t for t in types if t != "null")
    if kind == "integer":
        text = f"an integer from {_number(schema['minimum'])} to {_number(schema['maximum'])}"
    elif kind == "number" and "minimum" in schema:
        text = f"a number from {schema['minimum']} to {schema['maximum']}"
    elif kind == "number":
        text = f"a number between {schema['exclusiveMinimum']} and {schema['exclusiveMaximum']} (exclusive)"
    elif kind == "array":
        text = f"a list of {schema['minItems']} to {schema['maxItems']} {schema['title']}"
    elif kind == "string":
        text = f"a string of {schema['minLength']} to {schema['maxLength']} characters"
    else:
        names = list(schema.get("required", ()))
        if "oneOf" in schema:
            names.append(" or ".join(branch["required"][0] for branch in schema["oneOf"]))
        text = "an object" + (" with " + " and ".join(filter(None, [", ".join(names[:-1]), names[-1]])) if names else "")
    return f"must be {text}" + (" or null" if "null" in types else "")


def integer_fields(schema: dict) -> tuple[str, ...]:
    """The properties of ``schema`` that are integers: JSON Schema counts ``3.0`` an integer,
    the engine reads only an ``int`` (a float there sends a fast-read body to the exact path,
    which reads ``3.0`` as ``3``)."""
    return tuple(k for k, v in schema["properties"].items() if v.get("type") == "integer")


def strict_integers(obj: dict, names: tuple[str, ...], schema: dict, path: tuple = ()) -> None:
    """Raise :class:`InvalidInput` when a field of ``names`` in ``obj`` (already valid against
    ``schema``) holds a number that is not an ``int``."""
    faults = [Fault(path + (k,), expectation(schema["properties"][k])) for k in names
              if k in obj and type(obj[k]) is not int]
    if faults:
        raise InvalidInput(faults)
