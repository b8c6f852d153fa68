"""What a grade reads (a batch of traces, a distribution's samples or counts, sampled sessions),
stated once as JSON Schema and checked from them.

:data:`DISTRIBUTION_REQUEST` (JSON Schema draft 2020-12, plain data) is the one statement of
what :func:`~specdec_service.grading.grade_distribution` and ``POST /v1/grade/distribution``
take: the fields, their types and bounds (read from :mod:`specdec_service.engine.bounds`),
which are required, that no other field is allowed, and that exactly one of ``samples`` and
``counts`` is given. Both ends read it:

- the parser: :func:`check_request` validates a body's top level with ``jsonschema_rs``
  (well under a microsecond for a valid body) against the schema *without* the per-entry
  ``items`` of ``samples`` and ``counts`` (:data:`TOP_LEVEL`); up to 10^6 samples or 10^5
  count entries are checked one by one in the loop that counts them
  (:mod:`.distribution`), with the bounds of the same ``engine.bounds`` constants and the
  messages of :func:`expectation` over the same entry schemas (:data:`SAMPLE`,
  :data:`PREFIX_COUNT`), so an entry costs no second pass;
- the contract: ``api/grading.py`` publishes the whole schema as the ``DistributionIn``
  component (``$defs/prefix_count`` as ``PrefixCountIn``, ``$defs/config`` as the sessions'
  ``ConfigIn``, whose rules the engine's ``parse_config`` applies).

A fault is an :class:`~specdec_service.engine.InvalidInput` naming each bad field by its
path, with a message written from the schema's own keywords (:func:`expectation`), so a bound
is never restated in prose; :func:`checker` and :func:`expectation` are the engine's
(:mod:`specdec_service.engine.inputs`, where the sessions' bodies are stated the same way). ``tests/test_distribution_contract.py`` proves that the published
contract and this parser accept the same bodies.

:data:`GRADE_BATCH` states a batch of traces (``{"traces": [...]}``, ``POST /v1/grade``) the same
way: :func:`check_batch` checks its top level, ``validate_trace`` each trace, and the contract's
``GradeBatchIn`` is produced from it.

No Flask and no marshmallow here: the grading package is usable in process.
"""

from __future__ import annotations

import copy

from ..engine import COUNTER_NAMES
from ..engine.inputs import checker, expectation  # noqa: F401  (expectation: the entries' messages)
from ..engine.bounds import (
    MAX_CELLS, MAX_COUNTER, MAX_LABEL, MAX_LIMIT, MAX_M, MAX_SAMPLES, MAX_TRACES, MIN_LABEL,
)

DEFAULT_ALPHA = 0.001
"""Default pass threshold: a submission passes iff the p-value exceeds it. A correct sampler
fails with probability alpha (1 in 1000)."""
MAX_OUTPUT = MAX_LIMIT + 1
"""Tokens of one sampled output at most: a session's longest output, plus one so that a faulty
sampler's bonus past the limit is graded (only its first ``m`` tokens count), not refused."""

TOKEN = {"type": "string", "minLength": MIN_LABEL, "maxLength": MAX_LABEL,
         "description": "A token label of the config's vocabulary."}
SAMPLE = {"type": "array", "title": "token labels", "minItems": 1, "maxItems": MAX_OUTPUT, "items": TOKEN,
          "description": "One sampled output: at least min(m, limit) tokens, unless it ends in the EOS token."}
