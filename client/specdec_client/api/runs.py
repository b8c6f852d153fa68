"""``POST /v1/runs``: a whole session as a trace."""

from __future__ import annotations

from typing import Any, Mapping, Union

from ..types import Config, Trace, as_config
from . import ApiGroup


class RunsApi(ApiGroup):
    """Whole sessions."""

    def run(self, config: Union[Config, Mapping[str, Any], None] = None, **settings: Any) -> Trace:
        """``POST /v1/runs``: a whole session from the empty prefix to its end
        (the ``specdec-trace/1`` trace). Settings as a :class:`Config`, a
        mapping and/or keywords (``draft`` and ``seed`` required)."""
        body = {"config": as_config(config, **settings).to_dict()}
        return self.transport.call("POST", "/v1/runs", Trace.from_dict, json=body)
