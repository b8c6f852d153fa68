"""``specdec grade FILE...``: grade students' traces with the service, optionally for Gradescope.

::

    specdec grade submissions/*.json [--gradescope results.json] [--points 10] [--batch 100] [--json]
    specdec grade --exec "CMD" [--suite standard] [--timeout 10] [--jobs N] [--gradescope results.json] [--json]

Each FILE is a ``specdec-trace/1`` trace written by a student's implementation. The files are
sent to ``POST /v1/grade`` in batches of ``--batch`` (1-1000, default 100) with
``Client.grade_many``; the service recomputes each reference from the trace's own settings.
One row per file is printed: pass/fail, score (share of the named checks that hold), the first
divergence (pointer and the SPEC rule) and the diagnosis (catalogued mistakes, see
``docs/grading.md``). A file that is not JSON, or that the service refuses as malformed (422),
is a row ``malformed`` with the reason; the rest of its batch is graded. A file that cannot be
read at all (missing, say) stops the command before anything is sent: exit status 2, naming it.

``--gradescope FILE`` also writes Gradescope's autograder results (``results.json``): one
test per file and check (``name``, ``score``, ``max_score``, ``status`` passed/failed,
``output`` with the rule and the first failure), the total ``score``, and an ``output``
summary with the diagnosis hints. ``--points`` is the maximum score of one file (default 10,
split evenly over the checks in millionths of a point, so the checks' ``max_score`` add up to
``--points`` exactly); every score is rounded to 6 decimals and the total ``score`` is the sum of
the tests' scores (no float noise such as 5.699999999999998).

``--exec CMD`` grades a program instead of files: CMD runs once per config of ``--suite``
(config JSON on its standard input, one trace on its standard output), see
:mod:`specdec_client.harness`; one row per config, then the message of every failed config, and
with ``--gradescope`` one Gradescope test per config (``--points`` each). ``--timeout`` is then
also the time limit of each run of the program (default 10 s).

``specdec suite [NAME] [--config ID] [--json]`` lists the suites, a suite's configs, or prints
one config's JSON (the input of a program under ``--exec``).

A progress bar on stderr follows the runs and the grading when stderr is a terminal
(:mod:`specdec_client.progress`).

Exit status (:mod:`specdec_client.exits`): 0 when every file (or config) passed, 1 otherwise (a
failed or malformed file), 2 on a usage error (or an unreadable file), 3 when the service cannot be
reached, 4 when it refuses the request (HTTP 4xx: an unknown suite, a batch it cannot read), 5 on
its failure (HTTP 5xx).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Optional, Sequence

from .argtypes import integer, modes_of, positive_number
from .exits import OK as EXIT_PASSED, USAGE as EXIT_ERROR
from .grade_output import config_lines, finish, write_json
from .harness import (
    MAX_JOBS, MAX_TIMEOUT, SCORE_UNIT, Row, divergence_lines, grade_program, grade_rows, gradescope_results, TRACE_MODES,
)
from .traces import MAX_TRACE_BYTES, json_kind, loads_json

SUITES = ("quick", "standard", "full", "sampling", "block", "tree", "all")
"""The service's assignment suites (``GET /v1/grade/suites``), offered by shell completion
(``NAME@N`` names version N of a suite)."""
MAX_BATCH = 1000
"""The service grades at most this many traces in one request."""
SERVICE_TIMEOUT = 30.0
"""With ``--exec``, the service's answers are awaited at least this many seconds (``--timeout`` is the program's)."""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``grade`` subcommand (handler :func:`run`) and the ``suite`` subcommand (handler
    :func:`run_suite`) to ``subparsers`` (an argparse subparsers object); handlers are called as
    ``args.handler(args, client)``. Returns the ``grade`` parser."""
    from .cli import common_options, completes  # the SDK's --url, --timeout, --color

    parser: argparse.ArgumentParser = subparsers.add_parser(
        "grade", parents=[common_options()], help="grade students' trace files (pass/fail, score, first divergence, diagnosis)",
        description="Grade specdec-trace/1 files against the reference (POST /v1/grade), or with --exec a program "
                    "run once per config of an assignment suite. Exit 0 when all pass, 1 otherwise, 2 on error.")
    parser.add_argument("files", metavar="FILE", nargs="*", help="trace files written by students' implementations")
    parser.add_argument("--exec", dest="command", metavar="CMD",
                        help="grade a program instead: run the shell command CMD once per config of the suite "
                             "(config JSON on its stdin, one trace on its stdout); --timeout then limits each run (default 10 s)")
    suites = parser.add_argument("--suite", default="standard",
                                 help="with --exec or --samples: the suite of configs (quick, standard, full: SPEC 1-8; "
                                      "sampling, block, tree; all; NAME@N for version N; default standard)")
    setattr(suites, "completer", completes(*SUITES))
    parser.add_argument("--jobs", type=integer(1, MAX_JOBS), default=1, help=f"with --exec: runs at once, 1-{MAX_JOBS} (default 1)")
    parser.add_argument("--gradescope", metavar="RESULTS.json", help="also write Gradescope autograder results to this file")
    parser.add_argument("--points", type=positive_number, default=10.0, help="maximum score of one file, or of one config with --exec (default 10)")
    parser.add_argument("--batch", type=integer(1, MAX_BATCH), default=100, help=f"traces per request, 1-{MAX_BATCH} (default 100)")
    parser.add_argument("--json", action="store_true", help="print the reports as JSON instead of a table")
    parser.add_argument("--samples", type=integer(1, 200_000), metavar="N",
                        help="grade by samples (POST /v1/grade/samples): with --exec the program gets "
                             '{"config", "samples": N, "seed"} on stdin and prints N lines of JSON label lists; '
                             "with --python FILE:FUNCTION the function is called N times per config")
    parser.add_argument("--python", metavar="FILE:FUNCTION",
                        help="with --samples: a Python function fn(target=, draft=, width=, limit=, eos=, rng=) -> labels "
                             "(plus mode=, drafts=, sampling= when it takes them; needed for modes block and tree)")
    parser.add_argument("--modes", metavar="MODE,...",
                        help="grade only the configs (or trace files) of these modes (speculative, greedy, "
                             "autoregressive, block, tree; greedy has no samples), e.g. speculative,autoregressive")
    parser.add_argument("--samples-from", metavar="FILE",
                        help="grade the samples in FILE (one JSON list of labels per line) for --config")
    parser.add_argument("--config", metavar="CONFIG", help="with --samples-from, or with --samples instead of the suite: the config, as JSON or @FILE.json")
    parser.set_defaults(handler=run)
    suite = subparsers.add_parser(
        "suite", parents=[common_options()], help="list the assignment suites, a suite's configs, or print one config",
        description="Without NAME: the assignment suites. With NAME: its configs and the rules each exercises. With "
                    "--config ID: that config as one line of JSON, ready to pipe into a student's program "
                    "(specdec suite standard --config ID | python3 sd.py). Exit 4 for an unknown suite (the "
                    "service's 404), 2 for an unknown id.")
    name = suite.add_argument("name", metavar="NAME", nargs="?",
                              help="quick, standard, full, sampling, block, tree or all (NAME@N: version N)")
    setattr(name, "completer", completes(*SUITES))
    suite.add_argument("--config", metavar="ID", help="print only this config's JSON (the input of a program under --exec)")
    suite.add_argument("--json", action="store_true",
                       help="print the service's answer as JSON (with --config: that config, indented)")
    suite.set_defaults(handler=run_suite)
    return parser




