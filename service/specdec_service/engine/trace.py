"""Whole runs and the trace format ``specdec-trace/1``.

A trace is a whole session from the empty prefix to its end::

    {"format": "specdec-trace/1", "config": {...}, "blocks": [...],
     "output": [...], "counters": {...}, "position": n, "done": "limit"}

``docs/trace-format.md`` documents every field; :data:`TRACE_SCHEMA_PATH`
is its JSON Schema (draft 2020-12), which every trace of :func:`run`
satisfies.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from .block_loop import step
from .state import Config, State, parse_config

TRACE_FORMAT = "specdec-trace/1"
"""The name and version of the trace format."""
TRACE_SCHEMA_PATH = Path(__file__).with_name("trace.schema.json")
"""The JSON Schema of the trace format, shipped with the package."""


def run(config: Config) -> dict:
    """Decode a whole session: blocks from the empty prefix until the
    session is done (limit or EOS, SPEC section 6).

    Returns the trace dict (format :data:`TRACE_FORMAT`). At most ``limit``
    (<= 256) blocks are produced, since each block commits at least one token.
    """
    state = State(config)
    blocks = []
    while state.done is None:
        result = step(state)
        blocks.append(result.block)
        state = result.state
    return trace_of(state, blocks)


def trace_of(state: State, blocks: list) -> dict:
    """The trace of a session that ended in ``state`` after ``blocks``."""
    return {
        "format": TRACE_FORMAT,
        "config": state.config.to_json(),
        "blocks": blocks,
        "output": state.labels(),
        "counters": state.counters.to_json(),
        "position": state.position,
        "done": state.done,
    }


def run_json(config: Any) -> dict:
    """:func:`run` on a config in its JSON form (see :func:`~.state.parse_config`).

    Raises :class:`~.errors.InvalidInput` for an invalid config.
    """
    return run(parse_config(config))


@lru_cache(maxsize=1)
def trace_schema() -> dict:
    """The JSON Schema of ``specdec-trace/1`` as a dict."""
    return json.loads(TRACE_SCHEMA_PATH.read_text(encoding="utf-8"))
