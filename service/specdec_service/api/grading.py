"""``POST /v1/grade`` and ``POST /v1/grade/distribution``: grading student implementations.

Thin HTTP layer over :mod:`specdec_service.grading` (``docs/grading.md``):

- ``POST /v1/grade``: one ``specdec-trace/1`` trace, or ``{"traces": [...]}`` with 1-1000 of
  them; a report per trace (``passed``, ``score``, ``checks``, ``first_divergence``,
  ``diagnosis``). A malformed trace (not matching the trace JSON Schema, or an invalid config)
  is a 422 whose ``errors`` point into the body (``#/traces/<i>/...`` in a batch, where one
  malformed trace refuses the whole batch).
- ``POST /v1/grade/distribution``: settings plus sampled outputs or prefix counts (at most
  10^6 samples), graded against the exact target distribution (chi-square, total variation).
  Its body is stated once, in the grading package (``DISTRIBUTION_REQUEST``, JSON Schema):
  ``grade_distribution`` checks it, and its contract components are produced from it
  (:func:`body_components`), so the view only reads the JSON and passes it on.

Body size: these routes accept bodies up to :data:`GRADE_MAX_BODY_BYTES` (8 MiB), above the
service's 256 KiB default, so that long traces fit; a larger body is a 413. Bytes do not bound
the work (1000 traces without blocks, each of a distinct limit-256 config, need 1000 reference
runs), so each route also has a work budget (:mod:`specdec_service.budget`, docs/service.md),
checked before the work: an over-budget request is a 422 problem of type ``over-budget`` naming
the cost, the budget and how to split the request.

Numbers: unlike the other routes, the body is parsed with JSON floats as float64, not
Decimal. A trace echoes its config with every probability as the nearest float64 (the engine
publishes them so), and the engine reads a float through its shortest repr, so nothing is lost;
parsing floats lets a correct trace be recognised as equal to its reference with one ``==``
(``grading.grader._is_reference``), without a field-by-field comparison. Both routes read, grade and write with the cyclic garbage collector paused
(:func:`cycle_collection_paused`).
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Any, Iterator

from marshmallow import fields, validate

from ..engine import COUNTER_NAMES, parse_config, run
from ..engine.bounds import MAX_CELLS, MAX_M, MAX_SAMPLES, MAX_TRACES
from ..grading import BY_ID, CHECKS, DEFAULT_ALPHA, DISTRIBUTION_REQUEST, GRADE_BATCH, TOLERANCE
from ..grading import SAMPLES_REQUEST, check_batch, faulty_run, grade, grade_distribution, grade_many
from ..grading import grade_samples as grade_sessions_of
from ..grading.distribution import POOLED
from ..grading.suites import EXERCISES, FAMILIES, UnknownSuite, published, suite, suites
from ..grading.validate import grading_schema
from .bodies import read_json
from .problems import PROBLEM_MIMETYPE, ApiProblem, json_response
from .routes import ApiBlueprint, example
from .schemas import Label, StrictSchema
from .trace_components import TraceRef, components_of_defs, variant_components

GRADE_MAX_BODY_BYTES = 8 * 1024 * 1024
"""The largest body of the grading routes (8 MiB); larger is a 413 problem."""

blueprint = ApiBlueprint("grading", __name__, tag="grading",
                         description="Grading student implementations against the reference traces (docs/grading.md).")


# ---------------------------------------------------------------- body


def read_grading_json() -> Any:
    """The body as JSON with numbers as float64 (see the module docstring; the reading of
    :data:`.bodies.BODY_RULES`) under the one JSON rule of every route (:func:`.bodies.parse_json`;
    a number beyond float64 is a 422).

    The configs (:func:`config_paths`) are read as every other route reads a config, each
    number as the decimal written (SPEC section 8; ``1e-400`` is no temperature 0 here either):
    :func:`.bodies.read_json` reads them exactly when a literal of theirs may be one the float64
    rounds, and ``parse_config`` refuses it as on ``POST /v1/runs``.

    Raises :class:`ApiProblem`: 415 (not ``application/json``, a charset other than utf-8),
    413 (larger than :data:`GRADE_MAX_BODY_BYTES`), 400 (not UTF-8 JSON, a repeated name, a
    lone surrogate, ...), 422 (a number beyond float64).
    """
    return read_json(max_bytes=GRADE_MAX_BODY_BYTES, exact_at=config_paths)


def config_paths(body: Any) -> list[tuple]:
    """The paths of the session configs of a grading body: ``("config",)`` of a trace, a
    distribution or a samples body; ``("traces", i, "config")`` of each trace of a batch
    (as :func:`_graded` tells a batch from a trace)."""
    if not isinstance(body, dict):
        return []
    traces = body.get("traces")
    if "traces" in body and "format" not in body:
        if not isinstance(traces, list):
            return []
        return [("traces", i, "config") for i, trace in enumerate(traces) if isinstance(trace, dict) and "config" in trace]
    return [("config",)] if "config" in body else []


# ---------------------------------------------------------------- schemas


def trace_in_components() -> dict[str, dict]:
    """``GradeTraceIn`` (a submitted trace) and the parts where it differs from the ``Trace``
    format (``GradeTraceBlockIn``, ...), produced from the one schema ``validate_trace`` checks
    (:func:`~specdec_service.grading.validate.grading_schema`: the trace schema relaxed so that a
    wrong value is graded, not refused); the unchanged parts are the trace's own components."""
    return variant_components(grading_schema(), "GradeTraceIn", "GradeTrace")


