"""``GET /metrics``: the service's Prometheus metrics (:mod:`specdec_service.observe`)."""

from __future__ import annotations

from flask import Response

from ..observe import METRICS_CONTENT_TYPE, exposition
from .routes import ApiBlueprint

blueprint = ApiBlueprint("operations", __name__, tag="operations",
                         description="Metrics for monitoring (Prometheus).")


@blueprint.operation(
    "GET", "/metrics", summary="Metrics (Prometheus)", operation_id="getMetrics",
    description="The service's metrics in the Prometheus text exposition format (version 0.0.4): "
                "`specdec_http_requests_total` by `method`, `route` (the route's path pattern, e.g. "
                "`/v1/grade/suites/<name>`; `unmatched` for a path no route serves or a method its route does not take) and `status`; the latency "
                "histogram `specdec_http_request_duration_seconds` by `method` and `route`; "
                "`specdec_http_requests_in_progress`; `specdec_problems_total` (every problem answer) by `status` and "
                "problem `type`; `specdec_work_units_total` (the budget units spent by the grading and analysis "
                "routes) by `method`, `route` and `unit`. Under gunicorn the counts are summed over its worker "
                "processes, whichever worker answers (docs/deploy.md, \"Metrics\").",
    ok={"type": "string"}, ok_description="The metrics (Prometheus text format).", ok_mimetype="text/plain")
def prometheus_metrics():
    """The metrics as text (:func:`specdec_service.observe.exposition`)."""
    return Response(exposition(), content_type=METRICS_CONTENT_TYPE)
