"""Trace-exact grading: a submitted trace against the reference recomputed from its own settings.

:func:`grade` recomputes the reference trace from the submission's ``config`` (``engine.run``)
and compares the two in document order (:mod:`.compare`): ``passed`` iff they agree (exact
fields exactly, probabilities within :data:`~.compare.TOLERANCE`). A failing trace also gets

- the **first divergence**: block, pointer, expected, got, the sentence of the SPEC rule
  that owns the field (:func:`.rules.locate`) and the same rule in plain words
  (:func:`.rules.explain`);
- the **checks** of :mod:`.checks` (partial credit: ``score`` = share that hold);
- the **diagnosis**: every catalogued mistake (:mod:`.catalogue`) whose variant, run from the
  same config, reproduces the submission exactly; otherwise the one(s) whose trace agrees
  with it on the longest prefix, if longer than the reference's agreement.

Speed: a trace that serialises to exactly the reference's bytes costs one engine run (the
reference, cached for recent configs) and two ``orjson.dumps``: it is the reference, so it
needs no schema validation; any other trace costs its schema validation (about 0.1 ms with
``jsonschema_rs``) and one C-level ``==``; only failing traces are compared field by field,
checked and diagnosed.
"""

from __future__ import annotations

import copy
import json
from collections import OrderedDict
from typing import Any, Optional, Sequence

try:  # the fast path of a trace equal to its reference (orjson is a dependency of the service)
    import orjson
except ImportError:  # pragma: no cover - a stripped install: validate every trace
    orjson = None

from ..budget import BUDGETS, GRADE_CHECK_RUNS, GRADE_REFERENCE_WEIGHT, session_units
from ..engine import Config, Fault, InvalidInput, State, pointer, run
from ..engine.bounds import MAX_TRACES
from ..engine.rules import RuleSet
from ..engine.trace import trace_of
from .catalogue import CATALOGUE, Mistake
from .checks import CheckResult, all_passed, evaluate
from .compare import TOLERANCE, Difference, first_difference
from .faulty import faulty_step
from .rules import CHECKS, explain, locate
from .validate import parse_trace_config, validate_trace



def grade(trace: Any, *, diagnose: bool = True) -> dict:
    """Grade one submitted trace (``specdec-trace/1``, a JSON-shaped dict).

    Returns the report ``{"passed", "score", "checks", "tolerance", "first_divergence",
    "diagnosis", "reference"}`` described in ``docs/grading.md``. ``diagnose=False`` skips the
    catalogue (faster for failing traces). One trace is always within the budget of
    ``POST /v1/grade`` (:func:`trace_cost`).

    Raises :class:`~specdec_service.engine.InvalidInput` (HTTP 422) when the trace is malformed
    (not an object, invalid config, or not matching the grading schema), with the path of each
    fault.
    """
    config = parse_trace_config(trace)
    reference = reference_trace(config)
    if _same_json(trace, reference):  # the reference itself, types included: valid by construction
        return _report(config, reference, all_passed(), None, [])
    validate_trace(trace)
    return _grade_valid(trace, config, reference, diagnose)


def _same_json(trace: Any, reference: dict) -> bool:
    """Whether ``trace`` serialises to exactly the bytes of ``reference`` (same keys in the
    same order, same types: ``1``, ``1.0`` and ``true`` all differ), so that it needs no
    schema validation: the engine's traces satisfy the grading schema (every golden trace
    grades as passed). ``False`` whenever in doubt (no orjson, or a value it cannot write);
    the caller then validates and compares as usual."""
    if orjson is None:
        return False
    try:
        return orjson.dumps(trace) == orjson.dumps(reference)
    except (TypeError, orjson.JSONEncodeError):
        return False


def _grade_valid(trace: dict, config: Config, reference: dict, diagnose: bool) -> dict:
    """The report of a validated ``trace`` of ``config`` against its ``reference``."""
    difference = _difference(trace, reference)
    if difference is None:
        return _report(config, reference, all_passed(), None, [])
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


GRADE_BUDGET = BUDGETS["POST /v1/grade"]
"""The work budget of one grading request (:mod:`specdec_service.budget`)."""


def reference_cost(config: Config) -> int:
    """The cost of the reference run of ``config`` in block units: at most ``limit`` blocks, each
    weighted :data:`~specdec_service.budget.GRADE_REFERENCE_WEIGHT`."""
    return GRADE_REFERENCE_WEIGHT * session_units(config.width, len(config.vocab), config.limit)


def trace_cost(config: Config, blocks: int) -> int:
    """The cost of grading a trace of ``blocks`` blocks beyond its reference run, in block
    units, assuming it fails: the checks (:data:`~specdec_service.budget.GRADE_CHECK_RUNS`
    runs of its blocks) and the diagnosis (each catalogued variant of the config's mode runs
    until its first block that differs from the submission: at most ``min(blocks, limit) + 1``
    blocks)."""
    runs = sum(m.mode == config.mode for m in CATALOGUE) + GRADE_CHECK_RUNS
    return runs * session_units(config.width, len(config.vocab), min(blocks, config.limit) + 1)