# ---------------------------------------------------------------- grading


def read_file(name: str) -> Row:
    """A row with the file's JSON, or ``malformed`` when it is not JSON (or too large).

    Raises :class:`OSError` for a file that cannot be read (missing, a directory, no
    permission): the command then stops with exit status 2 and the file's name, as
    ``specdec replay`` does; no file is graded."""
    row = Row(name)
    if os.path.getsize(name) > MAX_TRACE_BYTES:
        row.malformed = f"larger than {MAX_TRACE_BYTES} bytes"
        return row
    with open(name, encoding="utf-8") as f:
        try:
            trace = loads_json(f.read())
        except ValueError as error:
            row.malformed = f"not JSON ({error})"
            return row
    if isinstance(trace, dict):
        row.trace = trace
    else:
        row.malformed = f"a trace is a JSON object, not {json_kind(trace)}"
    return row


# ---------------------------------------------------------------- output


def _divergence(report: dict[str, Any]) -> str:
    d = report.get("first_divergence")
    if not d:
        return ""
    return f"{d['path']} ({d['check']}): expected {_short(d['expected'])}, got {_short(d['got'])}"


def _diagnosis(report: dict[str, Any]) -> str:
    found = report.get("diagnosis") or []
    if not found:
        return ""
    ids = ", ".join(m["id"] for m in found)
    return ids if found[0]["exact"] else f"closest: {ids}"


