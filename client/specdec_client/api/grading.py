"""The grading routes (``docs/grading.md``): traces, distributions, suites."""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional, Union
from urllib.parse import quote

from ..harness import ProgramTest, grade_program
from ..sampler_grading import DEFAULT_SAMPLES, SampleTest, grade_sampler
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
        goodness-of-fit :class:`DistributionReport`. The seed does not matter
        to the test (docs/grading.md): ``config`` may leave it out."""
        if isinstance(payload.get("config"), Config):
            payload["config"] = payload["config"].to_dict()
        return self.transport.call("POST", "/v1/grade/distribution", DistributionReport.from_dict, json=payload)

    def grade_samples(self, config: Union[Config, Mapping[str, Any]], samples: Iterable[Iterable[str]], *,
                      alpha: Optional[float] = None, counters: Optional[Mapping[str, int]] = None) -> dict[str, Any]:
        """``POST /v1/grade/samples``: whole sampled sessions (lists of token labels) tested
        against the target's law at every position (docs/grading.md, "Grading by samples"). The
        report as JSON: ``passed``, ``reason``, ``lengths``, ``most_deviating``, ``mistake``, ...
        ``draft`` and ``seed`` may be left out of ``config``; ``counters`` ask for the
        acceptance rate. Raises :class:`~specdec_client.errors.InvalidInput` (422) naming a bad field."""
        body: dict[str, Any] = {"config": config.to_dict() if isinstance(config, Config) else dict(config),
                                "samples": [list(s) for s in samples]}
        if alpha is not None:
            body["alpha"] = alpha
        if counters is not None:
            body["counters"] = dict(counters)
        result: dict[str, Any] = self.transport.call("POST", "/v1/grade/samples", lambda b: b, json=body)
        return result

    def grade_sampler(self, fn: Any = None, *, command: Optional[str] = None, suite: str = "standard",
                      samples: int = DEFAULT_SAMPLES, seed: int = 0, timeout: float = 60.0, cwd: Optional[str] = None,
                      progress: Optional[Progress] = None,
                      configs: Optional[list[tuple[str, Mapping[str, Any]]]] = None,
                      modes: Optional[list[str]] = None, jobs: int = 1) -> list[SampleTest]:
        """Grade a sampler by its samples on every config of ``suite`` with an output law: the
        Python function ``fn`` (called ``samples`` times per config as ``fn(target=, draft=,
        width=, limit=, eos=, rng=)``, plus ``mode=``, ``drafts=``, ``sampling=`` when it takes
        them, models as :class:`~specdec_client.sampler_grading.ModelView`) or
        the shell ``command`` (run once per config, ``{"config", "samples", "seed"}`` on stdin,
        one JSON list of labels per line on stdout). A
        :class:`~specdec_client.sampler_grading.SampleTest` per config (``passed``, ``problem``,
        ``report``, ``message()``); ``configs`` (``[(id, config)]``) grades those configs instead
        of the suite's, ``modes`` keeps only the configs of those modes, ``jobs`` runs that many
        programs at once (``command`` only); see
        :func:`specdec_client.sampler_grading.grade_sampler`."""
        return grade_sampler(self, fn=fn, command=command, suite=suite, samples=samples, seed=seed, timeout=timeout,
                             cwd=cwd, progress=progress, configs=configs, modes=modes, jobs=jobs)

    def suites(self) -> list[SuiteSummary]:
        """``GET /v1/grade/suites``: the assignment suites (``name``, ``description``, ``count``)."""
        return self.transport.call("GET", "/v1/grade/suites", lambda b: [SuiteSummary.from_dict(s) for s in b["suites"]])

    def suite(self, name: str = "standard") -> Suite:
        """``GET /v1/grade/suites/{name}``: the :class:`Suite` with its configs (``name`` its
        newest version, ``name@N`` version N, which never changes). Raises :class:`~specdec_client.errors.NotFound` (404) for an unknown name."""
        return self.transport.call("GET", "/v1/grade/suites/" + quote(name, safe=""), Suite.from_dict)

    def grade_program(self, command: str, *, suite: str = "standard", timeout: float = 10.0, jobs: int = 1,
                      cwd: Optional[str] = None, progress: Optional[Progress] = None,
                      modes: Optional[list[str]] = None) -> list[ProgramTest]:
        """Run the shell ``command`` (a student's program, any language) once per config of
        ``suite`` (a name, or ``name@N`` for version N), config JSON on its stdin and one trace on
        its stdout, and grade the traces in one ``POST /v1/grade`` batch: a
        :class:`~specdec_client.harness.ProgramTest` per config (``passed``, ``score``,
        ``problem``, ``report``, ``message()``); ``modes`` keeps only the configs of those modes.
        See :func:`specdec_client.harness.grade_program` for the errors and ``progress``."""
        return grade_program(self, command, suite=suite, timeout=timeout, jobs=jobs, cwd=cwd, progress=progress,
                             modes=modes)
