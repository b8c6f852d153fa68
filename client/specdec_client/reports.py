"""Typed views of the grading routes' answers (``docs/grading.md``).

Like :mod:`specdec_client.types`, every class is a frozen dataclass whose
fields carry the JSON keys' names and values (lists as tuples, nested
objects as records) and keeps the JSON object it was read from
(``to_dict()`` gives it back). ``from_dict`` raises ``KeyError``,
``TypeError`` or ``ValueError`` for a malformed object (the transport turns
those into :class:`~specdec_client.errors.InvalidResponse`).

Backward compatibility: before these types the grading methods returned the
JSON dicts, so every report also reads like one: ``report["passed"]``,
``report.get("diagnosis")`` (:class:`JsonLike`) give the raw JSON values.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, fields
from typing import Any, Callable, Mapping, Optional, TypeVar, cast

from .types import Config, Record, _tuple

R = TypeVar("R", bound="JsonLike")


class JsonLike:
    """Base of the report records: ``from_dict`` reads each field from the
    key of its name (through the record's ``convert`` functions, by field
    name, where the JSON value is not the field's value as is), and
    ``record[key]``/``record.get(key, default)`` read the JSON object a
    record was read from (the raw values)."""

    raw: Optional[dict[str, Any]]
    convert: Mapping[str, Callable[[Any], Any]] = {}

    @classmethod
    def from_dict(cls: type[R], d: Mapping[str, Any]) -> R:
        """The record of the JSON object ``d`` (kept as ``raw``); ``KeyError``,
        ``TypeError`` or ``ValueError`` when ``d`` is malformed."""
        return cast(R, _read(cls, d, **cls.convert))

    def _json(self) -> Mapping[str, Any]:
        if self.raw is not None:
            return self.raw
        to_dict: Callable[[], Mapping[str, Any]] = getattr(self, "to_dict")  # Record's, the other base
        return to_dict()

    def __getitem__(self, key: str) -> Any:
        return copy.deepcopy(self._json()[key])

    def get(self, key: str, default: Any = None) -> Any:
        """The raw JSON value of ``key`` (a copy), or ``default``."""
        return copy.deepcopy(self._json().get(key, default))


def _read(cls: Any, d: Mapping[str, Any], **convert: Callable[[Any], Any]) -> Any:
    """``cls`` from the JSON object ``d``: each field from the key of its
    name, through ``convert[name]`` when given; ``d`` kept as ``raw``."""
    if not isinstance(d, Mapping):
        raise TypeError(f"expected a JSON object, got {type(d).__name__}")
    values = {f.name: convert[f.name](d[f.name]) if f.name in convert else d[f.name]
              for f in fields(cls) if f.name != "raw"}
    return cls(**values, raw=dict(d))


def _many(cls: Any) -> Callable[[Any], tuple[Any, ...]]:
    return lambda items: tuple(cls.from_dict(item) for item in _tuple(items))


def _optional(cls: Any) -> Callable[[Any], Any]:
    return lambda value: None if value is None else cls.from_dict(value)


@dataclass(frozen=True)
class Failure(JsonLike, Record):
    """Where a check first fails: ``pointer`` into the trace, ``detail``, and ``explanation``
    (the check's rule in one plain sentence)."""

    pointer: str
    detail: str
    explanation: str


@dataclass(frozen=True)
class Check(JsonLike, Record):
    """One named check of a grade: ``passed``, the failing ``blocks``,
    ``trace`` (fails on a trace-level field), ``first_failure``, ``rule``
    (the rule checked and its SPEC section)."""

    name: str
    passed: bool
    blocks: tuple[int, ...]
    trace: bool
    first_failure: Optional[Failure]
    rule: str

    convert = dict(blocks=_tuple, first_failure=_optional(Failure))


@dataclass(frozen=True)
class FirstDivergence(JsonLike, Record):
    """The first field where a submitted trace differs from the reference:
    ``block`` (index or None), ``path`` (JSON Pointer), ``expected``,
    ``got``, ``kind`` (value, type, missing, unexpected), ``check``, ``rule`` (with its SPEC
    section) and ``explanation`` (the same rule in one plain sentence, for the student)."""

    block: Optional[int]
    path: str
    expected: Any
    got: Any
    kind: str
    check: str
    rule: str
    explanation: str


@dataclass(frozen=True)
class Agreement(JsonLike, Record):
    """How far a catalogued mistake reproduces a trace: whole ``blocks``,
    and the pointer of its ``first_divergence`` (None when exact)."""

    blocks: int
    first_divergence: Optional[str]


@dataclass(frozen=True)
class Diagnosis(JsonLike, Record):
    """A catalogued mistake that explains a submission (``docs/grading.md``)."""

    id: str
    title: str
    rule: str
    hint: str
    exact: bool
    agreement: Agreement

    convert = dict(agreement=Agreement.from_dict)


@dataclass(frozen=True)
class Reference(JsonLike, Record):
    """The reference run of a graded trace's settings: ``output``,
    ``position``, number of ``blocks``, ``done``."""

    output: tuple[str, ...]
    position: int
    blocks: int
    done: str

    convert = dict(output=_tuple)


@dataclass(frozen=True)
class GradeReport(JsonLike, Record):
    """The grade of one trace (``POST /v1/grade``): ``passed``, ``score``
    (share of the checks that hold, 0-1), ``checks``, ``tolerance``,
    ``first_divergence``, ``diagnosis``, ``reference``."""

    passed: bool
    score: float
    checks: tuple[Check, ...]
    tolerance: float
    first_divergence: Optional[FirstDivergence]
    diagnosis: tuple[Diagnosis, ...]
    reference: Reference

    convert = dict(score=float, checks=_many(Check), tolerance=float, first_divergence=_optional(FirstDivergence),
                   diagnosis=_many(Diagnosis), reference=Reference.from_dict)


@dataclass(frozen=True)
class GradeSummary(JsonLike, Record):
    """A batch's totals: ``count``, ``passed``, ``failed``, ``mean_score``."""

    count: int
    passed: int
    failed: int
    mean_score: float

    convert = dict(mean_score=float)


@dataclass(frozen=True)
class GradeBatch(JsonLike, Record):
    """The grades of a batch, in request order, and their summary."""

    reports: tuple[GradeReport, ...]
    summary: GradeSummary

    convert = dict(reports=_many(GradeReport), summary=GradeSummary.from_dict)


@dataclass(frozen=True)
class Cell(JsonLike, Record):
    """One output prefix of a distribution grade: counts, shares and the
    Pearson ``residual`` (observed - expected) / sqrt(expected)."""

    prefix: tuple[str, ...]
    observed: int
    expected: float
    observed_share: float
    expected_share: float
    residual: float

    convert = dict(prefix=_tuple)


@dataclass(frozen=True)
class ImpossiblePrefix(JsonLike, Record):
    """An observed prefix the target can never produce."""

    prefix: tuple[str, ...]
    observed: int

    convert = dict(prefix=_tuple)


@dataclass(frozen=True)
class Acceptance(JsonLike, Record):
    """The acceptance rate from summed counters against its exact expectation."""

    accepted: int
    draft_steps: int
    observed_rate: Optional[float]
    expected_rate: Optional[float]
    first_position_rate: Optional[float]


@dataclass(frozen=True)
class DistributionReport(JsonLike, Record):
    """The distribution-level grade (``POST /v1/grade/distribution``): the
    chi-square test (``statistic``, ``dof``, ``p_value``, ``alpha``), the
    total variation, the cells, ``too_long`` (samples no session can output: they fail),
    ``reason`` (why it failed, ``None`` iff passed), and the acceptance rate when counters were sent."""

    passed: bool
    conclusive: bool
    m: int
    length: int
    samples: int
    test: str
    statistic: float
    dof: int
    p_value: float
    alpha: float
    total_variation: float
    cells: int
    tested_cells: int
    pooled_cells: Optional[str]
    pooled_expected: float
    min_expected: float
    impossible: tuple[ImpossiblePrefix, ...]
    over_represented: tuple[Cell, ...]
    under_represented: tuple[Cell, ...]
    too_long: int
    reason: Optional[str]
    acceptance: Optional[Acceptance]

    convert = dict(impossible=_many(ImpossiblePrefix), over_represented=_many(Cell), under_represented=_many(Cell),
                   acceptance=_optional(Acceptance))


@dataclass(frozen=True)
class SuiteSummary(JsonLike, Record):
    """An entry of ``GET /v1/grade/suites``: ``name``, its newest ``version`` and every one of
    its ``versions`` (``name@N`` is version N for ever), the rule families it ``covers``,
    ``description``, ``count`` of configs."""

    name: str
    version: int
    versions: tuple[int, ...]
    covers: tuple[str, ...]
    description: str
    count: int

    convert = dict(versions=_tuple, covers=_tuple)


@dataclass(frozen=True)
class SuiteConfig(JsonLike, Record):
    """One config of a suite: ``id``, the complete ``config`` and the SPEC
    rules its reference trace ``exercises``."""

    id: str
    config: Config
    exercises: tuple[str, ...]

    convert = dict(config=Config.from_dict, exercises=_tuple)


@dataclass(frozen=True)
class Suite(JsonLike, Record):
    """An assignment suite (``GET /v1/grade/suites/{name}``): ``name``, ``version``, the rule
    families it ``covers``, ``description``, ``configs``."""

    name: str
    version: int
    covers: tuple[str, ...]
    description: str
    configs: tuple[SuiteConfig, ...]

    convert = dict(configs=_many(SuiteConfig), covers=_tuple)

    @property
    def pinned(self) -> str:
        """``name@version``: the name that means this version of the suite for ever."""
        return f"{self.name}@{self.version}"