def _short(value: Any, width: int = 24) -> str:
    text = json.dumps(value, separators=(",", ":"))
    return text if len(text) <= width else text[:width - 3] + "..."


def table(rows: Sequence[Row]) -> list[str]:
    """The text table: FILE, RESULT, SCORE, FIRST DIVERGENCE, DIAGNOSIS."""
    lines = [("FILE", "RESULT", "SCORE", "FIRST DIVERGENCE", "DIAGNOSIS")]
    for row in rows:
        if row.report is None:
            lines.append((row.name, "malformed", "-", row.malformed or "", ""))
        else:
            r = row.report
            lines.append((row.name, "pass" if r["passed"] else "FAIL", f"{r['score']:.2f}", _divergence(r), _diagnosis(r)))
    widths = [max(len(line[i]) for line in lines) for i in range(4)]
    out = ["  ".join(cell.ljust(w) for cell, w in zip(line[:4], widths)) + "  " + line[4] for line in lines]
    passed = sum(r.passed for r in rows)
    out.append(f"{passed}/{len(rows)} passed")
    return [line.rstrip() for line in out]


def shares(points: float, count: int) -> list[int]:
    """``points`` split over ``count`` (>= 1) tests in millionths of a point: the shares differ
    by at most one millionth (the first ones get the remainder) and add up to ``points``
    rounded to 6 decimals, e.g. ``shares(1, 3) == [333334, 333333, 333333]``."""
    base, extra = divmod(round(points * SCORE_UNIT), count)
    return [base + 1 if i < extra else base for i in range(count)]


def _points(units: int) -> float:
    return round(units / SCORE_UNIT, 6)


def gradescope(rows: Sequence[Row], points: float = 10.0) -> dict[str, Any]:
    """Gradescope's autograder results: one test per file and check (see the module docstring).
    Scores are in points with at most 6 decimals; ``score`` is the sum of the tests' scores."""
    tests: list[dict[str, Any]] = []
    summary: list[str] = []
    total = 0  # millionths of a point
    for row in rows:
        if row.report is None:
            tests.append({"name": f"{row.name}: well-formed trace", "score": 0.0,
                          "max_score": _points(sum(shares(points, 1))),
                          "status": "failed", "output": f"The trace could not be graded: {row.malformed}"})
            summary.append(f"{row.name}: malformed ({row.malformed})")
            continue
        report = row.report
        checks = report["checks"]
        for check, each in zip(checks, shares(points, max(1, len(checks)))):
            output = check["rule"]
            failure = check.get("first_failure")
            if failure:
                output = f"Rule: {failure['explanation']}\nSPEC: {check['rule']}" if failure.get("explanation") else output
                output += f"\nFirst failure: {failure['pointer']}: {failure['detail']}"
                if check["blocks"]:
                    output += f"\nBlocks: {', '.join(map(str, check['blocks']))}"
            score = each if check["passed"] else 0
            total += score
            tests.append({"name": f"{row.name}: {check['name']}", "score": _points(score),
                          "max_score": _points(each), "status": "passed" if check["passed"] else "failed",
                          "output": output})
        summary.append(_summary(row.name, report))
    return {"score": _points(total), "output": "\n\n".join(summary), "visibility": "visible",
            "stdout_visibility": "hidden", "tests": tests}


