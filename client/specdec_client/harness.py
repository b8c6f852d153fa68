"""Grade a student's *program* on an assignment suite: ``specdec grade --exec CMD``.

For every config of a suite (``GET /v1/grade/suites/{name}``, see ``docs/grading.md``) the
program ``CMD`` (a shell command: ``python3 sd.py``, ``node sd.js``, ``./a.out``) is started
once, gets the config as one JSON object on its standard input, and must print one
``specdec-trace/1`` trace on its standard output. The traces are graded in one
``POST /v1/grade`` batch. Each config is one test (:class:`ProgramTest`) that passes or fails
with a message in plain words (:meth:`ProgramTest.message`):

- the program ran out of time (``timeout`` seconds; it is killed, with its child processes);
- it exited with a non-zero status (the last lines of its standard error are shown);
- it printed nothing, or something that is not one JSON object, or more than
  :data:`MAX_OUTPUT_BYTES`;
- its trace echoes another config than the one it was given (the first differing setting);
- the service refused the trace as malformed (422: the field and why);
- or the grade: the first divergence (block, field, expected, got), the rule in one plain
  sentence, the SPEC rule, and the catalogued mistake the diagnosis names with its hint.

One failing config never stops the others. :func:`gradescope_results` maps the tests to
Gradescope's ``results.json``. Used by ``specdec grade --exec`` (:mod:`.grading`) and by
:meth:`specdec_client.Client.grade_program`. :func:`grade_rows` (batches of traces, a 422 for
one trace marking it malformed and sending the others again) also serves ``specdec grade FILE...``.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import IO, Any, Callable, Mapping, Optional, Sequence

from .errors import InvalidInput, PayloadTooLarge
from .progress import Progress
from .traces import json_kind, loads_json

MAX_JOBS = 64
"""At most this many runs of a program at once (``--jobs``)."""

SCORE_UNIT = 10 ** 6
"""Gradescope scores are whole millionths of a point (6 decimals)."""


MAX_OUTPUT_BYTES = 64 * 1024 * 1024
"""The most a program may print on standard output for one config (a trace is far smaller)."""
STDERR_LINES = 10
"""How many of the last lines of standard error a failed run shows."""
MAX_TIMEOUT = 3600.0
"""The longest time limit of one run, in seconds (``--timeout``)."""


@dataclass
class Row:
    """The grade of one file: ``report`` (the service's report dict) or ``malformed`` (why the
    file could not be graded)."""

    name: str
    trace: Any = None
    report: Optional[dict[str, Any]] = None
    malformed: Optional[str] = None
    errors: list[Any] = field(default_factory=list[Any])

    @property
    def passed(self) -> bool:
        return self.report is not None and bool(self.report["passed"])


# ---------------------------------------------------------------- batches of traces


OVER_BUDGET = "tag:specdec,2026:problem/over-budget"
"""The problem type of a request over the service's work budget (a 422 naming ``cost`` and ``budget``)."""


def grade_rows(rows: Sequence[Row], client: Any, batch: int = 100, progress: Optional[Progress] = None) -> None:
    """Grade the readable rows with ``client.grade_many`` in batches, filling ``report``; a
    trace the service refuses (422 pointing at ``#/traces/<i>``) is marked malformed and the
    rest of its batch is sent again; a batch over the service's work budget (422 of type
    :data:`OVER_BUDGET`) or over its body size (413) is split in two halves, each sent on its
    own, and a single trace over the body size is marked malformed. Other errors propagate.
    ``progress``, when given, is called as ``progress("grade", rows done, rows)`` at the start
    and after each request (:data:`specdec_client.progress.Progress`)."""
    pending = [r for r in rows if r.malformed is None]
    work = [pending[start:start + batch] for start in range(0, len(pending), batch)]
    while work:
        if progress is not None:
            progress("grade", len(pending) - sum(len(chunk) for chunk in work), len(pending))
        chunk = work.pop(0)
        try:
            answer = client.grade_many([r.trace for r in chunk])
        except PayloadTooLarge as error:
            if len(chunk) > 1:
                half = len(chunk) // 2
                work[:0] = [chunk[:half], chunk[half:]]
            else:
                chunk[0].malformed = f"too large for the service: {error.detail}"
            continue
        except InvalidInput as error:
            if error.type == OVER_BUDGET and len(chunk) > 1:
                half = len(chunk) // 2
                work[:0] = [chunk[:half], chunk[half:]]
                continue
            bad = _refused(error, chunk)
            if not bad:
                raise
            rest = [r for r in chunk if r not in bad]
            if rest:
                work.insert(0, rest)
            continue
        for row, report in zip(chunk, answer["reports"]):
            row.report = report
    if progress is not None and pending:
        progress("grade", len(pending), len(pending))