PREFIX_COUNT = {
    "type": "object",
    "description": "How many sampled outputs start with `prefix`: min(m, limit) tokens, or fewer ending in EOS.",
    "properties": {
        "prefix": {"type": "array", "title": "token labels", "minItems": 1, "maxItems": MAX_M, "items": TOKEN},
        "count": {"type": "integer", "minimum": 0, "maximum": MAX_SAMPLES},
    },
    "required": ["prefix", "count"],
    "additionalProperties": False,
}
DISTRIBUTION_REQUEST: dict = {
    "$defs": {
        "config": {"type": "object", "description": "Session settings (SPEC section 8), read by the engine's "
                                                    "parse_config; `seed` may be left out (the exact "
                                                    "distribution does not depend on it)."},
        "prefix_count": PREFIX_COUNT,
    },
    "type": "object",
    "description": "Settings and either sampled outputs or prefix counts.",
    "properties": {
        "config": {"$ref": "#/$defs/config",
                   "description": "The settings the outputs were sampled with: mode speculative or autoregressive."},
        "m": {"type": "integer", "minimum": 1, "maximum": MAX_M,
              "description": "Length of the output prefixes compared."},
        "samples": {"type": "array", "title": "sampled outputs", "minItems": 1, "maxItems": MAX_SAMPLES,
                    "items": SAMPLE,
                    "description": "Sampled outputs (each at least m tokens, unless it ends in EOS or the limit "
                                   "is below m)."},
        "counts": {"type": "array", "title": "prefix counts", "minItems": 1, "maxItems": MAX_CELLS,
                   "items": {"$ref": "#/$defs/prefix_count"},
                   "description": "Counts of output prefixes of length min(m, limit) (shorter when ending in "
                                  "EOS); each prefix once, summing to 1 to 10^6."},
        "counters": {
            "type": ["object", "null"],
            "description": "Counters summed over every sample (SPEC section 7); `accepted` (at most "
                           "`draft_steps`) and `draft_steps` are required.",
            "properties": {name: {"type": "integer", "minimum": 0, "maximum": MAX_COUNTER} for name in COUNTER_NAMES},
            "required": ["accepted", "draft_steps"],
            "additionalProperties": False,
        },
        "alpha": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1, "default": DEFAULT_ALPHA,
                  "description": "The pass threshold of the p-value."},
    },
    "required": ["config", "m"],
    "oneOf": [{"required": ["samples"]}, {"required": ["counts"]}],
    "additionalProperties": False,
}
"""The body of a distribution grade (see the module docstring)."""
SAMPLES_REQUEST: dict = {
    "$defs": {
        "config": {"type": "object", "description": "Session settings (SPEC section 8), read by the engine's "
                                                    "parse_config; `draft` and `seed` may be left out."},
    },
    "type": "object",
    "description": "Settings and whole sampled sessions (POST /v1/grade/samples).",
    "properties": {
        "config": {"$ref": "#/$defs/config",
                   "description": "The settings the sessions were sampled with: mode speculative or autoregressive; "
                                  "`draft` only to name a catalogued mistake or for the acceptance rate."},
        "samples": {"type": "array", "title": "sampled sessions", "minItems": 1, "maxItems": MAX_SAMPLES,
                    "items": {**SAMPLE, "description": "One whole session's committed output: limit tokens, or "
                                                       "fewer ending in the EOS token."},
                    "description": "Whole sampled sessions, one list of token labels each."},
        "counters": {
            "type": ["object", "null"],
            "description": "Asks for the acceptance rate: counters summed over every sample (SPEC section 7); "
                           "`accepted` (at most `draft_steps`) and `draft_steps` are required, and so is config.draft.",
            "properties": {name: {"type": "integer", "minimum": 0, "maximum": MAX_COUNTER} for name in COUNTER_NAMES},
            "required": ["accepted", "draft_steps"],
            "additionalProperties": False,
        },
        "alpha": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1, "default": DEFAULT_ALPHA,
                  "description": "The family-wise error rate (Holm over every test)."},
    },
    "required": ["config", "samples"],
    "additionalProperties": False,
}
"""The body of a sample grade (``POST /v1/grade/samples``, :func:`~specdec_service.grading.samples.grade_samples`)."""
GRADE_BATCH: dict = {
    "$defs": {"trace": {"description": "A `specdec-trace/1` trace, checked by validate_trace."}},
    "type": "object",
    "description": f"A batch of 1 to {MAX_TRACES} traces to grade.",
    "properties": {"traces": {"type": "array", "title": "traces", "minItems": 1, "maxItems": MAX_TRACES,
                              "items": {"$ref": "#/$defs/trace"}}},
    "required": ["traces"],
    "additionalProperties": False,
}
"""The body of ``POST /v1/grade`` with a batch, ``{"traces": [...]}``; each trace is checked by
:func:`~specdec_service.grading.validate_trace` (the contract's ``GradeTraceIn``)."""


def _without_items(schema: dict, *fields: str) -> dict:
    """``schema`` without the per-entry ``items`` of its array ``fields``."""
    top = copy.deepcopy(schema)
    for key in fields:
        top["properties"][key].pop("items")
    return top


TOP_LEVEL = _without_items(DISTRIBUTION_REQUEST, "samples", "counts")
"""What :func:`check_request` validates: :data:`DISTRIBUTION_REQUEST` less the entries' ``items``."""
check_request = checker(TOP_LEVEL)
"""The top-level check of a distribution request (``check_request(payload)``)."""
check_samples_request = checker(_without_items(SAMPLES_REQUEST, "samples"))
"""The top-level check of a sample grade request."""
check_sample = checker(SAMPLE)
"""The check of one sampled output (``check_sample(sample, ("samples", i))``)."""
check_prefix_count = checker(PREFIX_COUNT)
"""The check of one count entry (``check_prefix_count(entry, ("counts", i))``)."""
check_batch = checker(_without_items(GRADE_BATCH, "traces"))
"""The top-level check of a batch of traces (``check_batch({"traces": [...]})``); the traces
themselves are validated one by one by the grader."""
