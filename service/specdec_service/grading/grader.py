"""Trace-exact grading: a submitted trace against the reference recomputed from its own settings.

:func:`grade` recomputes the reference trace from the submission's ``config`` (``engine.run``)
and compares the two in document order (:mod:`.compare`): ``passed`` iff they agree (exact
fields exactly, probabilities within :data:`~.compare.TOLERANCE`). A failing trace also gets

- the **first divergence**: block, pointer, expected, got, the sentence of the SPEC rule
  that owns the field (:func:`.check_names.locate`) and the same rule in plain words
  (:func:`.check_names.explain`);
- the **checks** of :mod:`.checks` (partial credit: ``score`` = share that hold);
- the **diagnosis**: every catalogued mistake (:mod:`.catalogue`) whose variant, run from the
  same config, reproduces the submission exactly; otherwise the one(s) whose trace agrees
  with it on the longest prefix, if longer than the reference's agreement.

Speed: a correct trace costs one engine run (the reference, cached for recent configs), one
C-level ``==`` with it and one schema check (``jsonschema_rs``, about 0.03 ms): equal values of
the schema's types are the reference (:func:`_is_reference`); only failing traces are validated
with every fault named, compared field by field, checked and diagnosed. :func:`grade_many` takes
the same path for each trace of a batch (docs/bench-grading.md).
"""

from __future__ import annotations

import copy
import json
from collections import Counter, OrderedDict
from math import fsum
from typing import Any, Optional, Sequence

try:  # the config key and the reference cache (orjson is a dependency of the service)
    import orjson
except ImportError:  # pragma: no cover - a stripped install: the standard library writes the key
    orjson = None  # type: ignore[assignment]  # an optional module: every use checks for None

from ..budget import (
    GRADE_CHECK_RUNS, GRADE_REFERENCE_WEIGHT, SESSION_WORK, config_processing_work, grading_work, mode_weight,
    TRACE_GRADING, session_units, session_work,
)
from ..engine import Config, InvalidInput, State, pointer, run
from ..engine.bounds import MAX_TRACES  # noqa: F401  (re-exported)
from ..engine.errors import MAX_ERRORS
from ..engine.decoders import RuleSet
from ..engine.trace import trace_of
from .catalogue import CATALOGUE, Mistake
from .checks import CheckResult, all_passed, evaluate
from .compare import TOLERANCE, Difference, first_difference
from .faulty import faulty_step
from .submissions import check_batch
from .check_names import CHECKS, explain, locate, rule_mode
from .validate import parse_trace_config, schema_valid, validate_trace



def grade(trace: Any, *, diagnose: bool = True) -> dict:
    """Grade one submitted trace (``specdec-trace/1``, a JSON-shaped dict).

    Returns the report ``{"passed", "score", "checks", "tolerance", "first_divergence",
    "diagnosis", "reference"}`` described in ``docs/grading.md``. ``diagnose=False`` skips the
    catalogue (faster for failing traces). One trace is always within the block-unit budget of
    ``POST /v1/grade`` (:func:`trace_cost`), not always within the work budget: a trace whose
    reference run costs more (``budget.grading_work``) is refused as ``POST /v1/runs`` refuses
    its config.

    Raises :class:`~specdec_service.engine.InvalidInput` (HTTP 422) when the trace is malformed
    (not an object, invalid config, or not matching the grading schema), with the path of each
    fault; :class:`~specdec_service.budget.OverBudget` (pointer ``#/config``) when its reference
    run, or its checks and diagnosis, cost more than ``budget.WORK_BUDGET`` work units.
    """
    config = parse_trace_config(trace)
    SESSION_WORK.check(grading_work(config), pointer="#/config", record=False)
    reference = _reference(config, _config_key(config))
    if _is_reference(trace, reference):
        return _passed(reference)
    validate_trace(trace)
    blocks = trace.get("blocks")
    SESSION_WORK.check(grading_work(config) + failing_work(config, len(blocks) if isinstance(blocks, list) else 0),
                       pointer="#/config", record=False)
    return _grade_valid(trace, config, reference, diagnose)


def _is_reference(trace: Any, reference: dict) -> bool:
    """Whether ``trace`` is its ``reference``, so that it passes without a field-by-field
    comparison: its values equal the reference's (``==``, in C; a NaN equals nothing, so a NaN
    where the reference has ``null`` is not the reference) and it is valid against the grading
    schema (:func:`.validate.schema_valid`: ``==`` takes ``true`` for ``1``, the schema does
    not). ``1.0`` and ``1`` are equal and both valid where the reference has either: a request
    body reads an integral float as an integer (``api.bodies``)."""
    return trace == reference and schema_valid(trace)


