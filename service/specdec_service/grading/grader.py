"""Trace-exact grading: a submitted trace against the reference recomputed from its own settings.

:func:`grade` recomputes the reference trace from the submission's ``config`` (``engine.run``)
and compares the two in document order (:mod:`.compare`): ``passed`` iff they agree (exact
fields exactly, probabilities within :data:`~.compare.TOLERANCE`). A failing trace also gets

- the **first divergence**: block, pointer, expected, got, and the sentence of the SPEC rule
  that owns the field (:func:`.rules.locate`);
- the **checks** of :mod:`.checks` (partial credit: ``score`` = share that hold);
- the **diagnosis**: every catalogued mistake (:mod:`.catalogue`) whose variant, run from the
  same config, reproduces the submission exactly; otherwise the one(s) whose trace agrees
  with it on the longest prefix, if longer than the reference's agreement.

Speed: a trace equal to the reference costs its schema validation (about 0.1 ms with
``jsonschema_rs``), one engine run and one C-level ``==``; only failing traces are compared
field by field, checked and diagnosed.
"""

from __future__ import annotations

import copy
import json
from collections import OrderedDict
from typing import Any, Optional, Sequence

from ..engine import Config, Fault, InvalidInput, State, pointer, run
from ..engine.trace import trace_of
from .catalogue import CATALOGUE, Mistake
from .checks import CheckResult, all_passed, evaluate
from .compare import TOLERANCE, Difference, first_difference
from .faulty import faulty_step
from .rules import CHECKS, locate
from .validate import parse_trace_config, validate_trace

MAX_TRACES = 1000
"""At most this many traces in one batch (``POST /v1/grade`` with ``{"traces": [...]}``)."""


def grade(trace: Any, *, diagnose: bool = True) -> dict:
    """Grade one submitted trace (``specdec-trace/1``, a JSON-shaped dict).

    Returns the report ``{"passed", "score", "checks", "tolerance", "first_divergence",
    "diagnosis", "reference"}`` described in ``docs/grading.md``. ``diagnose=False`` skips the
    catalogue (faster for failing traces).

    Raises :class:`~specdec_service.engine.InvalidInput` (HTTP 422) when the trace is malformed
    (not an object, invalid config, or not matching the grading schema), with the path of each
    fault.
    """
    config = parse_trace_config(trace)
    validate_trace(trace)
    reference = reference_trace(config)
    if trace == reference:  # C-level; valid by the schema, so no boolean hides as a number
        return _report(config, reference, all_passed(), None, [])
    difference = first_difference(reference, trace, typed=True)
    if difference is None:
        return _report(config, reference, all_passed(), None, [])
    checks = evaluate(trace, config)
    found = diagnose_trace(config, trace, difference) if diagnose else []
    return _report(config, reference, checks, difference, found)


REFERENCE_CACHE_SIZE = 128
"""How many reference traces are kept (least recently used first out): a class grades many
submissions of the same few settings. Only small sessions are kept (limit x vocabulary <= 1024)."""
_references: "OrderedDict[str, dict]" = OrderedDict()


def reference_trace(config: Config) -> dict:
    """``engine.run(config)``, remembered for the last :data:`REFERENCE_CACHE_SIZE` small
    configs. The result is shared: treat it as read-only (reports copy what they take from it)."""
    if config.limit * len(config.vocab) > 1024:
        return run(config)
    key = json.dumps(config.to_json(), sort_keys=True)
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

    Returns ``{"reports": [report, ...] (in order), "summary": {"count", "passed", "failed",
    "mean_score"}}``. Raises :class:`InvalidInput` (paths ``traces/<i>/...``) listing the faults
    of every malformed trace; then no trace is graded.
    """
    if not isinstance(traces, list) or not 1 <= len(traces) <= MAX_TRACES:
        raise InvalidInput.at(("traces",), f"must be a list of 1 to {MAX_TRACES} traces")
    reports: list[dict] = []
    faults: list[Fault] = []
    for i, trace in enumerate(traces):
        try:
            reports.append(grade(trace, diagnose=diagnose))
        except InvalidInput as error:
            faults.extend(error.prefixed("traces", i).faults)
    if faults:
        raise InvalidInput(faults)
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
    omitted). Only mode ``speculative`` has catalogued mistakes; other modes get ``[]``.
    Each entry: ``{"id", "title", "rule", "hint", "exact", "agreement"}`` where ``agreement``
    is ``{"blocks": blocks agreeing in full, "first_divergence": pointer or null}``.
    """
    if config.mode != "speculative":
        return []
    if difference is None:
        difference = first_difference(run(config), trace, typed=True)
        if difference is None:
            return []
    exact: list[Mistake] = []
    best: list[tuple[Mistake, Difference]] = []
    if difference.order[:1] < (2,):
        return []  # format or config differ: every variant agrees with the reference there
    for mistake in CATALOGUE:
        try:
            found = variant_difference(config, mistake.faults, trace)
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


def variant_difference(config: Config, faults, trace: dict) -> Optional[Difference]:
    """``first_difference(faulty_run(config, faults), trace)``, computed block by block: the
    variant stops at its first block that differs from the submission (most variants of a
    failing trace diverge early, so most are not run to the end)."""
    blocks = trace["blocks"]
    state, stale, b = State(config), None, 0
    while state.done is None:
        block, state, stale = faulty_step(state, faults, stale)
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


def _divergence(d: Difference) -> dict:
    check, rule = locate(d.path)
    block = d.path[1] if len(d.path) >= 2 and d.path[0] == "blocks" and isinstance(d.path[1], int) else None
    return {
        "block": block,
        "path": pointer(d.path),
        "expected": copy.deepcopy(d.expected),  # a part of the shared reference
        "got": d.got,
        "kind": d.kind,
        "check": check,
        "rule": rule,
    }


def _report(config: Config, reference: dict, checks: Sequence[CheckResult], difference: Optional[Difference],
            diagnosis: list) -> dict:
    passed = difference is None
    holding = sum(c.passed for c in checks)
    return {
        "passed": passed,
        "score": 1.0 if passed else holding / len(CHECKS),
        "checks": [c.to_json() for c in checks],
        "tolerance": TOLERANCE,
        "first_divergence": None if passed else _divergence(difference),
        "diagnosis": diagnosis,
        "reference": {"output": list(reference["output"]), "position": reference["position"], "blocks": len(reference["blocks"]),
                      "done": reference["done"]},
    }
