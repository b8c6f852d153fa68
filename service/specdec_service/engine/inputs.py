"""The engine's inputs (config, state, model table, sampling, tree, verification, run, analysis),
stated once as JSON Schema and checked from them.

Each input is one JSON Schema (draft 2020-12, plain data) whose bounds are read from
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
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Callable, Iterable, Iterator

import jsonschema_rs

from .bounds import (
    MAX_DRAFTS, MIN_DRAFTS, MAX_COUNTER, MAX_DEPTH, MAX_DRAFT_COST, MAX_LABEL, MAX_LIMIT, MAX_POSITION, MAX_SAFE_INTEGER, MAX_SEED,
    MAX_VOCAB, MAX_WIDTH, MIN_DEPTH, MIN_LABEL, MIN_LIMIT, MIN_VOCAB, MIN_WIDTH, MAX_TEMPERATURE, MAX_TOP_K,
    MIN_TEMPERATURE, MIN_TOP_K, MAX_BRANCHING, MAX_BRANCHING_DEPTHS, MAX_TREE_NODES, MIN_BRANCHING,
)
from .errors import MAX_ERRORS, Fault, InvalidInput

MODES = ("speculative", "greedy", "autoregressive", "block", "tree")
"""Decoding modes: SPEC section 4, the two of section 5, block verification (section 10) and
``tree``, several drafts (section 11)."""
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


MODEL_TABLE: dict[str, Any] = {
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
SAMPLING: dict[str, Any] = {
    "type": "object",
    "description": "Sampling parameters (SPEC section 9), all optional: every row is processed (temperature, top_k, "
                   "top_p, min_p, in that order, exactly) before any rule reads it: the target's always (p'), the "
                   "draft's unless `draft` is \"raw\". Absent or empty: nothing is processed. Numbers are read as the "
                   "decimal written. Echoed in the session's config as sent (each number as float64) whenever sent.",
    "properties": {
        "temperature": {"type": "number", "minimum": 0, "maximum": MAX_TEMPERATURE,
                        "anyOf": [{"const": 0}, {"type": "number", "minimum": float(MIN_TEMPERATURE)}],
                        "description": "T: 0 (a point mass at the argmax) or 0.05 to 20; each entry becomes p^(1/T), "
                                       "exact when 1/T is an integer, else the correctly rounded float64 (SPEC 9.1)."},
        "top_k": {"type": "integer", "minimum": MIN_TOP_K, "maximum": MAX_TOP_K,
                  "description": "Keep every token at least the k-th largest (ties kept; SPEC 9.2)."},
        "top_p": {"type": "number", "exclusiveMinimum": 0, "maximum": 1,
                  "description": "Keep a token iff the probability of the larger ones (ties in vocabulary order) "
                                 "before it is strictly less than top_p (SPEC 9.3)."},
        "min_p": {"type": "number", "minimum": 0, "maximum": 1,
                  "description": "Keep a token iff its probability is at least min_p times the largest (SPEC 9.4)."},
        "draft": {"type": "string", "enum": ["processed", "raw"], "default": "processed",
                  "description": "The draft rows proposals are drawn from: processed (q') or raw (q); either way "
                                 "the q of the ratio and the residual is that row (SPEC 9)."},
    },
    "additionalProperties": False,
}
"""A config's ``sampling`` object (SPEC section 9): its structure and bounds;
:func:`~.sampling.parse_sampling` reads it exactly."""
_THRESHOLD = {"type": "number", "exclusiveMinimum": 0, "maximum": 1, "default": 1}
TREE: dict[str, Any] = {
    "type": "object",
    "description": "The draft tree's shape and verifier (SPEC section 12), read only in mode tree; all optional. Absent: "
                   "shape chains, verify residual, exactly SPEC 11. Refused: residual with beam, branching with another "
                   "shape, a threshold with another verifier. Echoed in the session's config as sent (each number as "
                   "float64) whenever sent.",
    "properties": {
        "shape": {"type": "string", "enum": ["chains", "distinct", "beam"], "default": "chains",
                  "description": "chains: D chains drafted with replacement (SPEC 11.1); distinct: siblings drawn "
                                 "without replacement; beam: the deterministic top-D tree (SPEC 12.1)."},
        "verify": {"type": "string", "enum": ["residual", "target_only"], "default": "residual",
                   "description": "residual: recursive rejection against each child's proposal law (SPEC 12.3); "
                                  "target_only: one draw a node against the target's cumulative probability of the "
                                  "children, the draft's probabilities never read (SPEC 12.4)."},
        "branching": {"type": "array", "title": "children per depth", "minItems": 1, "maxItems": MAX_BRANCHING_DEPTHS,
                      "items": {"type": "integer", "minimum": MIN_BRANCHING, "maximum": MAX_BRANCHING},
                      "description": f"Shape distinct only: children a node, per depth (default [drafts, 1, 1, ...]; 1 "
                                     f"past its end); at most {MAX_TREE_NODES} nodes over min(width, limit) depths."},
        "threshold_single": {**_THRESHOLD, "description": "Verify target_only only: a child with p(y) at least this is "
                                                         "accepted (SGLang's lossy threshold below 1; SPEC 12.4)."},
        "threshold_acc": {**_THRESHOLD, "description": "Verify target_only only: a child is accepted when u * "
                                                      "threshold_acc < acc_j (SGLang's lossy threshold below 1; SPEC 12.4)."},
    },
    "additionalProperties": False,
}
"""A config's ``tree`` object (SPEC section 12): its structure and bounds;
:func:`~.tree_settings.parse_tree` reads it exactly and states the refusals."""
CONFIG: dict[str, Any] = {
    "type": "object",
    "description": "Session settings (SPEC section 8). `draft` and `seed` are required; the others take the "
                   "defaults shown.",
    "properties": {
        "target": {**_model("target", BUILTIN_TARGET_NAMES), "default": "toy"},
        "draft": _model("draft", BUILTIN_DRAFT_NAMES),
        "mode": {"type": "string", "enum": list(MODES), "default": "speculative",
                 "description": "speculative (SPEC 4), greedy or autoregressive (SPEC 5), block (SPEC 10), "
                                "tree (SPEC 11)."},
        "width": {"type": "integer", "minimum": MIN_WIDTH, "maximum": MAX_WIDTH, "default": 3,
                  "description": "Draft width: proposals per block."},
        "seed": {"type": "integer", "minimum": 0, "maximum": MAX_SEED,
                 "description": "Seed of the SplitMix64 draw stream (SPEC section 2)."},
        "limit": {"type": "integer", "minimum": MIN_LIMIT, "maximum": MAX_LIMIT, "default": 8,
                  "description": "Output tokens after which the session ends (SPEC 6)."},
        "eos": {**LABEL, "type": ["string", "null"], "default": None,
                "description": "End-of-sequence token of the vocabulary, or null (SPEC 6)."},
        "sampling": SAMPLING,
        "drafts": {"type": "integer", "minimum": MIN_DRAFTS, "maximum": MAX_DRAFTS, "default": 1,
                   "description": "Draft chains per block, D (SPEC 11); only mode tree reads it. Echoed in the "
                                  "session's config when sent or in mode tree."},
        "tree": TREE,
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
COUNTERS: dict[str, Any] = {
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
ANALYSIS: dict[str, Any] = {
    "type": "object",
    "description": "`POST /v1/analysis`: a config and what to compute about it.",
    "properties": {
        "config": {"$ref": "#/$defs/analysis_config"},
        "depth": {"type": "integer", "minimum": MIN_DEPTH, "maximum": MAX_DEPTH,
                  "description": "The output distribution is over the first `depth` committed tokens (default "
                                 "min(limit, 3)). A depth above the config's `limit` is analysed as `limit` (every "
                                 "session ends by then: the same distribution), and `output.depth` reports the depth "
                                 "analysed."},
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


def checker(schema: dict, bounds: dict | None = None) -> Callable[..., None]:
    """A check of values against ``schema`` (compiled once with ``jsonschema_rs``):
    ``check(value, path=())`` returns when ``value`` is valid and otherwise raises
    :class:`InvalidInput` naming each fault (one per field, in the schema's field order) by its
    path under ``path``, with a message written from the schema (:func:`expectation`).

    A refusal costs no more than the check of a valid body: the sizes come first
    (:func:`within_bounds`: an over-long list, an object with too many or unknown names, an
    over-long string is one fault each, counted, and what the schema checks next is cut to its
    bounds), so ``jsonschema_rs`` never walks or writes more than a valid body holds; at most
    :data:`~.errors.MAX_ERRORS` faults are written, the rest counted (``InvalidInput.count``).
    ``bounds`` (default ``schema``) is the schema whose sizes are checked first, where
    ``schema`` leaves a bound to a rule of the engine's that names each fault (a table's rows)."""
    validator = jsonschema_rs.Draft202012Validator(schema)
    bounds = schema if bounds is None else bounds

    def check(value: Any, path: tuple = ()) -> None:
        try:
            if validator.is_valid(value):
                return
        except UnicodeEncodeError:  # a lone surrogate, which jsonschema_rs cannot read
            pass
        except ValueError as error:  # a name that is not a string: only possible in process
            raise InvalidInput.at(path, f"must be JSON: {error}") from None
        bounded = within_bounds(bounds, value, ENGINE_SIZES)
        value = bounded.value
        try:
            try:
                valid = validator.is_valid(value)
            except UnicodeEncodeError:
                value = _encodable(value)
                valid = validator.is_valid(value)
            errors = [] if valid else [(real_path(value, e.instance_path, e.instance), tuple(e.schema_path))
                                       for e in validator.iter_errors(value)]
        except ValueError as error:
            raise InvalidInput.at(path, f"must be JSON: {error}") from None
        if valid and not bounded.faults:
            return
        found = {f.path: f for f in bounded.faults}
        faults = [f for f in _faults(schema, value, errors) if f.path not in found]
        faults = sorted(faults + bounded.faults, key=_field_order(schema))
        raise InvalidInput((Fault(path + f.path, f.message) for f in faults[:MAX_ERRORS]),
                           len(faults) + bounded.more)

    setattr(check, "schema", schema)  # the schema it checks against, for the contract's generator
    return check


# ---------------------------------------------------------------- sizes before anything else


@dataclass
class Bounded:
    """What :func:`within_bounds` found: ``value`` cut to the schema's size bounds, the
    ``faults`` of the sizes beyond them (at most :data:`~.errors.MAX_ERRORS` written) and
    ``more``, those counted but not written."""

    value: Any
    faults: list[Fault] = field(default_factory=list)
    more: int = 0

    def add(self, path: tuple, message: str) -> None:
        """Write the fault (or, past :data:`~.errors.MAX_ERRORS`, count it)."""
        if len(self.faults) < MAX_ERRORS:
            self.faults.append(Fault(path, message))
        else:
            self.more += 1


@dataclass(frozen=True)
class SizeMessages:
    """How :func:`within_bounds` words a fault: ``too_big(keyword, schema, value)`` for a
    ``maxItems``, ``maxProperties`` or ``maxLength`` exceeded; ``unknown(schema, names,
    count)`` for the ``count`` names an object may not hold gives ``(faults, stands_for)``: the
    ``(path suffix, message)`` pairs to write and how many faults they stand for (``names``
    iterates the names in document order: read only as many as are written)."""

    too_big: Callable[[str, dict, Any], str]
    unknown: Callable[[dict, Iterator[str], int], tuple[list[tuple[tuple, str]], int]]


def within_bounds(schema: dict, value: Any, messages: SizeMessages) -> Bounded:
    """``value`` checked for its sizes against ``schema`` before anything walks its elements:
    a list over its ``maxItems``, an object over its ``maxProperties`` or holding names its
    ``additionalProperties: false`` refuses, a string over its ``maxLength`` is a fault (worded
    by ``messages``), and is cut to the bound (its first ``maxItems`` items, its first
    ``maxProperties`` members, its known names, its first ``maxLength`` characters) in the
    returned value, which is then no larger than a valid one: the schema's own check of it
    costs what a valid body's does. The walk follows ``properties``, ``items``,
    ``additionalProperties`` and ``$ref`` (and the one branch of a ``oneOf``/``anyOf`` of
    distinct types), only into parts whose schema bounds a size, and never into an element of
    a container before that container's size is known to be within its bound. Containers are
    copied only where something was cut; ``value`` itself is not changed."""
    bounded = Bounded(value)
    bounded.value = _cut(schema, value, (), _Walk(schema.get("$defs", {}), messages, bounded))
    return bounded


@dataclass(frozen=True)
class _Walk:
    defs: dict
    messages: SizeMessages
    bounded: Bounded


_JSON_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "object": (dict,), "array": (list,), "null": (type(None),), "boolean": (bool,),
               "integer": (int,), "number": (int, float)}


def _resolved(schema: Any, value: Any, defs: dict) -> Any:
    """``schema`` with its ``$ref`` followed and, for a ``oneOf``/``anyOf`` without a type of its
    own, the one branch whose ``type`` fits ``value`` (``None`` when none or several do)."""
    while isinstance(schema, dict) and "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[1]]
    if not isinstance(schema, dict) or "type" in schema:
        return schema
    branches = schema.get("oneOf") or schema.get("anyOf")
    if not branches:
        return schema
    fitting = [b for b in (_resolved(b, value, defs) for b in branches) if isinstance(b, dict) and _fits(b, value)]
    return fitting[0] if len(fitting) == 1 else None


def _fits(schema: dict, value: Any) -> bool:
    """Whether ``value`` is of a ``type`` of ``schema`` (any, without one)."""
    kinds = schema.get("type")
    if kinds is None:
        return True
    for kind in kinds if isinstance(kinds, list) else [kinds]:
        if isinstance(value, _JSON_TYPES[kind]) and (type(value) is not bool or kind == "boolean"):
            return True
    return False


_SIZED: dict[int, bool] = {}


def _sized(schema: Any, defs: dict) -> bool:
    """Whether ``schema`` or a part of it bounds a size (else :func:`_cut` need not walk a
    value of it: a list of numbers is not walked number by number). Remembered by identity
    (the schemas are module constants)."""
    if not isinstance(schema, dict):
        return False
    key = id(schema)
    if key not in _SIZED:
        _SIZED[key] = True  # a cycle (none today) counts as sized
        target = defs.get(schema["$ref"].rsplit("/", 1)[1]) if "$ref" in schema else None
        parts = [target, schema.get("items"), schema.get("additionalProperties"),
                 *schema.get("properties", {}).values(), *schema.get("oneOf", ()), *schema.get("anyOf", ())]
        _SIZED[key] = (any(k in schema for k in ("maxItems", "maxProperties", "maxLength"))
                       or schema.get("additionalProperties") is False or any(_sized(p, defs) for p in parts))
    return _SIZED[key]


def _cut(schema: Any, value: Any, path: tuple, walk: _Walk) -> Any:
    """:func:`within_bounds` at one node: the node cut to its bounds (the same object when
    nothing was cut)."""
    schema = _resolved(schema, value, walk.defs)
    if not isinstance(schema, dict) or not _sized(schema, walk.defs):
        return value
    kind = type(value)
    if kind is str:
        bound = schema.get("maxLength")
        if bound is not None and len(value) > bound:
            walk.bounded.add(path, walk.messages.too_big("maxLength", schema, value))
            return value[:bound]
        return value
    if kind is list:
        return _cut_list(schema, value, path, walk)
    if kind is dict:
        return _cut_object(schema, value, path, walk)
    return value


def _cut_list(schema: dict, value: list, path: tuple, walk: _Walk) -> list:
    bound = schema.get("maxItems")
    if bound is not None and len(value) > bound:
        walk.bounded.add(path, walk.messages.too_big("maxItems", schema, value))
        value = value[:bound]
    items = schema.get("items")
    if not _sized(items, walk.defs):
        return value
    cut = [_cut(items, item, path + (i,), walk) for i, item in enumerate(value)]
    return value if all(a is b for a, b in zip(cut, value)) else cut


def _cut_object(schema: dict, value: dict, path: tuple, walk: _Walk) -> dict:
    original = value
    bound = schema.get("maxProperties")
    if bound is not None and len(value) > bound:
        walk.bounded.add(path, walk.messages.too_big("maxProperties", schema, value))
        value = dict(islice(value.items(), bound))
    known = schema.get("properties", {})
    others = schema.get("additionalProperties", True)
    if others is False:
        unknown = len(value) - len(value.keys() & known.keys())
        if unknown:
            names = (name for name in value if name not in known)
            written, stands_for = walk.messages.unknown(schema, names, unknown)
            for suffix, message in written:
                walk.bounded.add(path + suffix, message)
            walk.bounded.more += stands_for - len(written)
            value = {name: value[name] for name in known if name in value}
    cut = {}
    for name, member in value.items():
        sub = known.get(name, others)
        cut[name] = _cut(sub, member, path + (name,), walk) if isinstance(sub, dict) else member
    return original if len(cut) == len(original) and all(cut[k] is original[k] for k in cut) else cut


def _unknown_fields(schema: dict, names: Iterator[str], count: int) -> tuple[list[tuple[tuple, str]], int]:
    """The engine's wording of unknown names: a fault at each name, the first
    :data:`~.errors.MAX_ERRORS` written."""
    message = _unknown_message(schema)
    return [((name,), message) for name in islice(names, MAX_ERRORS)], count


def _unknown_message(schema: dict) -> str:
    return f"unknown field: the fields are {', '.join(sorted(schema['properties']))}"


def _too_big(keyword: str, schema: dict, value: Any) -> str:
    return _keyword_faults(keyword, schema, (), value)[0].message


ENGINE_SIZES = SizeMessages(_too_big, _unknown_fields)
"""The engine's wording of size faults: the messages of :func:`_keyword_faults`."""


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
    """The faults of ``errors`` (instance path, schema path), one per path, in no particular
    order: a value of the wrong type gets that fault only (nothing about its content). A
    schema's message is written once however many values break it (a table of 8,320 wrong
    entries has two)."""
    errors = list(errors)
    wrong_type = {path for path, where in errors if where[-1] == "type"}
    faults: dict[tuple, Fault] = {}
    expected: dict[tuple, str] = {}
    for path, where in errors:
        keyword, at = where[-1], where[:-1]
        if keyword == "type":
            if at not in expected:
                expected[at] = expectation(_at(schema, at))
            faults[path] = Fault(path, expected[at])
        elif not any(path[:n] in wrong_type for n in range(len(path) + 1)):
            for fault in _keyword_faults(keyword, _at(schema, at), path, _at(payload, path)):
                faults.setdefault(fault.path, fault)
    return list(faults.values())


