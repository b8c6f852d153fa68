"""A program written against the Python client that openapi-python-client generates from
``openapi.yaml`` (package ``specdec_api_client``, see tests/test_clients.py), as a user would
write it: it steps a session to its end, runs the same session whole, grades that trace (alone
and in a batch), grades a sampler by its output distribution and analyses the config exactly.

``python python_session.py BASE_URL`` prints one JSON object: each answer as the generated
models read it, written back with their ``to_dict()`` (so a field the models lose or change
shows up in tests/test_clients.py's comparison with the service's own answers).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import httpx
from specdec_api_client import Client
from specdec_api_client.api.analysis import analyze
from specdec_api_client.api.grading import grade_distribution, grade_trace
from specdec_api_client.api.runs import create_run
from specdec_api_client.api.service import get_health
from specdec_api_client.api.sessions import step_session
from specdec_api_client.models import (
    AnalysisIn,
    AnalysisOut,
    DistributionCountsIn,
    DistributionOut,
    GradeBatchIn,
    GradeBatchOut,
    GradeReportOut,
    HealthOut,
    RunIn,
    StateIn,
    StepOut,
    Trace,
)

CONFIG = {"draft": "biased", "seed": 1}
"""The README's minimal session (target toy, width 3, limit 8 by default): SPEC section 4's worked example."""
COUNTS = {"config": {"draft": "biased", "seed": 0}, "m": 1, "counters": {"accepted": 1500, "draft_steps": 2700},
          "counts": [{"prefix": ["A"], "count": 497}, {"prefix": ["B"], "count": 305}, {"prefix": ["C"], "count": 198}]}


def expect(value: Any, kind: type) -> Any:
    """``value`` when the generated function parsed the answer as ``kind`` (not a problem, not None)."""
    if not isinstance(value, kind):
        raise SystemExit(f"expected a {kind.__name__}, got {value!r}")
    return value


def main(base_url: str) -> dict[str, Any]:
    client = Client(base_url=base_url, raise_on_unexpected_status=True, timeout=httpx.Timeout(60.0))
    health = expect(get_health.sync(client=client), HealthOut)

    steps: list[StepOut] = []
    state = StateIn.from_dict({"config": CONFIG})
    while True:
        step = expect(step_session.sync(client=client, body=state), StepOut)
        steps.append(step)
        if step.done is not None:
            break
        state = StateIn.from_dict(step.state.to_dict())  # the returned state, sent back unchanged

    trace = expect(create_run.sync(client=client, body=RunIn.from_dict({"config": CONFIG})), Trace)
    report = expect(grade_trace.sync(client=client, body=trace), GradeReportOut)
    batch = expect(grade_trace.sync(client=client, body=GradeBatchIn(traces=[trace, trace])), GradeBatchOut)
    distribution = expect(grade_distribution.sync(client=client, body=DistributionCountsIn.from_dict(COUNTS)),
                          DistributionOut)
    analysis = expect(analyze.sync(client=client, body=AnalysisIn.from_dict({"config": {"draft": "biased"}})),
                      AnalysisOut)
    return {"health": health.to_dict(), "steps": [step.to_dict() for step in steps], "run": trace.to_dict(),
            "grade": report.to_dict(), "batch": batch.to_dict(), "distribution": distribution.to_dict(),
            "analysis": analysis.to_dict()}


if __name__ == "__main__":
    json.dump(main(sys.argv[1]), sys.stdout)