class CheckOut(StrictSchema):
    """One named check of a grade (partial credit)."""

    name = fields.String(required=True, validate=validate.OneOf(CHECKS))
    passed = fields.Boolean(required=True)
    blocks = fields.List(fields.Integer(), required=True, metadata={"description": "The blocks where it fails."})
    trace = fields.Boolean(required=True, metadata={"description": "Whether it fails on a trace-level field (output, counters, position, done, config)."})
    first_failure = fields.Nested("FailureOut", required=True, allow_none=True)
    rule = fields.String(required=True, metadata={"description": "The rule checked and its SPEC section."})


class FailureOut(StrictSchema):
    """Where a check first fails."""

    pointer = fields.String(required=True)
    detail = fields.String(required=True)
    explanation = fields.String(required=True, metadata={"description": "The check's rule in one sentence of plain words, for the student."})


class DivergenceOut(StrictSchema):
    """The first field where a submitted trace differs from the reference."""

    block = fields.Integer(required=True, allow_none=True, metadata={"description": "Index of the block, or null outside the blocks."})
    path = fields.String(required=True, metadata={"description": "JSON Pointer into the submitted trace."})
    expected = fields.Raw(required=True, allow_none=True, metadata={"description": "The reference's value (null when absent)."})
    got = fields.Raw(required=True, allow_none=True, metadata={"description": "The submission's value (null when absent)."})
    kind = fields.String(required=True, validate=validate.OneOf(["value", "type", "missing", "unexpected"]))
    check = fields.String(required=True, validate=validate.OneOf(CHECKS))
    rule = fields.String(required=True, metadata={"description": "The rule broken, with its SPEC section."})
    explanation = fields.String(required=True, metadata={"description": "The same rule in one sentence of plain words, for the student."})


class AgreementOut(StrictSchema):
    blocks = fields.Integer(required=True, metadata={"description": "Blocks that agree in full."})
    first_divergence = fields.String(required=True, allow_none=True)


class DiagnosisOut(StrictSchema):
    """A catalogued mistake that explains the submission."""

    id = fields.String(required=True)
    title = fields.String(required=True)
    rule = fields.String(required=True)
    hint = fields.String(required=True)
    exact = fields.Boolean(required=True, metadata={"description": "Whether the mistake reproduces the whole trace."})
    agreement = fields.Nested(AgreementOut, required=True)