def _grade_valid(trace: dict, config: Config, reference: dict, diagnose: bool) -> dict:
    """The report of a validated ``trace`` of ``config`` against its ``reference``."""
    difference = _difference(trace, reference)
    if difference is None:
        return _passed(reference)
    return _failed(trace, config, reference, difference, diagnose)


def _difference(trace: dict, reference: dict) -> Optional[Difference]:
    """The first difference of a validated trace from its reference, or None when it passes."""
    if trace == reference:  # C-level; valid by the schema, so no boolean hides as a number
        return None
    return first_difference(reference, trace, typed=True)


def _failed(trace: dict, config: Config, reference: dict, difference: Difference, diagnose: bool) -> dict:
    """The report of a failing trace: its checks and (``diagnose``) its diagnosis."""
    checks = evaluate(trace, config)
    found = diagnose_trace(config, trace, difference) if diagnose else []
    return _report(config, reference, checks, difference, found)


GRADE_BUDGET = TRACE_GRADING
"""The work budget of one grading request (:mod:`specdec_service.budget`)."""


def drafted_width(config: Config) -> int:
    """The proposals a block of ``config`` drafts at most: ``width``, times ``drafts`` in mode tree
    (SPEC 11: D chains), the width the block units of a cost count."""
    return config.width * config.drafts if config.mode == "tree" else config.width


def reference_cost(config: Config) -> int:
    """The cost of the reference run of ``config`` in block units: at most ``limit`` blocks, each
    weighted :data:`~specdec_service.budget.GRADE_REFERENCE_WEIGHT` (and by the mode's
    :func:`~specdec_service.budget.mode_weight`; a tree block counts its D chains:
    :func:`drafted_width`)."""
    return (GRADE_REFERENCE_WEIGHT * mode_weight(config.mode)
            * session_units(drafted_width(config), len(config.vocab), config.limit))


def trace_cost(config: Config, blocks: int) -> int:
    """The cost of grading a trace of ``blocks`` blocks beyond its reference run, in block
    units, assuming it fails: the checks (:data:`~specdec_service.budget.GRADE_CHECK_RUNS`
    runs of its blocks) and the diagnosis (each catalogued variant of the config's mode runs
    until its first block that differs from the submission: at most ``min(blocks, limit) + 1``
    blocks), each block weighted by the mode's :func:`~specdec_service.budget.mode_weight`."""
    runs = sum(m.mode == config.mode for m in CATALOGUE) + GRADE_CHECK_RUNS
    return runs * mode_weight(config.mode) * session_units(drafted_width(config), len(config.vocab),
                                                           min(blocks, config.limit) + 1)


def failing_work(config: Config, blocks: int) -> int:
    """The exact work of checking and diagnosing a failing trace of ``blocks`` blocks beyond its
    reference (``budget.grading_work``), in work units: as many runs as :func:`trace_cost` counts,
    each of at most ``min(blocks, limit) + 1`` blocks, the rows already processed."""
    runs = sum(m.mode == config.mode for m in CATALOGUE) + GRADE_CHECK_RUNS
    return runs * (session_work(config, min(blocks, config.limit) + 1) - config_processing_work(config))


def batch_work(distinct: dict, failing: Sequence[tuple[dict, Config]]) -> int:
    """The exact work of a grading batch in work units: :func:`grading_work` of each distinct
    config (values of ``distinct``) plus :func:`failing_work` of each failing ``(trace, config)``."""
    return sum(map(grading_work, distinct.values())) + sum(failing_work(config, len(trace["blocks"]))
                                                             for trace, config in failing)


def _work_pointer(configs: Sequence[Optional[Config]]) -> str:
    """Where a batch over the work budget points: the first trace whose config alone is over it
    (``#/traces/i/config``), else the whole ``#/traces``."""
    for i, config in enumerate(configs):
        if config is not None and grading_work(config) > SESSION_WORK.limit:
            return f"#/traces/{i}/config"
    return "#/traces"


def batch_cost(references: Sequence[Config], failing: Sequence[tuple[dict, Config]]) -> int:
    """``POST /v1/grade``'s cost model: the reference run of each distinct config in
    ``references`` (:func:`reference_cost`) plus :func:`trace_cost` of each failing
    ``(trace, config)`` (a passing trace costs one comparison)."""
    return _batch_cost({_config_key(config): config for config in references}, failing)


def _batch_cost(distinct: dict, failing: Sequence[tuple[dict, Config]]) -> int:
    """:func:`batch_cost` given the distinct configs by key."""
    return sum(map(reference_cost, distinct.values())) + sum(trace_cost(config, len(trace["blocks"]))
                                                            for trace, config in failing)


