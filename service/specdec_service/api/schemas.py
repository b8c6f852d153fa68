"""Marshmallow schemas of the response bodies and the query string of the API.

The request bodies the engine reads (state, config, model table, verify, run, analysis) are
not here: each is stated once as JSON Schema in :mod:`specdec_service.engine.inputs`, which
the engine's parsers check and from which the contract's ``*In`` components are produced
(:func:`.trace_components.request_components`). ``DrawsQuery`` checks ``GET /v1/draws``' query.

Response schemas (``*Out``) describe what the engine returns, field by field,
for the OpenAPI document; the parts of a trace (block, config, counters,
draws, ...) are references to the trace format's components, produced from
``engine/trace.schema.json`` (:mod:`.trace_components`); the service does not re-dump engine dicts through
them at run time (schemathesis' response-conformance check proves the served
bodies match).

Bounds come from :mod:`specdec_service.engine.bounds`, the one home of every
input bound, which the engine's parsers read too, so the document and the
rules cannot drift (``tests/test_bounds.py``).
"""

from __future__ import annotations

from marshmallow import RAISE, Schema, fields, validate

from ..engine import MODES
from ..engine.bounds import (
    MAX_COUNTER, MAX_DRAWS_SLICE, MAX_LABEL, MAX_LIMIT, MAX_POSITION, MAX_SEED, MAX_VOCAB, MAX_WIDTH, MIN_LABEL,
    MIN_LIMIT, MIN_VOCAB, MIN_WIDTH, MAX_DRAFTS, MIN_DRAFTS, MAX_TEMPERATURE, MAX_TOP_K, MIN_TOP_K, MAX_BRANCHING,
    MAX_BRANCHING_DEPTHS, MIN_BRANCHING,
)
from ..engine.models import BUILTIN_DRAFTS, BUILTIN_TARGETS
from .trace_components import TraceRef



class StrictSchema(Schema):
    """Base of every schema: unknown fields are an error (documented as
    ``additionalProperties: false``)."""

    class Meta:
        unknown = RAISE


# ---------------------------------------------------------------- fields


def Label(**kwargs) -> fields.String:
    """A token label: a string of 1-16 characters (SPEC section 1)."""
    return fields.String(validate=validate.Length(MIN_LABEL, MAX_LABEL), **kwargs)


def Probabilities(**kwargs) -> fields.List:
    """A distribution in vocabulary order as the engine returns it: each
    probability the nearest float64 of an exact rational in [0, 1]."""
    return fields.List(fields.Float(validate=validate.Range(0, 1)), required=True, **kwargs)


class QueryInteger(fields.Integer):
    """An integer query parameter written as plain ASCII decimal digits.

    Python's ``int`` (which marshmallow's ``Integer`` calls) also accepts
    ``1_0``, ``+1``, surrounding whitespace and non-ASCII digits (full-width
    ``１``, Arabic-Indic ``١``); the contract's parameters are plain
    integers, so only ``[0-9]+`` is read, with an optional leading ``-`` so
    a negative value gets the field's range error. Anything else is a 422
    naming the parameter (documented as ``type: integer``). ``low`` and ``high`` bound it; the
    errors are worded as the request bodies' (``must be an integer from 0 to 2^53-1``, ``is
    required``), ``shown`` naming ``high`` when a formula says it better than its digits.
    """

    def __init__(self, low: int, high: int, shown: str = "", **kwargs):
        bound = f"must be an integer from {low} to {shown or high}"
        super().__init__(validate=validate.Range(low, high, error=bound), **kwargs)
        self.error_messages.update({"invalid": f"{bound}, written with the ASCII digits 0-9 only",
                                    "required": "is required"})

    def _deserialize(self, value, attr, data, **kwargs):
        digits = value[1:] if isinstance(value, str) and value.startswith("-") else value
        if not (isinstance(digits, str) and 0 < len(digits) <= QUERY_DIGITS and digits.isascii() and digits.isdigit()):
            raise self.make_error("invalid")
        return super()._deserialize(value, attr, data, **kwargs)


QUERY_DIGITS = 32
"""At most this many digits in an integer query parameter (every bound is below 2^53, 16 digits)."""


def Count(**kwargs) -> fields.Integer:
    """A non-negative integer of at most 2^53-1 (safe in every JSON parser)."""
    return fields.Integer(strict=True, validate=validate.Range(0, MAX_COUNTER), **kwargs)