class ReferenceOut(StrictSchema):
    output = fields.List(Label(), required=True)
    position = fields.Integer(required=True)
    blocks = fields.Integer(required=True)
    done = fields.String(required=True)


class GradeReportOut(StrictSchema):
    """The grade of one trace."""

    passed = fields.Boolean(required=True, metadata={"description": "The trace equals the reference (probabilities within tolerance)."})
    score = fields.Float(required=True, validate=validate.Range(0, 1), metadata={"description": "Share of the checks that hold."})
    checks = fields.List(fields.Nested(CheckOut), required=True)
    tolerance = fields.Float(required=True, metadata={"description": "Absolute tolerance of probabilities (1e-9)."})
    first_divergence = fields.Nested(DivergenceOut, required=True, allow_none=True)
    diagnosis = fields.List(fields.Nested(DiagnosisOut), required=True)
    reference = fields.Nested(ReferenceOut, required=True)


class SummaryOut(StrictSchema):
    count = fields.Integer(required=True)
    passed = fields.Integer(required=True)
    failed = fields.Integer(required=True)
    mean_score = fields.Float(required=True)


class GradeBatchOut(StrictSchema):
    """The grades of a batch, in request order."""

    reports = fields.List(fields.Nested(GradeReportOut), required=True)
    summary = fields.Nested(SummaryOut, required=True)


_VERSION = {"description": "The suite's version (1, 2, ...): a change of configs is a new version; `name@version` "
                           "means that version for ever."}
_COVERS = {"description": "The rule families its configs and guarantees belong to: `core` (SPEC 1-8), `sampling` "
                          "(SPEC 9), `block` (SPEC 10), `tree` (SPEC 11)."}


class SuiteSummaryOut(StrictSchema):
    name = fields.String(required=True)
    version = fields.Integer(required=True, metadata=_VERSION)
    versions = fields.List(fields.Integer(), required=True, metadata={"description": "Every published version of the suite."})
    covers = fields.List(fields.String(validate=validate.OneOf(list(FAMILIES))), required=True, metadata=_COVERS)
    description = fields.String(required=True)
    count = fields.Integer(required=True, metadata={"description": "How many configs the suite has."})


class SuitesOut(StrictSchema):
    """The assignment suites."""

    suites = fields.List(fields.Nested(SuiteSummaryOut), required=True)


class SuiteConfigOut(StrictSchema):
    """One config of a suite: a student's program gets ``config`` and must print its trace."""

    id = fields.String(required=True, metadata={"description": "Unique in the suite (model, mode, width, seed, limit)."})
    config = TraceRef("config", required=True, metadata={"description": "Every setting, defaults filled in, as the trace echoes it."})
    exercises = fields.List(fields.String(validate=validate.OneOf(list(EXERCISES))), required=True,
                            metadata={"description": "The SPEC rules its reference trace exercises (docs/grading.md)."})


class SuiteOut(StrictSchema):
    """An assignment suite (docs/grading.md, Assignment suites)."""

    name = fields.String(required=True)
    version = fields.Integer(required=True, metadata=_VERSION)
    covers = fields.List(fields.String(validate=validate.OneOf(list(FAMILIES))), required=True, metadata=_COVERS)
    description = fields.String(required=True)
    configs = fields.List(fields.Nested(SuiteConfigOut), required=True)


DEFS_COMPONENTS = {"config": "ConfigIn", "prefix_count": "PrefixCountIn", "trace": "GradeTraceIn"}
"""The component of each ``$defs`` entry of the grading bodies' schemas
(:data:`~specdec_service.grading.DISTRIBUTION_REQUEST`, :data:`~specdec_service.grading.GRADE_BATCH`):
the config is the sessions' ``ConfigIn`` (the rules ``parse_config`` applies), a trace ``GradeTraceIn``."""