def _config_key(config: Config) -> bytes | str:
    """A key equal for equal configs (its JSON with sorted keys; a custom model's Decimals as
    strings)."""
    data = config.to_json()
    if orjson is not None:
        try:
            return orjson.dumps(data, option=orjson.OPT_SORT_KEYS, default=str)
        except (TypeError, orjson.JSONEncodeError):
            pass  # a lone surrogate in a label: the standard library escapes it
    return json.dumps(data, sort_keys=True, default=str)


REFERENCE_CACHE_SIZE = 128
"""How many reference traces are kept (least recently used first out): a class grades many
submissions of the same few settings. Only small sessions are kept (limit x vocabulary <= 1024),
each as its ``orjson`` bytes (about 5 kB for an eight-token toy trace)."""
_references: "OrderedDict[bytes | str, bytes | dict]" = OrderedDict()


def _reference(config: Config, key: bytes | str) -> dict:
    """The reference trace of ``config`` (whose :func:`_config_key` is ``key``): ``engine.run``,
    remembered for the last :data:`REFERENCE_CACHE_SIZE` small configs. Treat it as read-only
    (it may be shared; reports copy what they take from it).

    A reference run for the first time is kept as its ``orjson`` bytes: one object the cyclic
    garbage collector never scans (a cache of dicts moved every graded reference's hundred-odd
    containers into the oldest generation, whose collections then scanned them all: grading
    distinct configs was a third slower, docs/bench-grading.md). Asked for again, it is read
    back (``orjson`` writes every float as its shortest round-trip repr, so the values and their
    types come back unchanged; the engine's traces hold no tuple and no NaN) and kept as the
    dict from then on: only the references asked for more than once stay as containers. A trace
    ``orjson`` cannot write (a lone surrogate in a label) is kept as the dict."""
    small = config.limit * len(config.vocab) <= 1024
    if small:
        found = _references.get(key)
        if found is not None:
            _references.move_to_end(key)
            if isinstance(found, bytes):
                found = _references[key] = orjson.loads(found)
            return found
    trace = run(config)
    if small:
        _references[key] = _bytes(trace) or trace
        if len(_references) > REFERENCE_CACHE_SIZE:
            _references.popitem(last=False)
    return trace


def _bytes(trace: dict) -> Optional[bytes]:
    """``orjson.dumps(trace)``, or ``None`` without orjson or when it cannot write ``trace``."""
    if orjson is None:
        return None
    try:
        return orjson.dumps(trace)
    except (TypeError, orjson.JSONEncodeError):
        return None


def reference_trace(config: Config) -> dict:
    """``engine.run(config)``, remembered for the last :data:`REFERENCE_CACHE_SIZE` small
    configs. Treat the result as read-only (it may be shared; reports copy what they take
    from it)."""
    return _reference(config, _config_key(config))


