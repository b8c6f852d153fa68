"""What ``specdec grade`` prints and writes, whatever it grades (trace files, a program run on a
suite, a sampler's samples): the JSON records, the table of configs followed by the message of
every failed one, Gradescope's results file, and the exit status (:mod:`.exits`: 0 when every
file or config passed, else 1)."""

from __future__ import annotations

import json
import sys
from typing import Any, Callable, Optional, Sequence

from .exits import FAILED, OK


def write_json(records: list[dict[str, Any]]) -> None:
    """``--json``: the records on standard output, indented, one document."""
    sys.stdout.write(json.dumps(records, indent=2) + "\n")


def config_lines(tests: Sequence[Any], columns: str, cells: Callable[[Any], str], summary: str) -> list[str]:
    """The table of a grade by configs: a header (``CONFIG``, ``RESULT``, then ``columns``), one
    row a test (its ``id``, ``pass`` or ``FAIL``, then ``cells(test)``), then a blank line and
    ``message()`` of every failed test, then a blank line and ``summary``. ``tests`` have
    ``id``, ``passed`` and ``message()`` (a :class:`~specdec_client.harness.ProgramTest` or a
    :class:`~specdec_client.sampler_grading.SampleTest`); there is at least one."""
    width = max(len(t.id) for t in tests)
    lines = [f"{'CONFIG'.ljust(width)}  RESULT  {columns}"]
    lines += [f"{t.id.ljust(width)}  {'pass' if t.passed else 'FAIL':6}  {cells(t)}" for t in tests]
    for t in tests:
        if not t.passed:
            lines += ["", t.message()]
    return lines + ["", summary]


def finish(gradescope: Optional[str], results: Callable[[], dict[str, Any]], passed: bool) -> int:
    """Write Gradescope's results (``results()``) to the path ``gradescope`` when one is given,
    and return the exit status: :data:`~specdec_client.exits.OK` when ``passed``, else
    :data:`~specdec_client.exits.FAILED`."""
    if gradescope:
        with open(gradescope, "w", encoding="utf-8") as f:
            json.dump(results(), f, indent=2)
            f.write("\n")
    return OK if passed else FAILED