def body_components() -> dict[str, dict]:
    """The contract of the grading routes' bodies, produced from the one schema each parser
    checks (:mod:`specdec_service.grading.submissions`): ``GradeBatchIn``, ``PrefixCountIn``
    and ``DistributionIn``."""
    name_of = DEFS_COMPONENTS.__getitem__

    def root(schema: dict) -> dict:
        return components_of_defs({k: v for k, v in schema.items() if k != "$defs"}, name_of)

    return {"GradeBatchIn": root(GRADE_BATCH),
            "PrefixCountIn": components_of_defs(DISTRIBUTION_REQUEST["$defs"]["prefix_count"], name_of),
            "DistributionIn": root(DISTRIBUTION_REQUEST), "SamplesIn": root(SAMPLES_REQUEST)}


class CellOut(StrictSchema):
    prefix = fields.List(Label(), required=True)
    observed = fields.Integer(required=True)
    expected = fields.Float(required=True)
    observed_share = fields.Float(required=True)
    expected_share = fields.Float(required=True)
    residual = fields.Float(required=True, metadata={"description": "(observed - expected) / sqrt(expected)."})


class ImpossibleOut(StrictSchema):
    prefix = fields.List(Label(), required=True)
    observed = fields.Integer(required=True)


class AcceptanceOut(StrictSchema):
    accepted = fields.Integer(required=True)
    draft_steps = fields.Integer(required=True)
    observed_rate = fields.Float(required=True, allow_none=True)
    expected_rate = fields.Float(required=True, allow_none=True, metadata={"description": "E[accepted] / E[draft_steps] of a session."})
    first_position_rate = fields.Float(required=True, allow_none=True, metadata={"description": "sum_x min(p(x), q(x)) at the empty prefix."})


class DistributionOut(StrictSchema):
    """The distribution-level grade."""

    passed = fields.Boolean(required=True, metadata={
        "description": "conclusive, p_value > alpha, nothing impossible observed and no sample too long."})
    conclusive = fields.Boolean(required=True, metadata={
        "description": "At least one degree of freedom (or a target with a single possible prefix): too few samples never pass."})
    m = fields.Integer(required=True)
    length = fields.Integer(required=True, metadata={"description": "min(m, limit): the length of the cells."})
    samples = fields.Integer(required=True)
    test = fields.String(required=True)
    statistic = fields.Float(required=True)
    dof = fields.Integer(required=True)
    p_value = fields.Float(required=True)
    alpha = fields.Float(required=True)
    total_variation = fields.Float(required=True)
    cells = fields.Integer(required=True)
    tested_cells = fields.Integer(required=True)
    pooled_cells = fields.String(required=True, allow_none=True, validate=validate.OneOf(POOLED), metadata={
        "description": "How the pooled cell (every cell expecting fewer than 5 samples) entered the test: "
                       "`own cell` (tested as one more cell), `merged into the smallest tested cell` (too small for "
                       "that), `only cell` (nothing expects 5 samples: not conclusive); null when nothing is pooled."})
    pooled_expected = fields.Float(required=True, metadata={
        "description": "The samples the pooled cell expects (0 when nothing is pooled)."})
    min_expected = fields.Float(required=True)
    impossible = fields.List(fields.Nested(ImpossibleOut), required=True)
    over_represented = fields.List(fields.Nested(CellOut), required=True)
    under_represented = fields.List(fields.Nested(CellOut), required=True)
    too_long = fields.Integer(required=True, metadata={
        "description": "Samples longer than the limit or going on after their EOS (they fail the grade); 0 for counts."})
    reason = fields.String(required=True, allow_none=True, metadata={"description": "Why it failed (null iff passed)."})
    acceptance = fields.Nested(AcceptanceOut, required=True, allow_none=True)