class DrawsQuery(StrictSchema):
    """``GET /v1/draws`` query: ``count`` draws of ``seed`` from ``position``."""

    error_messages = {"unknown": "unknown field: the fields are count, position, seed"}

    seed = QueryInteger(0, MAX_SEED, "2^53-1", required=True, metadata={"description": "Seed of the draw stream."})
    position = QueryInteger(0, MAX_POSITION, "2^53-1", load_default=0,
                            metadata={"description": "Index of the first draw (position + count - 1 <= 2^53-1)."})
    count = QueryInteger(1, MAX_DRAWS_SLICE, load_default=1, metadata={"description": "How many draws."})


# ---------------------------------------------------------------- responses


class HealthOut(StrictSchema):
    """Liveness."""

    status = fields.String(required=True, validate=validate.OneOf(["ok"]))
    version = fields.String(required=True, metadata={"description": "The service version."})


class ModelTableOut(StrictSchema):
    """A model table with each probability as the nearest float64."""

    vocab = fields.List(Label(), required=True, validate=validate.Length(MIN_VOCAB, MAX_VOCAB))
    start = Probabilities()
    next = fields.Dict(keys=Label(), values=fields.List(fields.Float(validate=validate.Range(0, 1))), required=True)


class BuiltinModelOut(ModelTableOut):
    """A built-in model (SPEC section 1 table)."""

    name = fields.String(required=True, validate=validate.OneOf([*BUILTIN_TARGETS, *BUILTIN_DRAFTS]))
    role = fields.String(required=True, validate=validate.OneOf(["target", "draft"]))


class ModelsOut(StrictSchema):
    """``GET /v1/models``."""

    models = fields.List(fields.Nested(BuiltinModelOut), required=True)


class DrawsOut(StrictSchema):
    """``GET /v1/draws``: draws as a trace records them (``TraceDraw``)."""

    draws = fields.List(TraceRef("draw"), required=True)


# Counters and a config as the analysis of POST /v1/analysis reports them (its
# expected counters are floats, its config has no seed): the trace's own
# counters and config are the TraceCounters and TraceConfig components.


class CountersOut(StrictSchema):
    """Work counters (SPEC section 7)."""

    target_passes = Count(required=True)
    draft_steps = Count(required=True)
    accepted = Count(required=True)
    rejected = Count(required=True)
    discarded = Count(required=True)
    bonus_tokens = Count(required=True)
    committed = Count(required=True)
    draws = Count(required=True)


class ModelOutField(fields.Field):
    """A model in a returned config: its built-in name or the custom table."""


def _model_out_doc(role: str, names) -> dict:
    return {
        "description": f"The {role} model: its built-in name, or the custom table as sent (numbers as float64).",
        "oneOf": [{"type": "string", "enum": sorted(names)}, {"$ref": "#/components/schemas/ModelTableOut"}],
    }


class SamplingOut(StrictSchema):
    """The sampling parameters of a config (SPEC section 9), echoed as sent (each number as
    float64): any of these fields."""

    temperature = fields.Float(validate=validate.Range(0, MAX_TEMPERATURE), metadata={
        "description": "T: 0 or 0.05 to 20."})
    top_k = fields.Integer(validate=validate.Range(MIN_TOP_K, MAX_TOP_K))
    top_p = fields.Float(validate=validate.Range(0, 1, min_inclusive=False))
    min_p = fields.Float(validate=validate.Range(0, 1))
    draft = fields.String(validate=validate.OneOf(["processed", "raw"]))


class TreeOut(StrictSchema):
    """The draft tree's shape and verifier of a config in mode tree (SPEC section 12), echoed as
    sent (each number as float64): any of these fields."""

    shape = fields.String(validate=validate.OneOf(["chains", "distinct", "beam"]))
    verify = fields.String(validate=validate.OneOf(["residual", "target_only"]))
    branching = fields.List(fields.Integer(validate=validate.Range(MIN_BRANCHING, MAX_BRANCHING)),
                            validate=validate.Length(1, MAX_BRANCHING_DEPTHS))
    threshold_single = fields.Float(validate=validate.Range(0, 1, min_inclusive=False))
    threshold_acc = fields.Float(validate=validate.Range(0, 1, min_inclusive=False))


