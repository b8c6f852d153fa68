"""Grading a program on a suite (``specdec grade --exec``): wall time per suite and ``--jobs``
(run by hand, not in CI; record results in docs/bench-grading.md).

    python bench/harness.py --url http://127.0.0.1:8000 [--repeat 3]

Runs the two student programs of ``tests/students`` (Python and Node.js, both correct) on the
standard and full suites with 1 and 4 jobs through ``Client.grade_program`` against a running
service, and prints the median wall time of ``--repeat`` runs: process start-up of the student's
program dominates, the one grading request is a small part.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

from specdec_client import Client

STUDENTS = Path(__file__).resolve().parents[1] / "tests" / "students"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    programs = {"python": f"{sys.executable} {STUDENTS / 'student.py'}"}
    if shutil.which("node"):
        programs["node"] = f"{shutil.which('node')} {STUDENTS / 'student.js'}"
    with Client(args.url, timeout=60) as client:
        for suite in ("standard", "full"):
            size = len(client.suite(suite).configs)
            for name, command in programs.items():
                for jobs in (1, 4):
                    times = []
                    for _ in range(args.repeat):
                        start = time.perf_counter()
                        tests = client.grade_program(command, suite=suite, jobs=jobs)
                        times.append(time.perf_counter() - start)
                        assert all(t.passed for t in tests), [t.message() for t in tests if not t.passed]
                    print(f"{suite:8} ({size:2} configs)  {name:6}  jobs {jobs}:  {statistics.median(times):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