class LengthsOut(StrictSchema):
    """Whether every sample is a complete session (ends at EOS or at the limit, SPEC section 6)."""

    complete = fields.Integer(required=True)
    too_long = fields.Integer(required=True)
    too_short = fields.Integer(required=True, metadata={"description": "Shorter than the limit without ending in the EOS."})
    after_eos = fields.Integer(required=True, metadata={"description": "Tokens after the first EOS (counted as too long)."})
    too_long_by = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True,
                              metadata={"description": "{tokens too many: samples}."})
    too_short_by = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True,
                               metadata={"description": "{tokens too few: samples}."})
    message = fields.String(required=True, allow_none=True)


class SampleOutcomeOut(StrictSchema):
    token = Label(required=True, allow_none=True, metadata={"description": "null: the session stops here."})
    observed = fields.Integer(required=True)
    expected = fields.Float(required=True)
    residual = fields.Float(required=True, metadata={"description": "(observed - expected) / sqrt(expected)."})


class RowTestOut(StrictSchema):
    """One test of the family: a row (position, context), a context's pooled sparse positions,
    the global test or the length law."""

    test = fields.String(required=True, validate=validate.OneOf(["row", "pooled", "global", "length"]))
    position = fields.Integer(required=True, allow_none=True)
    context = Label(required=True, allow_none=True, metadata={"description": "null: the empty prefix (or no row)."})  # type: ignore[assignment]  # marshmallow 3's Schema.context (gone in 4) is this field here
    statistic = fields.Float(required=True)
    dof = fields.Integer(required=True)
    p_value = fields.Float(required=True)
    adjusted_p_value = fields.Float(required=True, metadata={"description": "Holm-adjusted over the family."})
    over_represented = fields.List(fields.Nested(SampleOutcomeOut), required=True)
    under_represented = fields.List(fields.Nested(SampleOutcomeOut), required=True)


class ImpossibleOutcomeOut(StrictSchema):
    position = fields.Integer(required=True)
    context = Label(required=True, allow_none=True)  # type: ignore[assignment]  # marshmallow 3's Schema.context (gone in 4) is this field here
    token = Label(required=True, allow_none=True, metadata={"description": "null: the session stops here."})
    observed = fields.Integer(required=True)


class CandidateOut(StrictSchema):
    id = fields.String(required=True)
    title = fields.String(required=True)
    rule = fields.String(required=True)
    hint = fields.String(required=True)
    log_likelihood_ratio = fields.Float(required=True, allow_none=True, metadata={
        "description": "ln L(mistake) - ln L(target); null when one of them is 0 (infinite)."})
    g_target = fields.Float(required=True, allow_none=True, metadata={"description": "2 sum O ln(O / E) against the target."})
    g_mistake = fields.Float(required=True, allow_none=True, metadata={"description": "The same against the mistake's law."})
    p_value = fields.Float(required=True, metadata={"description": "The mistake's own fit: Holm-adjusted, as for the target."})
    fits = fields.Boolean(required=True)
    schedule = fields.String(required=True, metadata={
        "description": "The block schedule under which the mistake's law is the most likely: spec (k = min(width, "
                       "limit - L)), last-from-target (k = min(width, limit - L - 1), the target gives the last token) "
                       "or target-first (the first token from the target before the first draft)."})
    schedule_rule = fields.String(required=True, metadata={"description": "That schedule in one sentence."})


class ClosestOut(CandidateOut):
    guess = fields.Boolean(required=True, metadata={"description": "Always true: the closest law is a guess, not a diagnosis."})


class MistakeOut(StrictSchema):
    named = fields.Nested(CandidateOut, required=True, allow_none=True)
    computed = fields.Boolean(required=True)
    reason = fields.String(required=True)
    candidates = fields.List(fields.Nested(CandidateOut), required=True)
    closest = fields.Nested(ClosestOut, required=True, allow_none=True, metadata={
        "description": "When the samples fail and no catalogued law fits: the most likely catalogued law that is more "
                       "likely than the target's (never one equal to the target's), marked as a guess; else null."})


class SampleAcceptanceOut(AcceptanceOut):
    schedule = fields.String(required=True, metadata={"description": "The block schedule the expected rate assumes."})


