"""The API groups of the SDK: one class per group of routes, over a transport.

Each group (:class:`~.meta.MetaApi`, :class:`~.draws.DrawsApi`,
:class:`~.sessions.SessionsApi`, :class:`~.runs.RunsApi`,
:class:`~.grading.GradingApi`, :class:`~.analysis.AnalysisApi`) holds a :class:`~specdec_client.transport.Transport`
and has one method per route, returning typed records
(:mod:`specdec_client.types`, :mod:`specdec_client.reports`). A group can be
used alone (``SessionsApi(Transport(url)).step(state)``);
:class:`specdec_client.Client` is all of them over one transport.

To add a group (e.g. ``analysis``): a module here with a class deriving from
:class:`ApiGroup`, one method per route calling ``self.transport.call(method,
path, Record.from_dict, json=...)``, and the class added to the bases of
:class:`specdec_client.Client`.
"""

from __future__ import annotations

from ..transport import Transport


class ApiGroup:
    """Base of the API groups: ``transport`` sends the requests."""

    def __init__(self, transport: Transport):
        self.transport = transport