def _refused(error: InvalidInput, chunk: Sequence[Row]) -> list[Row]:
    """The rows a 422 names (pointers ``#/traces/<i>/...``), marked malformed."""
    bad: dict[int, Row] = {}
    for item in error.errors:
        parts = (item.pointer or "").split("/")
        if len(parts) >= 3 and parts[1] == "traces" and parts[2].isdigit() and int(parts[2]) < len(chunk):
            i = int(parts[2])
            row = chunk[i]
            row.errors.append({"pointer": "#/" + "/".join(parts[3:]), "detail": item.detail})
            bad[i] = row
    for row in bad.values():
        first = row.errors[0]
        more = f" (+{len(row.errors) - 1} more)" if len(row.errors) > 1 else ""
        row.malformed = f"{first['pointer']}: {first['detail']}{more}"
    return list(bad.values())


# ---------------------------------------------------------------- running a program


@dataclass
class RunResult:
    """What one run of the program did: its ``status`` (exit code; negative: killed by that
    signal), ``stdout`` bytes (at most :data:`MAX_OUTPUT_BYTES`), the tail of ``stderr`` (text),
    ``seconds`` of wall time, ``timed_out`` and ``overflow`` (printed too much)."""

    status: Optional[int]
    stdout: bytes
    stderr: str
    seconds: float
    timed_out: bool = False
    overflow: bool = False


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL ``proc`` and every process of its session (POSIX), or ``proc`` alone."""
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except (ProcessLookupError, PermissionError):
        pass


class Running:
    """The programs :func:`run_program` is running for one grading: :meth:`stop` kills them and
    every one started after it, so an interrupted grading (Ctrl-C) leaves none behind. (Each
    program runs in a session of its own, so the terminal's SIGINT does not reach it.)"""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._procs: set[subprocess.Popen[bytes]] = set()
        self._stopped = False

    def add(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._procs.add(proc)
            stopped = self._stopped
        if stopped:
            _kill_group(proc)

    def discard(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._procs.discard(proc)

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            procs = list(self._procs)
        for proc in procs:
            _kill_group(proc)


def run_program(command: str, stdin: bytes, timeout: float, cwd: Optional[str] = None,
                running: Optional[Running] = None, on_lines: Optional[Callable[[int], None]] = None) -> RunResult:
    """Run the shell ``command`` with ``stdin`` on its standard input, for at most ``timeout``
    seconds (then it and every process it started are killed). ``running``, when given, holds
    the program while it runs (:meth:`Running.stop` kills it). ``on_lines``, when given, is
    called from a reader thread with the number of newlines of each chunk of standard output as
    it arrives (a progress bar's feed). Never raises for anything the program does; raises
    ``OSError`` only if no shell can be started."""
    started = time.monotonic()
    posix = os.name == "posix"
    proc = subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=cwd, start_new_session=posix)
    if running is not None:
        running.add(proc)
    try:
        return _collect(proc, stdin, timeout, started, on_lines)
    finally:
        if running is not None:
            running.discard(proc)


def _collect(proc: subprocess.Popen[bytes], stdin: bytes, timeout: float, started: float,
             on_lines: Optional[Callable[[int], None]] = None) -> RunResult:
    stdin_pipe, stdout_pipe, stderr_pipe = _pipes(proc)
    out = bytearray()
    err: deque[bytes] = deque(maxlen=64)  # the last chunks of stderr
    overflow = threading.Event()
    threads = [threading.Thread(target=f, args=a, daemon=True) for f, a in (
        (_feed, (stdin_pipe, stdin)),
        (_read_output, (proc, stdout_pipe, out, overflow, on_lines)),
        (_read_tail, (stderr_pipe, err)))]
    for t in threads:
        t.start()
    timed_out = False
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
        proc.wait()
    _kill_group(proc)  # children left behind would hold the pipes open
    for t in threads:
        t.join(5)
    for t, stream in zip(threads[1:], (stdout_pipe, stderr_pipe)):
        if not t.is_alive():  # a process that left the group may still hold a pipe: leave its reader be
            stream.close()
    tail = b"".join(err).decode("utf-8", "replace")
    return RunResult(proc.returncode, bytes(out), tail, time.monotonic() - started, timed_out, overflow.is_set())


def _feed(pipe: IO[bytes], data: bytes) -> None:
    """Write ``data`` to a program's standard input and close it; a program that does not read
    its input is its business."""
    try:
        pipe.write(data)
        pipe.close()
    except (BrokenPipeError, OSError, ValueError):
        pass


def _read_output(proc: subprocess.Popen[bytes], pipe: io.BufferedReader, out: bytearray, overflow: threading.Event,
                 on_lines: Optional[Callable[[int], None]]) -> None:
    """Append a program's standard output to ``out`` until it ends; past
    :data:`MAX_OUTPUT_BYTES`, set ``overflow`` and kill the program's process group.
    ``on_lines`` gets the number of newlines of each chunk."""
    while True:
        chunk = pipe.read1(65536)
        if not chunk:
            return
        if len(out) + len(chunk) > MAX_OUTPUT_BYTES:
            overflow.set()
            _kill_group(proc)
            return
        out.extend(chunk)
        if on_lines is not None:
            on_lines(chunk.count(b"\n"))


def _read_tail(pipe: io.BufferedReader, tail: deque[bytes]) -> None:
    """Keep the last chunks of a program's standard error in ``tail`` (a bounded deque)."""
    while True:
        chunk = pipe.read1(65536)
        if not chunk:
            return
        tail.append(chunk)


def _pipes(proc: subprocess.Popen[bytes]) -> tuple[IO[bytes], io.BufferedReader, io.BufferedReader]:
    """The standard input, output and error of ``proc``, started with three buffered pipes
    (``subprocess.PIPE``, the default ``bufsize``); raises ``OSError`` (after killing it)
    if it has not."""
    if proc.stdin is None or not isinstance(proc.stdout, io.BufferedReader) \
            or not isinstance(proc.stderr, io.BufferedReader):
        proc.kill()
        raise OSError("the program was started without its three pipes")
    return proc.stdin, proc.stdout, proc.stderr


TRACE_MODES = ("speculative", "greedy", "autoregressive", "block", "tree")
"""The modes a trace can have (``--modes`` of trace grading)."""


def kept_modes(chosen: Sequence[tuple[str, Mapping[str, Any]]], modes: Optional[Sequence[str]],
               allowed: Sequence[str] = TRACE_MODES) -> list[int]:
    """The indices of the configs of ``chosen`` (``[(id, config)]``) whose mode is in ``modes``
    (all of them when ``modes`` is None). Raises ``ValueError`` for a mode outside ``allowed``
    or when no config is left. Shared by sample and trace grading (``--modes``)."""
    if modes is None:
        return list(range(len(chosen)))
    unknown = sorted(set(modes) - set(allowed))
    if unknown:
        raise ValueError(f"modes must be among {', '.join(allowed)}, not {', '.join(unknown)}")
    kept = [i for i, (_, c) in enumerate(chosen) if c.get("mode", "speculative") in modes]
    if not kept:
        raise ValueError(f"no config of mode {', '.join(modes)} to grade")
    return kept


@dataclass
class ProgramTest:
    """One config of the suite as a test: ``id``, ``config``, ``exercises``, the ``command`` and
    the ``suite`` (named in the message: how to run the config alone); after the run,
    ``run`` (:class:`RunResult`), ``trace`` (the parsed output), ``problem`` (why it could not
    be graded, in plain words) or ``report`` (the service's grade)."""

    id: str
    config: dict[str, Any]
    exercises: list[Any] = field(default_factory=list[Any])
    command: str = ""
    suite: str = ""
    run: Optional[RunResult] = None
    trace: Any = None
    problem: Optional[str] = None
    report: Optional[dict[str, Any]] = None

    @property
    def passed(self) -> bool:
        """The program's trace equals the reference."""
        return self.report is not None and bool(self.report["passed"])

    @property
    def score(self) -> float:
        """The share of the grade's checks that hold (0 when the output could not be graded)."""
        return float(self.report["score"]) if self.report is not None else 0.0

    def message(self) -> str:
        """The test's result in plain words, several lines (see the module docstring)."""
        head = f"Config {self.id} ({', '.join(self.exercises)})" if self.exercises else f"Config {self.id}"
        lines = [head, f"Input on standard input: {_compact(self.config, 400)}"]
        if self.suite and self.command:
            lines.append(f"Run it alone: specdec suite {self.suite} --config {self.id} | {self.command}")
        if self.passed:
            lines.append("Passed: your trace equals the reference.")
            return "\n".join(lines)
        if self.problem is not None or self.report is None:
            lines.append(f"Failed: {self.problem or 'not run and graded yet.'}")
            return "\n".join(lines)
        lines += divergence_lines(self.report)
        return "\n".join(lines)


def divergence_lines(report: dict[str, Any]) -> list[str]:
    """A failed grade in plain words: where (block, field), expected and got, the rule in one
    sentence, the SPEC rule, the diagnosed mistake(s) with their hints, and the checks that fail."""
    lines = [f"Failed: your trace differs from the reference (checks: {report['score']:.2f} hold)."]
    d = report.get("first_divergence")
    if d:
        lines.append(f"First difference: {where(d['path'], d.get('block'))}: expected {_compact(d['expected'])}, "
                     f"got {_compact(d['got'])}.")
        if d.get("explanation"):
            lines.append(f"Rule: {d['explanation']}")
        lines.append(f"SPEC: {d['rule']}")
    diagnosis = report.get("diagnosis") or []
    exact = [m for m in diagnosis if m["exact"]]
    for m in exact:
        lines.append(f"Likely mistake (it reproduces your whole trace): {m['title']} [{m['id']}]. Hint: {m['hint']}")
    if not exact:
        lines.append("No catalogued mistake reproduces your trace.")
        broken = first_broken_rule(report)
        if broken is not None:
            lines.append(f"The first SPEC rule it breaks: {broken['rule']} (check {broken['check']}, at "
                         f"{where(broken['pointer'])}{': ' + broken['explanation'] if broken.get('explanation') else ''})")
        for m in diagnosis:
            upto = (m.get("agreement") or {}).get("first_divergence")
            lines.append(f"A guess, not a diagnosis: {m['title']} [{m['id']}] agrees with your trace further than the "
                         f"reference does{f' (up to {upto})' if upto else ''} but does not reproduce it; your mistake may "
                         f"be another one. Its hint: {m['hint']}")
    failing = [c["name"] for c in report.get("checks", []) if not c["passed"]]
    if failing:
        lines.append(f"Checks that fail: {', '.join(failing)}.")
    return lines


_STEP_FIELDS = {"context": 0, "q": 1, "p": 1, "draw": 2, "token": 3}
_PHASES = {"position": 0, "prefix": 0, "proposal": 1, "verification": 2, "correction": 3, "discarded": 4, "bonus": 5,
           "sample": 5, "no_bonus": 6, "committed": 7}


def _causal_key(pointer: str) -> tuple[Any, ...]:
    """An order of a trace's fields by when the rules decide them: block by block; in a block
    the draft steps, the verification, the correction, the bonus, the commit; in a step its
    context and row, then its draw, then its token (``proposal/tokens/i`` is step ``i``'s token)."""
    parts = [p for p in pointer.lstrip("#").split("/") if p]
    if len(parts) < 3 or parts[0] != "blocks" or not parts[1].isdigit():
        return (1 << 30, pointer)
    block, phase, rest = int(parts[1]), parts[2], parts[3:]
    if phase == "proposal" and rest[:1] == ["tokens"] and len(rest) > 1 and rest[1].isdigit():
        rest = ["steps", rest[1], "token"]
    if phase == "proposal" and rest[:1] == ["steps"]:
        rest = rest[1:]
    index = int(rest[0]) if rest and rest[0].isdigit() else 0
    field = rest[1] if len(rest) > 1 and rest[0].isdigit() else (rest[0] if rest else "")
    return (block, _PHASES.get(phase, 8), index, _STEP_FIELDS.get(field, 4), pointer)


def first_broken_rule(report: dict[str, Any]) -> Optional[dict[str, Any]]:
    """The SPEC rule a failing trace breaks first: of the failing checks, the one whose first
    failing field comes first in the order the rules decide fields (:func:`_causal_key`):
    ``{"check", "pointer", "rule", "explanation"}``, or ``None`` when no check names a field."""
    found = [(c["first_failure"]["pointer"], c) for c in report.get("checks", [])
             if not c["passed"] and c.get("first_failure") and c["first_failure"].get("pointer")]
    if not found:
        return None
    pointer, check = min(found, key=lambda x: _causal_key(x[0]))
    return {"check": check["name"], "pointer": pointer, "rule": check.get("rule", ""),
            "explanation": check["first_failure"].get("explanation")}


def where(pointer: str, block: Optional[int] = None) -> str:
    """``#/blocks/1/verification/0/accepted`` -> ``block 2 (#/blocks/1), field
    verification[0].accepted``; a trace-level pointer -> ``field output[3]``."""
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.lstrip("#").split("/") if p]
    if block is not None and len(parts) >= 2 and parts[0] == "blocks":
        prefix, parts = f"block {block + 1} (#/blocks/{block}), ", parts[2:]
    else:
        prefix = ""
    if not parts:
        return prefix + "the whole block" if prefix else "the whole trace"
    text = parts[0]
    for p in parts[1:]:
        text += f"[{p}]" if p.isdigit() else f".{p}"
    return f"{prefix}field {text}"


def _compact(value: Any, width: int = 160) -> str:
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text if len(text) <= width else text[:width - 3] + "..."


def _stderr_tail(text: str) -> str:
    lines = [line for line in text.rstrip().splitlines()][-STDERR_LINES:]
    return "\n".join("    " + line for line in lines)


def check_output(test: ProgramTest, result: RunResult, timeout: float) -> None:
    """Set ``test.problem`` or ``test.trace`` from the run (everything but the grade)."""
    test.run = result
    stderr = _stderr_tail(result.stderr)
    shown = f"\nThe last lines of its standard error:\n{stderr}" if stderr else " It wrote nothing on standard error."
    if result.timed_out:
        unit = "second" if timeout == 1 else "seconds"
        test.problem = f"the program did not finish within {timeout:g} {unit} and was stopped.{shown}"
        return
    if result.overflow:
        test.problem = f"the program printed more than {MAX_OUTPUT_BYTES} bytes on standard output and was stopped."
        return
    if result.status != 0:
        how = (f"was killed by signal {-result.status}" if result.status is not None and result.status < 0
               else f"exited with status {result.status}")
        test.problem = f"the program {how} (it must exit with status 0).{shown}"
        return
    text = result.stdout.decode("utf-8", "replace").strip()
    if not text:
        test.problem = ("the program printed nothing on standard output: it must print the trace of the config it "
                        f"reads on standard input, as one JSON object.{shown}")
        return
    try:
        trace = loads_json(text)
    except ValueError as error:
        extra = (" Print only the trace on standard output; write any other messages to standard error."
                 if "{" in text else "")
        test.problem = (f"the program's standard output is not one JSON document ({error}); it begins with "
                        f"{_compact(text[:80])}.{extra}")
        return
    if not isinstance(trace, dict):
        test.problem = f"the program printed JSON, but not a trace object: it printed {json_kind(trace)}."
        return
    mismatch = config_mismatch(test.config, trace.get("config"))
    if mismatch:
        test.problem = f"the trace's config is not the one given on standard input: {mismatch}."
        return
    test.trace = trace


def config_mismatch(given: dict[str, Any], echoed: Any) -> Optional[str]:
    """The first setting where a trace's ``config`` differs from the ``given`` one (in plain
    words), or None. The config must be echoed with every setting (SPEC section 8)."""
    if not isinstance(echoed, dict):
        return "the trace has no config object (it must repeat every setting it was given)"
    for key, value in given.items():
        if key not in echoed:
            return f"the setting {key} is missing (expected {_compact(value, 60)})"
        if echoed[key] != value:
            return f"setting {key}: expected {_compact(value, 60)}, got {_compact(echoed[key], 60)}"
    extra = [key for key in echoed if key not in given]
    if extra:
        return f"unknown setting {extra[0]}"
    return None


def grade_program(client: Any, command: str, *, suite: str = "standard", timeout: float = 10.0, jobs: int = 1,
                  cwd: Optional[str] = None, progress: Optional[Progress] = None,
                  modes: Optional[Sequence[str]] = None) -> list[ProgramTest]:
    """Run ``command`` on every config of ``suite`` (a name, or ``name@N`` for version N; at
    most ``jobs`` at once, each for at most ``timeout`` seconds) and grade the traces in one
    batch with ``client`` (a :class:`specdec_client.Client`). ``modes``, when given, keeps only
    the configs of those modes (of :data:`TRACE_MODES`), as sample grading does. Returns the
    tests in the suite's order; each names the suite as ``name@version`` (how to run a config
    alone, for ever). ``progress``, when
    given, is called as ``progress("run", runs done, configs)`` as the runs finish, then as
    :func:`grade_rows` calls it (:data:`specdec_client.progress.Progress`).

    Raises ``ValueError`` for a ``timeout`` outside (0, :data:`MAX_TIMEOUT`] or ``jobs``
    outside 1..:data:`MAX_JOBS`, a mode outside :data:`TRACE_MODES` or none left, the client's errors when the service cannot be reached or
    does not know the suite (:class:`~specdec_client.errors.NotFound`), and ``OSError`` when
    no shell can be started."""
    if not 0 < timeout <= MAX_TIMEOUT:
        raise ValueError(f"timeout must be above 0 and at most {MAX_TIMEOUT:g} seconds, got {timeout}")
    if not 1 <= jobs <= MAX_JOBS:
        raise ValueError(f"jobs must be 1 to {MAX_JOBS}, got {jobs}")
    found = client.suite(suite)
    pinned = f"{found['name']}@{found['version']}"
    configs = found["configs"]
    tests = [ProgramTest(configs[i]["id"], configs[i]["config"], list(configs[i].get("exercises", [])), command, pinned)
             for i in kept_modes([(c["id"], c["config"]) for c in configs], modes)]

    running = Running()

    def one(test: ProgramTest) -> None:
        stdin = (json.dumps(test.config) + "\n").encode("utf-8")
        check_output(test, run_program(command, stdin, timeout, cwd, running), timeout)

    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        futures = [pool.submit(one, test) for test in tests]
        if progress is not None:
            progress("run", 0, len(tests))
        for done, future in enumerate(as_completed(futures), 1):
            future.result()
            if progress is not None:
                progress("run", done, len(tests))
    except BaseException:  # Ctrl-C or an error: no further run, and the running ones killed
        pool.shutdown(wait=False, cancel_futures=True)
        running.stop()
        raise
    pool.shutdown()
    grade_traces(client, [t for t in tests if t.problem is None], progress)
    return tests


def grade_traces(client: Any, tests: Sequence[ProgramTest], progress: Optional[Progress] = None) -> None:
    """Grade the tests' traces in one ``POST /v1/grade`` batch; a trace the service refuses
    (422 naming ``#/traces/<i>``) fails its test with the fields and reasons, and the others are
    sent again."""
    rows = [Row(t.id, t.trace) for t in tests]
    grade_rows(rows, client, batch=max(1, len(rows)), progress=progress)
    for test, row in zip(tests, rows):
        if row.report is not None:
            test.report = row.report
        else:
            fields = "; ".join(f"{e['pointer']}: {e['detail']}" for e in row.errors[:5]) or row.malformed
            test.problem = f"the service could not read the trace as specdec-trace/1: {fields}."


def gradescope_results(tests: Sequence[ProgramTest], points: float = 10.0, suite: str = "standard") -> dict[str, Any]:
    """Gradescope's ``results.json``: one test per config (``name``, ``score``, ``max_score``,
    ``status``, ``output`` in plain text with ``output_format`` "text", ``visibility``), the total ``score`` (the sum, no
    float noise) and an ``output`` summary. Each config is worth ``points``; a failed grade
    scores ``points`` x the share of checks that hold, a program that could not be graded 0."""
    unit = round(points * SCORE_UNIT)
    entries, total = [], 0
    for i, test in enumerate(tests, 1):
        score = unit if test.passed else round(unit * test.score) if test.report is not None else 0
        total += score
        entries.append({"name": f"{suite} {i}: {test.id}", "score": score / SCORE_UNIT, "max_score": unit / SCORE_UNIT,
                        "status": "passed" if test.passed else "failed", "output": test.message(),
                        "output_format": "text", "visibility": "visible"})
    passed = sum(t.passed for t in tests)
    summary = f"{passed} of {len(tests)} configs of the {suite} suite passed."
    if passed < len(tests):
        summary += " Each failed test below says where your trace first differs and which rule to check."
    return {"score": total / SCORE_UNIT, "output": summary, "output_format": "text", "visibility": "visible",
            "stdout_visibility": "hidden", "tests": entries}
