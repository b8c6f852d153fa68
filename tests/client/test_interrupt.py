"""Ctrl-C during ``specdec grade --exec`` (``harness.grade_program``): the programs run in
sessions of their own (so that a timeout kills their children too), which the terminal's
SIGINT does not reach. The interrupt used to wait for every remaining config of the suite to
run to its end or its timeout (the quick suite with a program that hangs: 37 s at the
default 10 s timeout, an hour at ``--timeout 3600``) before exiting 130; now it cancels the
runs not started and kills the running ones."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from specdec_client.harness import MAX_TIMEOUT, grade_program


class Suite:
    """A client whose suite has ``n`` configs (grade_program asks it nothing else before the runs)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def suite(self, name: str) -> dict:
        return {"name": name, "version": 1,
                "configs": [{"id": f"c{i}", "config": {"draft": "biased", "seed": i}} for i in range(self.n)]}


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads process states from /proc")
@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, RuntimeError])
@pytest.mark.parametrize("jobs", [1, 3])
def test_an_interrupted_grading_stops_its_programs_at_once(tmp_path, interrupt, jobs):
    started = tmp_path / "started"
    started.mkdir()
    command = f"echo $$ > {started}/$$; exec sleep {int(MAX_TIMEOUT)}"  # a program that hangs
    raised: list[BaseException] = []

    def progress(stage: str, done: int, total: int) -> None:
        for _ in range(600):  # the first run has begun (at most 60 s on a loaded machine)
            if any(started.iterdir()):
                break
            time.sleep(0.1)
        raise interrupt("interrupted")

    def grade() -> None:
        try:
            grade_program(Suite(6), command, suite="quick", timeout=MAX_TIMEOUT, jobs=jobs, progress=progress)
        except BaseException as error:  # noqa: B036 - what the command's main sees
            raised.append(error)

    thread = threading.Thread(target=grade, daemon=True)
    thread.start()
    thread.join(120)  # the old behaviour: 6 runs of an hour each
    pids = [int(path.name) for path in started.iterdir()]
    try:
        assert not thread.is_alive(), "the interrupt waited for the remaining runs"
        assert len(raised) == 1 and isinstance(raised[0], interrupt)
        assert 1 <= len(pids) <= jobs  # no run after the interrupt
        for _ in range(100):
            if not any(_alive(pid) for pid in pids):
                break
            time.sleep(0.1)
        assert [pid for pid in pids if _alive(pid)] == []
    finally:
        for pid in pids:
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