def batch_cost(references: Sequence[Config], failing: Sequence[tuple[dict, Config]]) -> int:
    """``POST /v1/grade``'s cost model: the reference run of each distinct config in
    ``references`` (:func:`reference_cost`) plus :func:`trace_cost` of each failing
    ``(trace, config)`` (a passing trace costs one comparison)."""
    distinct = {_config_key(config): reference_cost(config) for config in references}
    return sum(distinct.values()) + sum(trace_cost(config, len(trace["blocks"])) for trace, config in failing)


def _config_key(config: Config) -> str:
    return json.dumps(config.to_json(), sort_keys=True, default=str)


REFERENCE_CACHE_SIZE = 128
"""How many reference traces are kept (least recently used first out): a class grades many
submissions of the same few settings. Only small sessions are kept (limit x vocabulary <= 1024)."""
_references: "OrderedDict[str, dict]" = OrderedDict()


def reference_trace(config: Config) -> dict:
    """``engine.run(config)``, remembered for the last :data:`REFERENCE_CACHE_SIZE` small
    configs. The result is shared: treat it as read-only (reports copy what they take from it)."""
    if config.limit * len(config.vocab) > 1024:
        return run(config)
    key = _config_key(config)
    found = _references.get(key)
    if found is not None:
        _references.move_to_end(key)
        return found
    trace = run(config)
    _references[key] = trace
    if len(_references) > REFERENCE_CACHE_SIZE:
        _references.popitem(last=False)
    return trace


def grade_many(traces: Any, *, diagnose: bool = True) -> dict:
    """Grade a batch: ``traces`` is a list of 1..:data:`MAX_TRACES` traces.

    The work is checked against :data:`GRADE_BUDGET` before it starts, in two steps: every
    trace is validated and the reference runs of the distinct configs are costed before any is
    run (each distinct config's reference is run once); then every trace is compared with its
    reference (one comparison each) and the checks and diagnoses of the failing ones are costed
    (:func:`batch_cost`) before any is done.

    Returns ``{"reports": [report, ...] (in order), "summary": {"count", "passed", "failed",
    "mean_score"}}``. Raises :class:`InvalidInput` (paths ``traces/<i>/...``) listing the faults
    of every malformed trace, and :class:`~specdec_service.budget.OverBudget` (pointer
    ``#/traces``) when the batch costs more than the budget; then no report is returned.
    """
    if not isinstance(traces, list) or not 1 <= len(traces) <= MAX_TRACES:
        raise InvalidInput.at(("traces",), f"must be a list of 1 to {MAX_TRACES} traces")
    valid: list[tuple[dict, Config]] = []
    faults: list[Fault] = []
    for i, trace in enumerate(traces):
        try:
            config = parse_trace_config(trace)
            validate_trace(trace)
            valid.append((trace, config))
        except InvalidInput as error:
            faults.extend(error.prefixed("traces", i).faults)
    if faults:
        raise InvalidInput(faults)
    configs = [config for _, config in valid]
    GRADE_BUDGET.check(batch_cost(configs, []), pointer="#/traces")
    references: dict[str, dict] = {}
    compared = []
    for trace, config in valid:
        key = _config_key(config)
        if key not in references:
            references[key] = reference_trace(config)
        compared.append((trace, config, references[key], _difference(trace, references[key])))
    GRADE_BUDGET.check(batch_cost(configs, [(t, c) for t, c, _, d in compared if d is not None]), pointer="#/traces")
    reports = [_report(config, reference, all_passed(), None, []) if difference is None
               else _failed(trace, config, reference, difference, diagnose)
               for trace, config, reference, difference in compared]
    passed = sum(r["passed"] for r in reports)
    return {
        "reports": reports,
        "summary": {
            "count": len(reports),
            "passed": passed,
            "failed": len(reports) - passed,
            "mean_score": sum(r["score"] for r in reports) / len(reports),
        },
    }


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


def _report(config: Config, reference: dict, checks: Sequence[CheckResult], difference: Optional[Difference],
            diagnosis: list) -> dict:
    passed = difference is None
    holding = sum(c.passed for c in checks)
    return {
        "passed": passed,
        "score": 1.0 if passed else holding / len(CHECKS),
        "checks": [c.to_json(config.mode) for c in checks],
        "tolerance": TOLERANCE,
        "first_divergence": None if passed else _divergence(difference, config.mode),
        "diagnosis": diagnosis,
        "reference": {"output": list(reference["output"]), "position": reference["position"], "blocks": len(reference["blocks"]),
                      "done": reference["done"]},
    }