def _summary(name: str, report: dict[str, Any]) -> str:
    """A file's grade in plain words (the same text as a failed config of ``--exec``)."""
    if report["passed"]:
        return f"{name}: passed (the trace equals the reference)."
    return "\n".join([f"{name}:"] + divergence_lines(report))


def gradescope_problem(path: Optional[str]) -> Optional[str]:
    """Why Gradescope's results cannot be written to ``path`` (a sentence naming it), or ``None``
    (also for no path): checked before anything runs, so that a run is not lost at its end. The
    file is opened for appending (and removed again when it did not exist): permission bits
    alone say nothing to root, and a file of /proc or /sys refuses only when opened."""
    if path is None:
        return None
    if os.path.isdir(path):
        return f"--gradescope {path} is a directory; give the results file's path (e.g. {os.path.join(path, 'results.json')})"
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        what = "is not a directory" if os.path.exists(parent) else "does not exist"
        return f"--gradescope {path}: {parent} {what}"
    existed = os.path.exists(path)
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as error:
        return f"--gradescope {path} cannot be written: {error.strerror or error}"
    if not existed:
        os.remove(path)
    return None


def _trace_mode(row: Row) -> Optional[str]:
    """The mode of a file's trace (its config's; ``None`` when the file is not a trace object)."""
    config = row.trace.get("config") if isinstance(row.trace, dict) else None
    return config.get("mode", "speculative") if isinstance(config, dict) else None


def _kept_files(rows: list[Row], modes: Optional[list[str]]) -> tuple[list[Row], int]:
    """The rows whose trace has a mode of ``modes`` (all without ``--modes``; a file that is no
    trace is kept, to be reported malformed), and how many were left out. ``ValueError`` for a
    mode outside :data:`~specdec_client.harness.TRACE_MODES`, or when no file is left."""
    if modes is None:
        return rows, 0
    unknown = sorted(set(modes) - set(TRACE_MODES))
    if unknown:
        raise ValueError(f"modes must be among {', '.join(TRACE_MODES)}, not {', '.join(unknown)}")
    kept = [r for r in rows if _trace_mode(r) is None or _trace_mode(r) in modes]
    if not kept:
        raise ValueError(f"no trace file of mode {', '.join(modes)} to grade")
    return kept, len(rows) - len(kept)