class ConfigOut(StrictSchema):
    """Session settings with every default filled in."""

    target = ModelOutField(required=True, metadata=_model_out_doc("target", BUILTIN_TARGETS))
    draft = ModelOutField(required=True, metadata=_model_out_doc("draft", BUILTIN_DRAFTS))
    mode = fields.String(required=True, validate=validate.OneOf(MODES))
    width = fields.Integer(required=True, validate=validate.Range(MIN_WIDTH, MAX_WIDTH))
    seed = fields.Integer(required=True, validate=validate.Range(0, MAX_SEED))
    limit = fields.Integer(required=True, validate=validate.Range(MIN_LIMIT, MAX_LIMIT))
    eos = Label(required=True, allow_none=True)
    sampling = fields.Nested(SamplingOut, metadata={
        "description": "The sampling parameters (SPEC 9): present only when the caller sent them, as sent."})
    drafts = fields.Integer(validate=validate.Range(MIN_DRAFTS, MAX_DRAFTS), metadata={
        "description": "Draft chains per block (SPEC 11): present in mode tree and whenever the caller sent it."})
    tree = fields.Nested(TreeOut, metadata={
        "description": "The draft tree's shape and verifier (SPEC 12): present only when the caller sent it, as sent."})


class StateOut(StrictSchema):
    """The next session state: send it back unchanged for the next block
    (its parts are the trace format's)."""

    config = TraceRef("config", required=True)
    committed = TraceRef("tokens", required=True)
    position = fields.Integer(required=True, validate=validate.Range(0, MAX_POSITION))
    counters = TraceRef("counters", required=True)


class StepOut(StrictSchema):
    """``POST /v1/step`` and ``POST /v1/verify``: the committed block (as in a
    trace), the next state and whether the session is done."""

    block = TraceRef("block", required=True)
    state = fields.Nested(StateOut, required=True)
    done = TraceRef("done", required=True)


class ErrorItemOut(StrictSchema):
    """One bad field of a request."""

    pointer = fields.String(metadata={
        "description": "RFC 6901 JSON Pointer (as a URI fragment) into the request body, e.g. `#/config/width`."})
    parameter = fields.String(metadata={"description": "The bad query parameter, for GET /v1/draws."})
    detail = fields.String(required=True, metadata={"description": "Why the value is invalid."})


class ProblemOut(StrictSchema):
    """An RFC 9457 problem document (``application/problem+json``)."""

    type = fields.String(required=True, metadata={"description": "A URI that identifies the problem type."})
    title = fields.String(required=True, metadata={"description": "A short summary of the problem type."})
    status = fields.Integer(required=True, validate=validate.Range(400, 599))
    detail = fields.String(required=True, metadata={"description": "What went wrong with this request."})
    errors = fields.List(fields.Nested(ErrorItemOut), metadata={
        "description": "For 422: each bad field (body pointer or query parameter) and why; for a 400, the "
                       "repeated name, the string with a lone surrogate, the container nested past the bound or the "
                       "number literal beyond it (body pointer)."})
    error_count = fields.Integer(validate=validate.Range(1), metadata={
        "description": "With `errors`: how many faults were found in all. At most 20 are listed in `errors` (the "
                       "first ones; `detail` then says \"the first 20 of N shown\"), and a problem document is at most "
                       "64 KiB: a long detail, pointer or message is cut, ending in `...` (docs/service.md)."})
    cost = fields.Integer(metadata={"description": "For an over-budget 422: what the request would cost, in `unit`."})
    budget = fields.Integer(metadata={"description": "For an over-budget 422: the most a request of this route may cost."})
    unit = fields.String(metadata={"description": "For an over-budget 422: the unit of `cost` and `budget` (docs/service.md)."})
    request_id = fields.String(metadata={"description": "For a compute-deadline 503: the request's `X-Request-Id`, which "
                                                        "names it in the service's logs."})
    cpu_deadline_seconds = fields.Float(metadata={"description": "For a compute-deadline 503 at the CPU deadline: the "
                                                                 "seconds of CPU time a request may use (docs/deploy.md)."})
    wall_deadline_seconds = fields.Float(metadata={"description": "For a compute-deadline 503 at the wall-clock deadline: "
                                                                  "the seconds a request may take (docs/deploy.md)."})
    hint = fields.String(metadata={"description": "For a compute-deadline 503: what to make smaller."})