def grade_many(traces: Any, *, diagnose: bool = True) -> dict:
    """Grade a batch: ``traces`` is a list of 1..:data:`MAX_TRACES` traces.

    The work is checked against :data:`GRADE_BUDGET` before it starts, in two steps: every
    config is read and the reference runs of the distinct configs are costed before any is run
    (each distinct config's reference is run once; over the budget, every trace is validated
    first, so a malformed trace is reported before the budget); then every trace is compared
    with its reference (one comparison each; a trace equal to its reference and of the schema's
    types passes, as in :func:`grade`, any other is validated, and the faults of every malformed
    trace are raised before any is graded), and the checks and diagnoses of the failing ones are
    costed (:func:`batch_cost`) before any is done.

    Returns ``{"reports": [report, ...] (in order), "summary": {"count", "passed", "failed",
    "mean_score"}}``. Raises :class:`InvalidInput` (paths ``traces/<i>/...``) listing the faults
    of every malformed trace (the search stops after the trace where :data:`MAX_ERRORS` faults
    have been found: a refusal costs no more than the check of a valid batch), and :class:`~specdec_service.budget.OverBudget` (pointer
    ``#/traces``) when the batch costs more than the budget; then no report is returned.
    """
    check_batch({"traces": traces})
    configs: list[Optional[Config]] = []
    faults = _BatchFaults()
    for i, trace in enumerate(traces):
        if faults.full:
            break
        try:
            configs.append(parse_trace_config(trace))
        except InvalidInput as error:
            configs.append(None)
            faults.add(i, error)
    keys = [None if config is None else _config_key(config) for config in configs]
    distinct = {key: config for key, config in zip(keys, configs) if config is not None}
    budget = GRADE_BUDGET
    if faults or _batch_cost(distinct, []) > budget.limit or batch_work(distinct, []) > SESSION_WORK.limit:
        # Nothing is run: every fault of the batch first (a 422 of invalid input wins over the budget).
        for i, trace in enumerate(traces):
            if faults.full:
                break
            if i not in faults:
                _validate_at(trace, i, faults)
        faults.raise_any()
        budget.check(_batch_cost(distinct, []), pointer="#/traces")
        SESSION_WORK.check(batch_work(distinct, []), pointer=_work_pointer(configs), record=False)  # the references' exact work
    _raise_schema_faults(traces, faults)
    # Within the budget of the references: run each distinct one once. A trace equal to its
    # reference (of the schema's types) passes, as in grade(); any other is validated (all faults
    # are raised before any grading) and compared.
    shared = {key for key, n in Counter(keys).items() if n > 1}  # configs of more than one trace
    seen: dict = {}  # their references, run or read once for the batch
    reports: list[Optional[dict]] = []
    failing: list[tuple[int, dict, Config, dict, Difference]] = []
    for i, (trace, config, key) in enumerate(zip(traces, configs, keys)):
        if faults.full:
            break
        assert config is not None and key is not None  # a trace without a config was refused above
        reference = seen.get(key) or _reference(config, key)
        if key in shared:
            seen[key] = reference  # any other reference dies young (see _reference)
        if _is_reference(trace, reference):
            reports.append(_passed(reference))
            continue
        reports.append(None)
        if not _validate_at(trace, i, faults):
            difference = _difference(trace, reference)
            if difference is None:
                reports[i] = _passed(reference)
            else:
                failing.append((i, trace, config, reference, difference))
    faults.raise_any()
    failed = [(trace, config) for _, trace, config, _, _ in failing]
    budget.check(_batch_cost(distinct, failed), pointer="#/traces")
    SESSION_WORK.check(batch_work(distinct, failed), pointer="#/traces", record=False)
    for i, trace, config, reference, difference in failing:
        reports[i] = _failed(trace, config, reference, difference, diagnose)
    done = [r for r in reports if r is not None]  # all of them: every trace has its report by now
    passed = sum(r["passed"] for r in done)
    return {
        "reports": reports,
        "summary": {
            "count": len(reports),
            "passed": passed,
            "failed": len(reports) - passed,
            # math.fsum: correctly rounded, so the same bits in every Python (sum() of floats is
            # compensated from Python 3.12 on) and on every machine
            "mean_score": fsum(r["score"] for r in done) / len(reports),
        },
    }


class _BatchFaults(dict):
    """The faults of a batch's malformed traces (an :class:`InvalidInput` with paths
    ``traces/<i>/...``) by index; :attr:`full` once :data:`MAX_ERRORS` are listed, where the
    search of the batch stops."""

    listed = 0

    def add(self, i: int, error: InvalidInput) -> None:
        self[i] = error.prefixed("traces", i)
        self.listed += len(error.faults)

    @property
    def full(self) -> bool:
        return self.listed >= MAX_ERRORS

    def raise_any(self) -> None:
        """Raise :class:`InvalidInput` with the faults of the malformed traces, in batch order."""
        if self:
            raise InvalidInput.joined(self[i] for i in sorted(self))


def _raise_schema_faults(traces: list, faults: _BatchFaults) -> None:
    """Raise :class:`InvalidInput` with ``faults`` and those of every trace outside the grading
    schema (as :func:`validate_trace` lists them), if any, before any reference is run: such a
    trace never equals its reference, and :func:`schema_valid` is one check in Rust a trace, so
    a batch refused for its traces' values does no exact work (SPEC 1's rows, docs/service.md)."""
    for i, trace in enumerate(traces):
        if faults.full:
            break
        if i not in faults and not schema_valid(trace):
            _validate_at(trace, i, faults)
    faults.raise_any()


def _validate_at(trace: dict, i: int, faults: _BatchFaults) -> bool:
    """Validate trace ``i`` of a batch; record its faults in ``faults``. Returns whether it had any."""
    try:
        validate_trace(trace)
    except InvalidInput as error:
        faults.add(i, error)
        return True
    return False


