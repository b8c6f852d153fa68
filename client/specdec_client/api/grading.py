"""The grading routes (``docs/grading.md``): traces, distributions, suites."""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional, Union
from urllib.parse import quote

from ..harness import ProgramTest, grade_program
from ..progress import Progress
from ..reports import DistributionReport, GradeBatch, GradeReport, Suite, SuiteSummary
from ..types import Config, Trace
from . import ApiGroup

def trace_body(trace: Union[Trace, Mapping[str, Any]]) -> dict[str, Any]:
    """The JSON of a trace: a :class:`Trace` as read or built, a mapping as is."""
    return trace.to_dict() if isinstance(trace, Trace) else dict(trace)


class GradingApi(ApiGroup):
    """Grading student implementations against the reference traces."""

    def grade(self, trace: Union[Trace, Mapping[str, Any]]) -> GradeReport:
        """``POST /v1/grade`` with one trace: its :class:`GradeReport`
        (``passed``, ``score``, ``checks``, ``first_divergence``,
        ``diagnosis``, ``reference``)."""
        return self.transport.call("POST", "/v1/grade", GradeReport.from_dict, json=trace_body(trace))

    def grade_many(self, traces: Iterable[Union[Trace, Mapping[str, Any]]]) -> GradeBatch:
        """``POST /v1/grade`` with ``{"traces": [...]}`` (1-1000 traces): a
        :class:`GradeBatch` (``reports`` in request order, ``summary``)."""
        return self.transport.call("POST", "/v1/grade", GradeBatch.from_dict,
                                   json={"traces": [trace_body(t) for t in traces]})

    def grade_distribution(self, **payload: Any) -> DistributionReport:
        """``POST /v1/grade/distribution`` with the keyword arguments as the
        body (``config``, ``m``, ``samples`` or ``counts``, ...): the
        goodness-of-fit :class:`DistributionReport`."""
        if isinstance(payload.get("config"), Config):
            payload["config"] = payload["config"].to_dict()
        return self.transport.call("POST", "/v1/grade/distribution", DistributionReport.from_dict, json=payload)

    def suites(self) -> list[SuiteSummary]:
        """``GET /v1/grade/suites``: the assignment suites (``name``, ``description``, ``count``)."""
        return self.transport.call("GET", "/v1/grade/suites", lambda b: [SuiteSummary.from_dict(s) for s in b["suites"]])

    def suite(self, name: str = "standard") -> Suite:
        """``GET /v1/grade/suites/{name}``: the :class:`Suite` with its configs.
        Raises :class:`~specdec_client.errors.NotFound` (404) for an unknown name."""
        return self.transport.call("GET", "/v1/grade/suites/" + quote(name, safe=""), Suite.from_dict)

    def grade_program(self, command: str, *, suite: str = "standard", timeout: float = 10.0, jobs: int = 1,
                      cwd: Optional[str] = None, progress: Optional[Progress] = None) -> list[ProgramTest]:
        """Run the shell ``command`` (a student's program, any language) once per config of
        ``suite``, config JSON on its stdin and one trace on its stdout, and grade the traces in
        one ``POST /v1/grade`` batch: a :class:`~specdec_client.harness.ProgramTest` per config
        (``passed``, ``score``, ``problem``, ``report``, ``message()``). See
        :func:`specdec_client.harness.grade_program` for the errors and ``progress``."""
        return grade_program(self, command, suite=suite, timeout=timeout, jobs=jobs, cwd=cwd, progress=progress)