def _field_order(schema: dict) -> Callable[[Fault], tuple]:
    """The sort key of faults: by the schema's field order, then shallower first."""
    order = {name: i for i, name in enumerate(schema.get("properties", ()))}
    return lambda f: (order.get(f.path[0], len(order)) if f.path else len(order), len(f.path))


def _keyword_faults(keyword: str, schema: dict, path: tuple, value: Any) -> list[Fault]:
    if keyword == "required":
        return [Fault(path + (key,), "is required") for key in schema["required"] if key not in value]
    if keyword == "additionalProperties":
        return [Fault(path + (key,), _unknown_message(schema)) for key in value if key not in schema["properties"]]
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


def real_path(value: Any, path: Iterable, instance: Any = None) -> tuple:
    """``path`` (``jsonschema_rs``'s instance path) with each name as ``value`` holds it.

    ``jsonschema_rs`` hands names over lossily: a name of ASCII digits as an integer
    (``"0"``, ``"00"`` and ``"007"`` as 0, 0 and 7) and an empty name not at all. So each step
    of ``path`` into an object is matched against the object's own names (an integer step
    against every name of digits of that value, and an empty name may take no step), and of
    the paths that match, the first whose value equals the error's ``instance`` is taken (else
    the first match; else the longest prefix that matches, so a fault is never lost).
    """
    steps = list(path)
    found: list[tuple] = []
    fallback: list[tuple] = [()]

    def walk(node: Any, i: int, real: tuple) -> None:
        if len(found) >= _PATH_CANDIDATES:
            return
        if len(real) > len(fallback[0]):
            fallback[0] = real
        if i == len(steps):
            found.append(real)
        if isinstance(node, dict):
            if "" in node:
                walk(node[""], i, real + ("",))
            if i < len(steps):
                for key in _matching_names(node, steps[i]):
                    walk(node[key], i + 1, real + (key,))
        elif isinstance(node, list) and i < len(steps) and type(steps[i]) is int and 0 <= steps[i] < len(node):
            walk(node[steps[i]], i + 1, real + (steps[i],))

    walk(value, 0, ())
    if not found:
        return fallback[0]
    return next((real for real in found if _value_at(value, real) == instance), found[0])