class SamplesOut(StrictSchema):
    """The grade of whole sampled sessions (docs/grading.md, Sample grading)."""

    passed = fields.Boolean(required=True)
    reason = fields.String(required=True, allow_none=True, metadata={"description": "Why it failed (null iff passed)."})
    samples = fields.Integer(required=True)
    alpha = fields.Float(required=True, metadata={"description": "The family-wise error rate."})
    lengths = fields.Nested(LengthsOut, required=True)
    conclusive = fields.Boolean(required=True)
    tests = fields.Integer(required=True, metadata={"description": "Tests in the family."})
    untested = fields.Integer(required=True, metadata={"description": "Outcomes in no test (too sparse even pooled)."})
    p_value = fields.Float(required=True, metadata={"description": "The smallest Holm-adjusted p-value (0 when impossible)."})
    impossible = fields.List(fields.Nested(ImpossibleOutcomeOut), required=True)
    most_deviating = fields.Nested(RowTestOut, required=True, allow_none=True)
    mistake = fields.Nested(MistakeOut, required=True)
    acceptance = fields.Nested(SampleAcceptanceOut, required=True, allow_none=True)


# ---------------------------------------------------------------- views


for _name, _component_schema in trace_in_components().items():
    blueprint.component(_name, _component_schema)
for _name, _component_schema in body_components().items():
    blueprint.component(_name, _component_schema)
for _schema in (GradeReportOut, GradeBatchOut, SuitesOut, SuiteOut, DistributionOut, SamplesOut):
    blueprint.component(_schema.__name__, _schema)


def _trace_examples() -> dict:
    """A correct trace and one with the catalogued mistake ``no-bonus`` (limit 4)."""
    mistake = BY_ID["no-bonus"]
    return {"correct": example("A correct trace", run(parse_config({"draft": "biased", "seed": 1, "limit": 4}))),
            "no_bonus": example("A trace that never draws the bonus",
                                faulty_run(parse_config({**mistake.example, "limit": 4}), mistake.rules))}


@blueprint.operation(
    "POST", "/v1/grade", summary="Grade traces of a student implementation",
    operation_id="gradeTrace",
    description="Recomputes the reference trace from each trace's own settings and compares them block by block: "
    f"tokens, decisions, positions and draws exactly, probabilities within {TOLERANCE:g}. The report: `passed`, "
    f"`score` (the share of the {len(CHECKS)} named checks that hold: {', '.join(CHECKS)}), the first "
    "divergence (block, pointer, expected, got, the SPEC rule broken) and the diagnosis (the catalogued mistakes "
    "that reproduce the trace, docs/grading.md). The body is one trace or `{\"traces\": [...]}` with "
    f"1-{MAX_TRACES}; bodies up to {GRADE_MAX_BODY_BYTES} bytes (8 MiB). A malformed trace or an invalid "
    "config is a 422 (in a batch the pointers start with `#/traces/<i>` and no trace is graded). A batch whose work "
    "is over the budget (one reference run per distinct config plus, for each failing trace, its checks and "
    "diagnosis: docs/service.md) is a 422 of type `tag:specdec,2026:problem/over-budget` with `cost` and `budget`: "
    "split it; one trace is always within the budget.",
    body={"oneOf": [{"$ref": "#/components/schemas/GradeTraceIn"}, {"$ref": "#/components/schemas/GradeBatchIn"}]},
    examples=_trace_examples,
    ok={"oneOf": [{"$ref": "#/components/schemas/GradeReportOut"}, {"$ref": "#/components/schemas/GradeBatchOut"}]},
    ok_description="One report, or the reports of a batch with a summary.",
    problems=(400, 413, 415, 422),
    ok_examples=lambda: {"no_bonus": example("The no-bonus trace: fails the bonus check only",
                                             grade(_trace_examples()["no_bonus"]["value"]))})