def run(args: argparse.Namespace, client: Any) -> int:
    """The ``grade`` subcommand: returns 0 when every file (or config) passed, else 1; 2 for a
    usage error (files and --exec together, or neither; a ``--gradescope`` path that cannot be
    written, checked before anything runs; an unknown mode of ``--modes``)."""
    problem = gradescope_problem(getattr(args, "gradescope", None))
    if problem is not None:
        print(f"specdec grade: error: {problem}", file=sys.stderr)
        return EXIT_ERROR
    if args.samples is not None or args.samples_from is not None or args.python is not None:
        from .sampling_cli import run_samples

        return run_samples(args, client)
    if args.command is not None:
        if args.files:
            print("specdec grade: error: give trace files or --exec CMD, not both", file=sys.stderr)
            return EXIT_ERROR
        return run_exec(args, client)
    if not args.files:
        print("specdec grade: error: give trace files to grade, or --exec CMD to grade a program", file=sys.stderr)
        return EXIT_ERROR
    from .cli import progress_bars

    rows = [read_file(name) for name in args.files]
    try:
        rows, left_out = _kept_files(rows, modes_of(args))
    except ValueError as error:
        print(f"specdec grade: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    with progress_bars(args) as bars:
        grade_rows(rows, client, args.batch, progress=bars)
    if args.json:
        write_json([{"file": r.name, "report": r.report, "malformed": r.malformed, "errors": r.errors} for r in rows])
    else:
        lines = table(rows)
        if left_out:
            lines.append(f"{left_out} file(s) of other modes left out (--modes {args.modes})")
        sys.stdout.write("\n".join(lines) + "\n")
    return finish(args.gradescope, lambda: gradescope(rows, args.points), all(r.passed for r in rows))


def run_exec(args: argparse.Namespace, client: Any) -> int:
    """``specdec grade --exec CMD``: one row per config of the suite, then the message of each
    failed config; 0 when every config passed, else 1."""
    timeout = min(getattr(args, "timeout", 10.0), MAX_TIMEOUT)
    # --timeout limits each run of the program; the one grading request may take longer on a busy service
    client.transport.timeout = max(client.transport.timeout, SERVICE_TIMEOUT)
    from .cli import progress_bars

    try:
        with progress_bars(args) as bars:
            tests = grade_program(client, args.command, suite=args.suite, timeout=timeout, jobs=args.jobs,
                                  progress=bars, modes=modes_of(args))
    except ValueError as error:
        print(f"specdec grade: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    if args.json:
        write_json([{"id": t.id, "config": t.config, "exercises": t.exercises, "passed": t.passed, "score": t.score,
                     "problem": t.problem, "message": t.message(),
                     "seconds": None if t.run is None else round(t.run.seconds, 3), "report": t.report}
                    for t in tests])
    else:
        lines = config_lines(tests, "SCORE  TIME",
                             lambda t: f"{t.score:.2f}   " + ("-" if t.run is None else f"{t.run.seconds:.2f}s"),
                             f"{sum(t.passed for t in tests)}/{len(tests)} configs of the {args.suite} suite passed")
        sys.stdout.write("\n".join(lines) + "\n")
    return finish(args.gradescope, lambda: gradescope_results(tests, args.points, args.suite),
                  all(t.passed for t in tests))


def _json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def run_suite(args: argparse.Namespace, client: Any) -> int:
    """``specdec suite [NAME] [--config ID] [--json]``: the suites, a suite's configs, or one config's JSON."""
    as_json = getattr(args, "json", False)
    if args.name is None:
        if args.config is not None:
            print("specdec suite: error: --config needs the suite's NAME", file=sys.stderr)
            return EXIT_ERROR
        suites = client.suites()
        if as_json:
            _json({"suites": [s.to_dict() for s in suites]})
            return EXIT_PASSED
        for s in suites:
            sys.stdout.write(f"{s.name:9} {s.count:3} configs  {s.description}\n")
        return EXIT_PASSED
    suite = client.suite(args.name)
    configs = suite["configs"]
    if args.config is not None:
        found = [c for c in configs if c["id"] == args.config]
        if not found:
            print(f"specdec suite: error: no config {args.config!r} in the {args.name} suite: "
                  f"{', '.join(c['id'] for c in configs)}", file=sys.stderr)
            return EXIT_ERROR
        if as_json:
            _json(found[0]["config"])
        else:
            sys.stdout.write(json.dumps(found[0]["config"]) + "\n")
        return EXIT_PASSED
    if as_json:
        _json(suite.to_dict())
        return EXIT_PASSED
    width = max(len(c["id"]) for c in configs)
    sys.stdout.write(f"{'ID'.ljust(width)}  EXERCISES\n")
    for c in configs:
        sys.stdout.write(f"{c['id'].ljust(width)}  {', '.join(c['exercises'])}\n")
    return EXIT_PASSED
