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

Speed: a trace that serialises to exactly the reference's bytes (or to them as a request body
is read: :func:`_read_as_float64`) costs one engine run (the reference, cached as its bytes for
recent configs) and two ``orjson.dumps``: it is the reference, so it needs no schema validation; any other trace costs its schema validation (about
0.03 ms with ``jsonschema_rs``) and one C-level ``==``; only failing traces are compared field
by field, checked and diagnosed. :func:`grade_many` takes the same path for each trace of a
batch (docs/bench-grading.md).
"""

from __future__ import annotations

import copy
import json
import marshal
import re
from collections import OrderedDict
from math import fsum
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
from .requests import check_batch
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
    raw, reference = _reference(config, _config_key(config))
    if _is_reference(trace, raw, config):  # the reference itself, types included: valid by construction
        return _passed(trace)
    validate_trace(trace)
    return _grade_valid(trace, config, _loaded(raw, reference), diagnose)


def _is_reference(trace: Any, raw: Optional[bytes], config: Config) -> bool:
    """Whether ``trace`` is its reference (``raw``, the reference's ``orjson`` bytes), so that
    it needs no schema validation and passes: its own bytes are ``raw``, or ``raw`` as the
    service reads a request body (:func:`_read_as_float64`). ``False`` whenever in doubt (no
    orjson, a value it cannot write); the caller then validates and compares as usual."""
    if raw is None:
        return False
    got = _bytes(trace)
    return got is not None and (got == raw or got == _read_as_float64(raw, config)) and not _may_hold_non_finite(trace)


_NON_FINITE = (re.compile(rb"g.{6}[\xf0-\xff][\x7f\xff]", re.S), re.compile(rb"\xe7.{6}[\xf0-\xff][\x7f\xff]", re.S))
"""A float in :mod:`marshal`'s bytes (type code ``g``, or ``g`` with the reference flag 0x80,
``\xe7``, then its 8 IEEE 754 bytes little-endian) whose exponent bits are all set: a NaN or an
infinity. Two patterns, each starting with its literal type code, which the regular expression
engine finds fast (one pattern starting with the class ``[g\xe7]`` costs 20 us a trace)."""


def _may_hold_non_finite(trace: Any) -> bool:
    """Whether ``trace`` may hold a NaN or an infinity. orjson writes those as ``null``, so a
    trace with a NaN where its reference has ``null`` (a block's missing ``bonus``, a greedy
    block's ``ratio``) would have the reference's bytes; only an in-process caller can pass
    one (a request body cannot hold one, ``api.bodies``). Read from :mod:`marshal`'s bytes of
    the trace: about 12 us for an eight-token trace (a walk in Python costs 30). ``True`` when
    in doubt (a value marshal cannot write, a string holding such bytes), which only sends the
    trace to the schema (which refuses a NaN, ``validate._non_finite``) and the comparison."""
    try:
        data = marshal.dumps(trace)
    except ValueError:  # a subclass or a Decimal: marshal writes only the built-in types
        return True
    return any(pattern.search(data) is not None for pattern in _NON_FINITE)


def _read_as_float64(raw: bytes, config: Config) -> Optional[bytes]:
    """The bytes of the reference ``raw`` as read from a request body by ``POST /v1/grade``:
    a number with an integral value is an ``int`` however written (``api.bodies.parse_float64``),
    so ``1.0`` and ``0.0`` come back as ``1`` and ``0``. In ``orjson``'s shortest round-trip
    form a float ends in ``.0`` exactly when it is integral and written without an exponent;
    this drops those ``.0`` (the form read back compares ``==`` with the reference, and its
    numbers are still numbers, so it satisfies the grading schema; the engine writes no
    ``-0.0``, and a form that is not the body's only costs the validation). ``None`` when a
    label holds a ``.`` (a string of the trace could then hold ``.0,``; the trace's other
    strings are names and hex digits): such a trace is validated as usual."""
    if any("." in label for label in config.vocab):
        return None
    return _INTEGRAL_FLOAT.sub(b"", raw)


_INTEGRAL_FLOAT = re.compile(rb"\.0(?=[,\]}])")
"""The ``.0`` that ends an integral float in ``orjson``'s output (followed by ``,``, ``]`` or ``}``)."""


def _bytes(obj: Any) -> Optional[bytes]:
    """``orjson.dumps(obj)``, or ``None`` when orjson is not installed or cannot write ``obj``
    (a lone surrogate, a value that is not JSON): then nothing is compared by bytes."""
    if orjson is None:
        return None
    try:
        return orjson.dumps(obj)
    except (TypeError, orjson.JSONEncodeError):
        return None


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


GRADE_BUDGET = BUDGETS["POST /v1/grade"]
"""The work budget of one grading request (:mod:`specdec_service.budget`)."""


def drafted_width(config: Config) -> int:
    """The proposals a block of ``config`` drafts at most: ``width``, times ``drafts`` in mode tree
    (SPEC 11: D chains), the width the block units of a cost count."""
    return config.width * config.drafts if config.mode == "tree" else config.width


def reference_cost(config: Config) -> int:
    """The cost of the reference run of ``config`` in block units: at most ``limit`` blocks, each
    weighted :data:`~specdec_service.budget.GRADE_REFERENCE_WEIGHT` (a tree block counts its D
    chains: :func:`drafted_width`)."""
    return GRADE_REFERENCE_WEIGHT * session_units(drafted_width(config), len(config.vocab), config.limit)


def trace_cost(config: Config, blocks: int) -> int:
    """The cost of grading a trace of ``blocks`` blocks beyond its reference run, in block
    units, assuming it fails: the checks (:data:`~specdec_service.budget.GRADE_CHECK_RUNS`
    runs of its blocks) and the diagnosis (each catalogued variant of the config's mode runs
    until its first block that differs from the submission: at most ``min(blocks, limit) + 1``
    blocks)."""
    runs = sum(m.mode == config.mode for m in CATALOGUE) + GRADE_CHECK_RUNS
    return runs * session_units(drafted_width(config), len(config.vocab), min(blocks, config.limit) + 1)


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


def _reference(config: Config, key: bytes | str) -> tuple[Optional[bytes], Optional[dict]]:
    """``(raw, trace)``: the reference of ``config`` (whose :func:`_config_key` is ``key``) as
    its ``orjson`` bytes ``raw`` and as a dict ``trace``; at least one is not ``None``.

    A fresh run gives both; a cache hit gives the bytes only (:func:`_loaded` reads the dict back
    when a submission differs). The cache keeps bytes, not the trace's hundred-odd containers:
    one object the garbage collector never scans, immutable so no caller can corrupt it, and the
    fresh trace dies young (a cache of dicts promoted every graded reference into the oldest
    generation, whose collections then scanned every live trace). A trace ``orjson`` cannot
    write (a Decimal of a custom model) is kept as the dict (``raw`` is ``None``): treat it as
    read-only, as every ``trace`` returned here."""
    small = config.limit * len(config.vocab) <= 1024
    if small:
        found = _references.get(key)
        if found is not None:
            _references.move_to_end(key)
            return (found, None) if isinstance(found, bytes) else (None, found)
    trace = run(config)
    raw = _bytes(trace)
    if small:
        _references[key] = trace if raw is None else raw
        if len(_references) > REFERENCE_CACHE_SIZE:
            _references.popitem(last=False)
    return raw, trace


def _loaded(raw: Optional[bytes], trace: Optional[dict]) -> dict:
    """The reference as a dict: ``trace``, or ``raw`` read back (``orjson`` writes every float
    as its shortest round-trip repr, so the values and their types come back unchanged; the
    engine's traces hold no tuple and no NaN)."""
    return trace if trace is not None else orjson.loads(raw)


def reference_trace(config: Config) -> dict:
    """``engine.run(config)``, remembered for the last :data:`REFERENCE_CACHE_SIZE` small
    configs. Treat the result as read-only (it may be shared; reports copy what they take
    from it)."""
    return _loaded(*_reference(config, _config_key(config)))


def grade_many(traces: Any, *, diagnose: bool = True) -> dict:
    """Grade a batch: ``traces`` is a list of 1..:data:`MAX_TRACES` traces.

    The work is checked against :data:`GRADE_BUDGET` before it starts, in two steps: every
    config is read and the reference runs of the distinct configs are costed before any is run
    (each distinct config's reference is run once; over the budget, every trace is validated
    first, so a malformed trace is reported before the budget); then every trace is compared
    with its reference (one comparison each; a trace with exactly the reference's bytes passes
    unvalidated, as in :func:`grade`, any other is validated, and the faults of every malformed
    trace are raised before any is graded), and the checks and diagnoses of the failing ones are
    costed (:func:`batch_cost`) before any is done.

    Returns ``{"reports": [report, ...] (in order), "summary": {"count", "passed", "failed",
    "mean_score"}}``. Raises :class:`InvalidInput` (paths ``traces/<i>/...``) listing the faults
    of every malformed trace, and :class:`~specdec_service.budget.OverBudget` (pointer
    ``#/traces``) when the batch costs more than the budget; then no report is returned.
    """
    check_batch({"traces": traces})
    configs: list[Optional[Config]] = []
    faults: dict[int, list[Fault]] = {}
    for i, trace in enumerate(traces):
        try:
            configs.append(parse_trace_config(trace))
        except InvalidInput as error:
            configs.append(None)
            faults[i] = error.prefixed("traces", i).faults
    keys = [None if config is None else _config_key(config) for config in configs]
    distinct = {key: config for key, config in zip(keys, configs) if config is not None}
    budget = GRADE_BUDGET
    if faults or _batch_cost(distinct, []) > budget.limit:
        # Nothing is run: every fault of the batch first (a 422 of invalid input wins over the budget).
        for i, trace in enumerate(traces):
            if i not in faults:
                _validate_at(trace, i, faults)
        _raise(faults)
        budget.check(_batch_cost(distinct, []), pointer="#/traces")
    # Within the budget of the references: run each distinct one once. A trace with exactly its
    # reference's bytes passes unvalidated, as in grade(); any other is validated (all faults are
    # raised before any grading) and compared.
    seen: dict = {}
    reports: list[Optional[dict]] = []
    failing: list[tuple[int, dict, Config, dict, Difference]] = []
    for i, (trace, config, key) in enumerate(zip(traces, configs, keys)):
        raw, reference = seen.get(key) or _reference(config, key)
        if _is_reference(trace, raw, config):
            seen[key] = (raw, None)  # the trace dict dies here (see _reference)
            reports.append(_passed(trace))
            continue
        reference = _loaded(raw, reference)
        seen[key] = (raw, reference)
        reports.append(None)
        if not _validate_at(trace, i, faults):
            difference = _difference(trace, reference)
            if difference is None:
                reports[i] = _passed(reference)
            else:
                failing.append((i, trace, config, reference, difference))
    _raise(faults)
    budget.check(_batch_cost(distinct, [(trace, config) for _, trace, config, _, _ in failing]), pointer="#/traces")
    for i, trace, config, reference, difference in failing:
        reports[i] = _failed(trace, config, reference, difference, diagnose)
    passed = sum(r["passed"] for r in reports)
    return {
        "reports": reports,
        "summary": {
            "count": len(reports),
            "passed": passed,
            "failed": len(reports) - passed,
            # math.fsum: correctly rounded, so the same bits in every Python (sum() of floats is
            # compensated from Python 3.12 on) and on every machine
            "mean_score": fsum(r["score"] for r in reports) / len(reports),
        },
    }


def _validate_at(trace: dict, i: int, faults: dict[int, list[Fault]]) -> bool:
    """Validate trace ``i`` of a batch; record its faults (paths ``traces/<i>/...``) in
    ``faults``. Returns whether it had any."""
    try:
        validate_trace(trace)
    except InvalidInput as error:
        faults[i] = error.prefixed("traces", i).faults
        return True
    return False


def _raise(faults: dict[int, list[Fault]]) -> None:
    """Raise :class:`InvalidInput` with the faults of every malformed trace, in batch order."""
    if faults:
        raise InvalidInput([fault for i in sorted(faults) for fault in faults[i]])


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
        "checks": [c.to_json(config.mode) for c in checks],
        "tolerance": TOLERANCE,
        "first_divergence": _divergence(difference, config.mode),
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