_PATH_CANDIDATES = 64
"""The most matching paths :func:`real_path` collects for one error."""


def _matching_names(node: dict, step: Any) -> list:
    if type(step) is not int:
        return [step] if step in node else []
    return [key for key in node if isinstance(key, str) and key.isascii() and key.isdigit() and int(key) == step] \
        or ([step] if step in node else [])


def _value_at(node: Any, path: tuple) -> Any:
    for key in path:
        node = node[key]
    return node


def _at(node: Any, path: tuple) -> Any:
    for key in path:
        node = node[int(key) if isinstance(node, list) else key]
    return node


def _number(value: int) -> str:
    return "2^53-1" if value == MAX_SAFE_INTEGER else str(value)


def expectation(schema: dict) -> str:
    """What a value of ``schema`` must be, in words written from its keywords: ``"must be an
    integer from 1 to 4"``, ``"must be a number between 0 and 1 (exclusive)"``, ``"must be a
    number from 0 to 1"``, ``"must be one of speculative, greedy, autoregressive, block"``, ``"must be
    a list of 1 to 1000000 sampled outputs"`` (its ``title``), ``"must be an object with prefix
    and count"`` (its required fields), ``"... or null"``."""
    if "enum" in schema:
        return "must be one of " + ", ".join(map(str, schema["enum"]))
    types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    kind = next(t for t in types if t != "null")
    if kind == "integer":
        text = f"an integer from {_number(schema['minimum'])} to {_number(schema['maximum'])}"
    elif kind == "number":
        text = _number_range(schema)
    elif kind == "array":
        text = f"a list of {schema['minItems']} to {schema['maxItems']} {schema['title']}"
    elif kind == "string":
        text = f"a string of {schema['minLength']} to {schema['maxLength']} characters"
    else:
        names = list(schema.get("required", ()))
        if "oneOf" in schema:
            names.append(" or ".join(branch["required"][0] for branch in schema["oneOf"]))
        optional = _optional_fields(schema) if not names else []
        text = "an object" + (" with " + " and ".join(filter(None, [", ".join(names[:-1]), names[-1]])) if names else "")
        if optional:
            text += " with any of " + " and ".join([", ".join(optional[:-1]), optional[-1]])
    return f"must be {text}" + (" or null" if "null" in types else "")


