"""``specdec grade --samples N`` (``--exec CMD`` or ``--python FILE:FUNCTION``) and
``specdec grade --samples-from FILE --config CONFIG``, and ``--config CONFIG`` with ``--samples N``
(that one config instead of the suite's): grading a sampler by its samples
(:mod:`specdec_client.sampler_grading`, docs/grading.md "Grading by samples")."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import sys
from typing import Any, Callable, Optional

from .argtypes import modes_of
from .exits import USAGE as EXIT_ERROR
from .grade_output import config_lines, finish, write_json
from .sampler_grading import FILE_HINT, SampleTest, gradescope_sample_results, grade_collected, grade_sampler, read_lines


def _usage(message: str) -> int:
    print(f"specdec grade: error: {message}", file=sys.stderr)
    return EXIT_ERROR


def load_function(spec: str) -> Callable[..., Any]:
    """``FILE.py:FUNCTION`` -> the function (raises ``ValueError`` with a sentence)."""
    path, _, name = spec.rpartition(":")
    if not path or not name:
        raise ValueError(f"--python takes FILE.py:FUNCTION, not {spec!r}")
    if not os.path.isfile(path):
        raise ValueError(f"no file {path!r}")
    module_spec = importlib.util.spec_from_file_location("specdec_student_sampler", path)
    if module_spec is None or module_spec.loader is None:
        raise ValueError(f"cannot load {path!r} as Python")
    module = importlib.util.module_from_spec(module_spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        with contextlib.redirect_stdout(sys.stderr):  # what it prints must not mix with --json
            module_spec.loader.exec_module(module)
    except (Exception, SystemExit) as error:  # a student's module (sys.exit too): report, do not crash
        raise ValueError(f"importing {path} raised {type(error).__name__}: {error}") from None
    fn: Any = getattr(module, name, None)
    if not callable(fn):
        raise ValueError(f"{path} has no function {name!r}")
    function: Callable[..., Any] = fn
    return function


def unreadable(named: str, error: OSError) -> str:
    """A sentence for a file that cannot be read, ``named`` as the option gave it (e.g.
    ``--samples-from nofile``), saying why in words (not the raw errno text)."""
    if isinstance(error, FileNotFoundError):
        why = "there is no such file"
    elif isinstance(error, IsADirectoryError):
        why = "it is a directory, not a file"
    elif isinstance(error, PermissionError):
        why = "it cannot be read (no permission)"
    else:
        why = f"it cannot be read ({error.strerror or error})"
    return f"{named}: {why}"


def _config(text: str) -> dict[str, Any]:
    if text.startswith("@"):
        try:
            with open(text[1:], encoding="utf-8") as f:
                text = f.read()
        except OSError as error:
            raise ValueError(unreadable(f"--config {text}", error)) from None
    try:
        value = json.loads(text)
    except ValueError as error:
        raise ValueError(f"--config is not JSON ({error}): {text[:80]!r}") from None
    if not isinstance(value, dict):
        raise ValueError("--config must be a JSON object")
    return value


def _from_file(args: argparse.Namespace, client: Any) -> list[SampleTest]:
    config = _config(args.config)
    try:
        with open(args.samples_from, "rb") as f:
            data = f.read()
    except OSError as error:
        raise ValueError(unreadable(f"--samples-from {args.samples_from}", error)) from None
    count = len([line for line in data.splitlines() if line.strip()])
    if count == 0:
        raise ValueError(f"{args.samples_from} holds no samples (one JSON list of labels a line)")
    test = SampleTest(os.path.basename(args.samples_from), config, 0, source="file")
    test.samples, test.problem = read_lines(data, count, FILE_HINT)
    grade_collected(client, [test])
    return [test]


def _collect(args: argparse.Namespace, client: Any) -> tuple[Optional[list[SampleTest]], Optional[str]]:
    """The graded tests, or a usage error."""
    if args.samples_from is not None:
        if args.config is None:
            return None, "--samples-from needs --config CONFIG (JSON or @FILE.json)"
        try:
            return _from_file(args, client), None
        except (OSError, ValueError) as error:
            return None, str(error)
    if args.samples is None:
        return None, "--python needs --samples N"
    if (args.command is None) == (args.python is None):
        return None, "--samples N needs exactly one of --exec CMD and --python FILE:FUNCTION"
    try:
        fn = load_function(args.python) if args.python is not None else None
        configs = None if args.config is None else [("config", _config(args.config))]
    except (OSError, ValueError) as error:
        return None, str(error)
    from .cli import progress_bars

    timeout = min(getattr(args, "timeout", 60.0), 3600.0)
    client.transport.timeout = max(client.transport.timeout, 60.0)  # a grade of many samples may take a while
    modes = modes_of(args)
    with progress_bars(args) as bars:
        try:
            return grade_sampler(client, fn=fn, command=args.command, suite=args.suite, samples=args.samples,
                                 timeout=timeout, progress=bars, configs=configs, modes=modes,
                                 jobs=getattr(args, "jobs", 1)), None
        except ValueError as error:
            return None, str(error)


def p_values(report: Optional[dict[str, Any]]) -> tuple[str, str]:
    """The table's P-RAW and P-HOLM cells: the smallest p-value of the family's tests (the most
    deviating row's, or of the lengths) and the smallest Holm-adjusted one (the report's
    ``p_value``, on which the grade passes or fails); ``-`` where there is none."""
    if not report:
        return "-", "-"
    worst = report.get("most_deviating") or {}
    raw = "-" if worst.get("p_value") is None else f"{worst['p_value']:.3g}"
    return raw, f"{report['p_value']:.3g}"


def mistake_cell(report: dict[str, Any]) -> str:
    """The MISTAKE column of a sample grade: the mistake named (with its block schedule when it is
    not SPEC's), else ``closest: ID (a guess)`` when the report shows a closest law, else empty."""
    mistake = report.get("mistake") or {}
    named, closest = mistake.get("named"), mistake.get("closest")
    if named:
        schedule = named.get("schedule", "spec")
        return str(named["id"]) + ("" if schedule == "spec" else f" (schedule {schedule})")
    return f"closest: {closest['id']} (a guess)" if closest else ""


def run_samples(args: argparse.Namespace, client: Any) -> int:
    """The ``grade`` subcommand by samples: one row per config, then each failure's message;
    0 when every config passed, 1 otherwise, 2 on a usage error."""
    if args.files:
        return _usage("give trace files or --samples/--samples-from, not both")
    tests, problem = _collect(args, client)
    if tests is None:
        return _usage(problem or "nothing to grade")
    if args.json:
        write_json([{"id": t.id, "config": t.config, "seed": t.seed, "samples": len(t.samples), "passed": t.passed,
                     "problem": t.problem, "message": t.message(), "report": t.report} for t in tests])
    else:
        lines = config_lines(tests, "SAMPLES  P-RAW     P-HOLM    MISTAKE", _cells,
                             f"{sum(t.passed for t in tests)}/{len(tests)} configs passed")
        sys.stdout.write("\n".join(lines) + "\n")
    return finish(args.gradescope, lambda: gradescope_sample_results(tests, args.points, args.suite),
                  all(t.passed for t in tests))


def _cells(test: SampleTest) -> str:
    """A sample grade's row after its RESULT: the number of samples, P-RAW, P-HOLM, MISTAKE."""
    raw, holm = p_values(test.report)
    return f"{len(test.samples):7}  {raw:8}  {holm:8}  {mistake_cell(test.report or {})}"