def grade_traces():
    """A trace -> its report; ``{"traces": [...]}`` -> ``{"reports", "summary"}``."""
    with cycle_collection_paused():
        return _graded(read_grading_json())  # the body and the reports die before the collector is back


def _graded(body: Any):
    """The response to a grading body: one trace's report, or a batch's reports and summary."""
    if isinstance(body, dict) and "traces" in body and "format" not in body:
        check_batch(body)
        return json_response(grade_many(body["traces"]))
    return json_response(grade(body))


@contextmanager
def cycle_collection_paused() -> Iterator[None]:
    """Pause CPython's cyclic garbage collector (``gc.disable``) while a grading body is read,
    graded and written; restore it after (also on an error), unless it was already off.

    Why: the collector runs after every few hundred container allocations, and each of its full
    collections scans every live container. An 8 MiB body of 1000 traces is about 100,000 live
    containers while its traces are graded, and reading and grading it allocate enough to set
    off one or two full collections and about 200 younger ones: a quarter to a third of the CPU
    time of such a request (docs/bench-grading.md). The route returns from inside the pause, so
    the body and the reports are freed before the collector is back (else its first collection
    would scan them all). Nothing is lost by the pause: a JSON document cannot hold a cycle,
    the grader creates none (``tests/test_grading_grader.py`` collects after grading and finds
    nothing), and reference counting frees everything else at once; the few cycles of the
    request's own objects wait for the next collection. The worker is single-threaded
    (gunicorn's sync workers); in a threaded server another request's cycles would only wait
    longer."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@blueprint.operation(
    "GET", "/v1/grade/suites", summary="Assignment suites",
    operation_id="listSuites",
    description="The named suites of configs a student's program is graded on, each the newest version of its "
                "name: `quick`, `standard`, `full` (SPEC 1-8), `sampling`, `block`, `tree` (one rule family each), "
                "`all`; a published version never changes. `specdec grade --exec` runs a program on every config of one.",
    ok=SuitesOut, ok_description="The suites.",
    ok_examples=lambda: {"suites": example("The suites", {"suites": [s.summary() for s in suites().values()]})})
def list_suites():
    """The assignment suites: ``{"suites": [{"name", "description", "count"}, ...]}``."""
    return json_response({"suites": [s.summary() for s in suites().values()]})


def _unknown_suite() -> dict:
    return {404: {
        "description": "No suite of that name.",
        "content": {PROBLEM_MIMETYPE: {"schema": "ProblemOut", "examples": {"unknown": example("An unknown suite", {
            "type": "about:blank", "title": "Not Found", "status": 404,
            "detail": f"no suite named 'nope': the suites are {', '.join(suites())}."})}}}}}


@blueprint.operation(
    "GET", "/v1/grade/suites/<name>", summary="One assignment suite",
    operation_id="getSuite",
    description="The suite's configs, each complete (every setting, as a trace echoes it) with the SPEC rules its "
                "reference trace exercises. Each suite exercises every rule of the families it covers and every "
                "catalogued mistake of those families fails at least one of its configs with a diagnosis that names "
                "it (docs/grading.md). `name` is the newest version, `name@N` version N. An unknown name or version "
                "is a 404.",
    ok=SuiteOut, ok_description="The suite.",
    parameters=[{"in": "path", "name": "name", "required": True,
                 "schema": {"type": "string", "enum": list(suites()) + [s.pinned for s in published()]},
                 "description": "The suite's name (its newest version), or `name@N` for version N."}],
    ok_examples=lambda: {"quick": example("The quick suite", suite("quick").to_json())},
    responses=_unknown_suite)
def get_suite(name: str):
    """One suite with its configs; an unknown name is a 404 problem naming the suites."""
    try:
        return json_response(suite(name).to_json())
    except UnknownSuite as error:
        raise ApiProblem(404, f"{error.args[0]}.") from None


_COUNTS_EXAMPLE = {"config": {"draft": "biased", "seed": 0}, "m": 1,
                   "counts": [{"prefix": ["A"], "count": 497}, {"prefix": ["B"], "count": 305},
                              {"prefix": ["C"], "count": 198}],
                   "counters": {"accepted": 1500, "draft_steps": 2700}}


@blueprint.operation(
    "POST", "/v1/grade/distribution", summary="Grade a sampler by its output distribution",
    operation_id="gradeDistribution",
    description="For implementations whose random numbers differ from ours: compares sampled outputs (or counts of output "
    f"prefixes of length m <= {MAX_M}) with the exact target distribution of the first m tokens: Pearson "
    "chi-square with cells expecting fewer than 5 samples pooled (p-value, degrees of freedom), total-variation "
    f"distance, the most over- and under-represented prefixes; passes iff p > alpha (default {DEFAULT_ALPHA}) and no "
    f"impossible prefix was observed. `seed` may be left out of the config (it does not change the distribution). At "
    f"most {MAX_SAMPLES} samples in all and {MAX_CELLS} count entries; mode greedy is refused (deterministic). Counters ({', '.join(COUNTER_NAMES[:3])}, ...) summed over the samples give the "
    "acceptance rate, compared with its expectation. Bodies up to 8 MiB; a request whose work (entries x "
    "min(m, limit) plus 5 x the cells of the exact distribution) is over the budget is a 422 of type "
    "`tag:specdec,2026:problem/over-budget` (docs/service.md).",
    body="DistributionIn", examples=lambda: {"counts": example("Counts of first tokens", _COUNTS_EXAMPLE)},
    ok=DistributionOut, ok_description="The distribution-level grade.", problems=(400, 413, 415, 422),
    ok_examples=lambda: {"counts": example("A sample consistent with the target",
                                           grade_distribution(_COUNTS_EXAMPLE))})
def grade_samples():
    """Samples or prefix counts -> the distribution report (read and graded with the cyclic
    collector paused, as ``POST /v1/grade``: an 8 MiB body is up to 10^6 lists)."""
    with cycle_collection_paused():
        return json_response(grade_distribution(read_grading_json()))


_SAMPLES_EXAMPLE = {"config": {"target": "toy", "limit": 2},
                    "samples": [["A", "A"], ["A", "B"], ["B", "C"], ["C", "A"], ["A", "C"], ["B", "A"]] * 20}


@blueprint.operation(
    "POST", "/v1/grade/samples", summary="Grade a sampler by whole sessions",
    description="For any implementation (its own random numbers, draft and schedule): whole sampled sessions are "
    "checked for length (limit tokens, or fewer ending in the EOS) and tested against the target's law at every "
    "position and context (chi-square per row, sparse positions pooled per context, a global test and the length "
    f"law), with one family-wise error rate alpha (Holm; default {DEFAULT_ALPHA}). A failure carries a `reason`, the "
    "most deviating row and, when one fits, the catalogued mistake whose exact output law explains the samples. "
    "`draft` and `seed` may be left out of the config; `counters` ask for the acceptance rate (and need the draft). "
    f"At most {MAX_SAMPLES} samples; bodies up to 8 MiB; a request of more tokens than the budget is a 422 of type "
    "`tag:specdec,2026:problem/over-budget`.",
    body="SamplesIn", examples=lambda: {"samples": example("Sessions of limit 2", _SAMPLES_EXAMPLE)},
    ok=SamplesOut, ok_description="The sample grade.", problems=(400, 413, 415, 422),
    ok_examples=lambda: {"samples": example("A grade", grade_sessions_of(_SAMPLES_EXAMPLE))},
    operation_id="gradeSamples")
def grade_sessions():
    """Whole sampled sessions -> the sample report (read and graded with the cyclic collector
    paused, as ``POST /v1/grade/distribution``: an 8 MiB body is up to 10^6 lists)."""
    with cycle_collection_paused():
        return json_response(grade_sessions_of(read_grading_json()))