def diagnose_trace(config: Config, trace: dict, difference: Optional[Difference] = None) -> list[dict]:
    """The catalogued mistakes that explain a failing, schema-valid ``trace`` (see the module
    docstring; :func:`grade` validates before it diagnoses).

    ``difference`` is the submission's first difference from the reference (recomputed when
    omitted). Only the mistakes of the config's mode (:attr:`.catalogue.Mistake.mode`) are tried.
    Each entry: ``{"id", "title", "rule", "hint", "exact", "agreement"}`` where ``agreement``
    is ``{"blocks": blocks agreeing in full, "first_divergence": pointer or null}``.
    """
    mistakes = [m for m in CATALOGUE if m.mode == config.mode]
    if not mistakes:
        return []
    if difference is None:
        difference = first_difference(run(config), trace, typed=True)
        if difference is None:
            return []
    exact: list[Mistake] = []
    best: list[tuple[Mistake, Difference]] = []
    if difference.order[:1] < (2,):
        return []  # format or config differ: every variant agrees with the reference there
    for mistake in mistakes:
        try:
            found = variant_difference(config, mistake.rules, trace)
        except (ValueError, ArithmeticError, InvalidInput):
            continue  # the switch makes a rule undefined (or a ratio overflow) for this config
        if found is None:
            exact.append(mistake)
        elif found.order > difference.order:
            if not best or found.order > best[0][1].order:
                best = [(mistake, found)]
            elif found.order == best[0][1].order:
                best.append((mistake, found))
    if exact:
        return [_diagnosis(m, None, len(trace["blocks"])) for m in exact]
    return [_diagnosis(m, d, _blocks_agreeing(d)) for m, d in best]


def variant_difference(config: Config, rules: RuleSet, trace: dict) -> Optional[Difference]:
    """``first_difference(faulty_run(config, rules), trace)``, computed block by block: the
    variant stops at its first block that differs from the submission (most variants of a
    failing trace diverge early, so most are not run to the end)."""
    blocks = trace["blocks"]
    state, carry, b = State(config), None, 0
    while state.done is None:
        block, state, carry = faulty_step(state, rules, carry)
        if b >= len(blocks):
            return Difference(("blocks", b), (2, b), block, None, "missing")
        found = first_difference(block, blocks[b], ("blocks", b), (2, b), typed=True)
        if found is not None:
            return found
        b += 1
    if b < len(blocks):
        return Difference(("blocks", b), (2, b), None, blocks[b], "unexpected")
    return first_difference(trace_of(state, blocks), trace, typed=True)


def _blocks_agreeing(d: Difference) -> int:
    if len(d.path) >= 2 and d.path[0] == "blocks":
        return d.path[1]
    return 0


def _diagnosis(mistake: Mistake, d: Optional[Difference], blocks: int) -> dict:
    return {
        "id": mistake.id,
        "title": mistake.title,
        "rule": mistake.rule,
        "hint": mistake.hint,
        "exact": d is None,
        "agreement": {"blocks": blocks, "first_divergence": None if d is None else pointer(d.path)},
    }


def _divergence(d: Difference, mode: str) -> dict:
    check, rule = locate(d.path, mode)
    block = d.path[1] if len(d.path) >= 2 and d.path[0] == "blocks" and isinstance(d.path[1], int) else None
    return {
        "block": block,
        "path": pointer(d.path),
        "expected": copy.deepcopy(d.expected),  # a part of the shared reference
        "got": d.got,
        "kind": d.kind,
        "check": check,
        "rule": rule,
        "explanation": explain(check, mode),
    }


def _report(config: Config, reference: dict, checks: Sequence[CheckResult], difference: Difference,
            diagnosis: list) -> dict:
    """The report of a trace that differs from its ``reference`` first at ``difference``."""
    return {
        "passed": False,
        "score": sum(c.passed for c in checks) / len(CHECKS),
        "checks": [c.to_json(rule_mode(config)) for c in checks],
        "tolerance": TOLERANCE,
        "first_divergence": _divergence(difference, rule_mode(config)),
        "diagnosis": diagnosis,
        "reference": _summary(reference),
    }


_PASSED_CHECKS = tuple(c.to_json() for c in all_passed())
"""The checks of a passing report (a holding check's record does not depend on the mode)."""


def _passed(reference: dict) -> dict:
    """The report of a trace equal to its ``reference`` (fresh lists and dicts, so a caller
    may change the report)."""
    return {
        "passed": True,
        "score": 1.0,
        "checks": [dict(check, blocks=[]) for check in _PASSED_CHECKS],
        "tolerance": TOLERANCE,
        "first_divergence": None,
        "diagnosis": [],
        "reference": _summary(reference),
    }


def _summary(reference: dict) -> dict:
    """The report's ``reference``: output (a copy), position, number of blocks, done."""
    return {"output": list(reference["output"]), "position": reference["position"], "blocks": len(reference["blocks"]),
            "done": reference["done"]}