def _optional_fields(schema: dict) -> list[str]:
    """The fields of an object whose fields are all optional and listed (no other name allowed),
    when there are at most five (a ``sampling`` object's), for :func:`expectation`."""
    known = list(schema.get("properties", ()))
    return known if schema.get("additionalProperties") is False and 0 < len(known) <= 5 else []


def _number_range(schema: dict) -> str:
    """The range of a number schema in words: ``"a number from 0 to 1"``, ``"a number above 0
    and at most 1"``, ``"a number between 0 and 1 (exclusive)"``, and a first ``anyOf`` branch
    that is a ``const`` as an alternative: ``"0 or a number from 0.05 to 20"``."""
    branches = schema.get("anyOf", ())
    const = next((b["const"] for b in branches if "const" in b), None)
    low = next((b["minimum"] for b in branches if "minimum" in b), schema.get("minimum"))
    if low is not None:
        text = f"a number from {_decimal(low)} to {_decimal(schema['maximum'])}"
    elif "maximum" in schema:
        text = f"a number above {schema['exclusiveMinimum']} and at most {schema['maximum']}"
    else:
        text = f"a number between {schema['exclusiveMinimum']} and {schema['exclusiveMaximum']} (exclusive)"
    return text if const is None else f"{const} or {text}"


def _decimal(x) -> str:
    """A bound as written: ``0.05``, ``20`` (an integral float as an integer)."""
    return str(int(x)) if isinstance(x, float) and x.is_integer() else str(x)


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
