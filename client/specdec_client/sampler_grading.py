"""Grading a sampler by its samples: a program or a Python function, any randomness.

For each config of a suite that has an output law (modes speculative, autoregressive, block
and tree, with or without ``sampling``; the seed does not matter, so configs differing only by
seed are one), or for one config given by the caller, the sampler gives ``N`` whole
sessions, which ``POST /v1/grade/samples`` tests against the target's law (docs/grading.md,
"Grading by samples"):

- a **program** (:func:`run_sampler_program`) is run once per config with
  ``{"config": ..., "samples": N, "seed": S}`` on its standard input and prints ``N`` lines,
  each a JSON list of token labels; a timeout, a crash, junk or a wrong number of lines fails
  that config only;
- a **Python function** (:func:`call_sampler`) is called ``N`` times per config as
  ``fn(target=..., draft=..., width=..., limit=..., eos=..., rng=random.Random)`` with model
  objects (:class:`ModelView`: ``.vocab``, and ``model(prefix)`` -> its probability row),
  plus ``mode``, ``drafts``, ``sampling`` and ``tree`` for a function that takes them
  (:func:`sampler_arguments`); an exception fails that config only, and so does a config whose
  mode (block, tree), ``sampling`` or ``tree`` the function cannot receive.

Pure SDK code (requests only, through the client).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import inspect
import json
import numbers
import random
import signal
import sys
import threading
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence

from .harness import MAX_TIMEOUT, Running, _stderr_tail, kept_modes, run_program
from .progress import Progress
from .tables import TableModel

DEFAULT_SAMPLES = 2000
"""Samples per config by default: every catalogued mistake that changes the output law fails
the standard suite at this N (docs/grading.md, "Minimum N")."""
MAX_SAMPLES = 200_000
"""Samples per config at most (one request of the service holds at most its body's 8 MiB)."""


class ModelView:
    """A bigram table as a model object for a student's function: ``vocab`` (labels, in order)
    and ``model(prefix)`` -> the row after ``prefix`` (a list of labels; the start row for
    ``[]``) as floats in vocabulary order, summing to 1 (SPEC section 1); ``model.table()`` is
    the same model over token ids (:class:`~specdec_client.TableModel`, with the config's EOS)."""

    def __init__(self, table: Mapping[str, Any], eos: Optional[str] = None):
        self.vocab = list(table["vocab"])
        self._table = table
        self._eos = eos
        self._start = self._normalised(table["start"])
        self._next = {label: self._normalised(row) for label, row in table["next"].items()}

    def table(self) -> TableModel:
        """This model over token ids, for HF-style code: ``probs(prefix_ids)``, ``ids``,
        ``labels``, ``eos_id`` (:class:`~specdec_client.TableModel`)."""
        return TableModel.from_table(self._table, self._eos)

    @staticmethod
    def _normalised(row: Sequence[float]) -> list[float]:
        total = float(sum(row))
        return [float(w) / total for w in row]

    def __call__(self, prefix: Sequence[str]) -> list[float]:
        return list(self._next[prefix[-1]] if prefix else self._start)

    def __repr__(self) -> str:
        return f"ModelView(vocab={self.vocab!r})"


@dataclass
class SampleTest:
    """One config graded by samples: ``id``, ``config``, the ``samples`` collected, the
    ``problem`` that stopped them (a sentence, or ``None``), and the service's ``report``."""

    id: str
    config: dict[str, Any]
    seed: int
    samples: list[Any] = field(default_factory=list)
    problem: Optional[str] = None
    report: Optional[dict[str, Any]] = None
    requested: Optional[int] = None
    """The samples asked for (``N``); ``None`` for samples read from a file."""
    source: str = "program"
    """Where the samples came from: ``"program"`` (its standard input is shown), ``"function"``
    (the call is shown) or ``"file"`` (the config is shown)."""

    @property
    def passed(self) -> bool:
        """Collected and graded as passed."""
        return self.problem is None and self.report is not None and bool(self.report["passed"])

    def _input(self) -> str:
        """What the sampler was given, whole, so that the instructor can run it again: the JSON
        line on a program's standard input, the function's arguments, or a file's config."""
        config = json.dumps(self.config, separators=(",", ":"))
        if self.source == "file":
            return f"Graded against the config: {config}"
        if self.source == "function":
            return (f"Called {self.requested} times with the models of the config {config}, "
                    f"and rng = random.Random({self.seed}) (one for the config)")
        line = json.dumps({"config": self.config, "samples": self.requested, "seed": self.seed}, separators=(",", ":"))
        return f"Input on standard input: {line}"

    def message(self) -> str:
        """The failure in plain text (empty when passed)."""
        if self.passed:
            return ""
        head = f"Config {self.id}\n" + self._input()
        if self.problem is not None:
            return f"{head}\nFailed: {self.problem}"
        assert self.report is not None
        lines = [head, f"Failed: {self.report['reason']}"]
        worst = self.report.get("most_deviating")
        if worst and worst.get("position") is not None:
            over = ", ".join(f"{o['token'] if o['token'] is not None else 'the end'!s} {o['observed']} "
                             f"(expected {o['expected']:.1f})" for o in worst["over_represented"])
            lines.append(f"Most deviating: position {worst['position']} after "
                         f"{'the start' if worst['context'] is None else repr(worst['context'])} "
                         f"(p = {worst['p_value']:.3g}, Holm-adjusted {worst['adjusted_p_value']:.3g})"
                         + (f"; too often: {over}" if over else ""))
        mistake = self.report.get("mistake") or {}
        shown = mistake.get("named") or mistake.get("closest")
        if shown:
            ratio = shown["log_likelihood_ratio"]
            lines.append(("Evidence" if mistake.get("named") else f"A guess, not a diagnosis, {shown['id']}")
                         + ": ln L(mistake) - ln L(target) = "
                         + ("infinite (the target cannot produce these samples)" if ratio is None else f"{ratio:.1f}")
                         + f"; the mistake's own fit: p = {shown['p_value']:.3g}"
                         + f"; block schedule: {shown.get('schedule', 'spec')}")
        return "\n".join(lines)


def sample_configs(client: Any, suite: str = "standard") -> list[tuple[str, dict[str, Any]]]:
    """The configs of ``suite`` (a name, or ``name@N`` for version N) that have an output law:
    ``[(id, config)]``, greedy left out and configs that differ only by their seed taken once
    (the first id). Configs with sampling parameters (SPEC 9: the ``sampling`` and ``all``
    suites) are kept: a sampler is handed the models' raw tables and processes the rows itself."""
    seen: dict[str, tuple[str, dict[str, Any]]] = {}
    for entry in client.suite(suite)["configs"]:
        config = dict(entry["config"])
        if config.get("mode") == "greedy":
            continue
        key = json.dumps({k: v for k, v in config.items() if k != "seed"}, sort_keys=True)
        seen.setdefault(key, (entry["id"], config))
    return list(seen.values())


PROGRAM_HINT = "print only the samples on standard output, one JSON list of labels a line; messages go to standard error"
"""What a program whose output has other lines is told."""
FILE_HINT = "each line of the file must be one JSON list of labels: one whole session's output"
"""What a ``--samples-from`` file with other lines is told."""


def read_lines(stdout: bytes, count: int, hint: str = PROGRAM_HINT) -> tuple[list[Any], Optional[str]]:
    """``count`` lines of JSON lists of labels from a program's output: ``(samples, None)`` or
    ``([], problem)`` for junk or a wrong number of lines."""
    try:
        text = stdout.decode("utf-8")
    except UnicodeDecodeError:
        return [], "its output is not UTF-8"
    lines = [line for line in text.splitlines() if line.strip()]
    samples = []
    for i, line in enumerate(lines, 1):
        try:
            value: Any = json.loads(line)
        except ValueError:
            value = read_lines  # a marker: not JSON at all
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            what = "not JSON" if value is read_lines else "not a JSON list of token labels"
            return [], f"line {i} of {len(lines)} is {what}: {line[:80]!r} ({hint})"
        samples.append(value)
    if len(lines) != count:
        return [], f"it printed {len(lines)} lines, not {count} (one JSON list of labels per sample)"
    return samples, None


def run_sampler_program(test: SampleTest, command: str, count: int, timeout: float, cwd: Optional[str] = None,
                        running: Optional[Running] = None, on_lines: Optional[Callable[[int], None]] = None) -> None:
    """Run ``command`` for ``test`` and fill its ``samples`` or its ``problem`` (``running``: the
    programs under way, killed on Ctrl-C; ``on_lines``: called with the lines of each chunk the
    program prints, as it prints them)."""
    test.source, test.requested = "program", count
    stdin = (json.dumps({"config": test.config, "samples": count, "seed": test.seed}) + "\n").encode("utf-8")
    result = run_program(command, stdin, timeout, cwd, running, on_lines)
    if result.timed_out:
        test.problem = f"the program ran longer than {timeout:g} s and was stopped"
    elif result.overflow:
        test.problem = "the program printed too much"
    elif result.status != 0:
        tail = _stderr_tail(result.stderr)
        test.problem = f"the program exited with status {result.status}" + (
            f"; its standard error ends:\n{tail}" if tail else "")
    else:
        test.samples, test.problem = read_lines(result.stdout, count)


def models_of(client: Any, config: Mapping[str, Any]) -> tuple[ModelView, ModelView]:
    """The target and draft of ``config`` as :class:`ModelView` (built-in names read from
    ``GET /v1/models``; a config without a draft gets the target's)."""
    builtin = {m.name: {"vocab": m.vocab, "start": m.start, "next": m.next} for m in client.models()}

    def view(value: Any) -> ModelView:
        return ModelView(builtin[value] if isinstance(value, str) else value, config.get("eos"))
    target = view(config.get("target", "toy"))
    return target, view(config["draft"]) if "draft" in config else target


SAMPLE_MODES = ("speculative", "autoregressive", "block", "tree")
"""The modes graded by samples (their output law is the target's; greedy has none)."""
EXTRA_SETTINGS = ("mode", "drafts", "sampling", "tree")
"""The settings a function receives only when it takes them (a parameter of that name, or
``**kwargs``): older functions ``fn(target, draft, width, limit, eos, rng)`` keep working."""


def _parameters(fn: Callable[..., Any]) -> tuple[set[str], bool]:
    """The keyword names ``fn`` takes, and whether it takes ``**kwargs`` (none known when its
    signature cannot be read)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return set(), False
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    names = {p.name for p in signature.parameters.values() if p.kind in kinds}
    return names, any(p.kind == inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values())


def sampler_arguments(fn: Callable[..., Any], config: Mapping[str, Any]) -> tuple[dict[str, Any], Optional[str]]:
    """The settings of ``config`` as keyword arguments for ``fn`` (models and ``rng`` left
    out): ``width`` (the config's, 0 in mode autoregressive), ``limit``, ``eos``, and of
    :data:`EXTRA_SETTINGS` those ``fn`` takes: ``mode`` (``"speculative"``, ``"autoregressive"``,
    ``"block"`` or ``"tree"``), ``drafts`` (1 to 8, SPEC 11; 1 unless the config says) and
    ``sampling`` (the config's SPEC 9 object, or ``None``) and ``tree`` (the config's SPEC 12
    tree setting as sent, a dict such as ``{"shape": "distinct", "verify": "residual",
    "branching": [2, 1]}``, or ``None``: then SPEC 11's chains and residual). Returns ``(kwargs,
    problem)``: ``problem`` is a sentence when the config needs a setting ``fn`` cannot receive
    (mode block or tree needs ``mode``, mode tree ``drafts``, a non-empty ``sampling`` needs
    ``sampling``, a ``tree`` needs ``tree``), so that the config fails instead of being graded as
    another mode (SPEC 10, 11, 9, 12)."""
    mode = config.get("mode", "speculative")
    names, any_keyword = _parameters(fn)
    values = {"mode": mode, "drafts": config.get("drafts", 1), "sampling": config.get("sampling") or None,
              "tree": config.get("tree")}
    kwargs: dict[str, Any] = {"width": 0 if mode == "autoregressive" else config.get("width", 3),
                              "limit": config.get("limit", 8), "eos": config.get("eos")}
    kwargs.update({name: values[name] for name in EXTRA_SETTINGS if any_keyword or name in names})
    needed = (["mode"] if mode in ("block", "tree") else []) + (["drafts"] if mode == "tree" else []) \
        + (["sampling"] if values["sampling"] else []) + (["tree"] if values["tree"] is not None else [])
    missing = [name for name in needed if name not in kwargs]
    if not missing:
        return kwargs, None
    what = f"mode {mode!r}" + (f" with drafts {values['drafts']}" if mode == "tree" else "") \
        + (" and sampling parameters" if values["sampling"] else "") \
        + (f" and tree {values['tree']!r}" if values["tree"] is not None else "")
    return kwargs, (f"the config has {what}, but the function takes no {' or '.join(repr(m) for m in missing)} "
                    f"parameter, so it cannot be told; add keyword parameters (mode=\"speculative\", drafts=1, "
                    f"sampling=None, tree=None) or **kwargs to grade this config (not graded as another mode)"
                    + ("; for an exercise without it, grade only the modes it implements: --modes "
                       "speculative,autoregressive (Client.grade_sampler(modes=[...]))" if "mode" in missing else ""))


def signature_problem(fn: Callable[..., Any], kwargs: Mapping[str, Any]) -> Optional[str]:
    """A sentence when ``fn`` cannot be called with the keyword arguments ``kwargs`` (a wrong
    signature: a missing or renamed parameter, a required one the harness does not give), or
    ``None`` (also when the signature cannot be read)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    try:
        signature.bind(**kwargs)
    except TypeError as error:
        name = getattr(fn, "__name__", "the function")
        return (f"the function cannot be called as {name}({', '.join(f'{k}=' for k in kwargs)}): {error}; "
                f"its signature is {name}{signature} (docs/grading.md, \"The command and the SDK\")")
    return None


def _student_frame(error: BaseException) -> str:
    """``file:line`` of the deepest frame outside this module (the student's code when it is
    in the traceback)."""
    frames = traceback.extract_tb(error.__traceback__)
    outside = [f for f in frames if f.filename != __file__] or frames
    return f"{outside[-1].filename}:{outside[-1].lineno}"


class CallTimeout(BaseException):
    """Raised in the student's function when one call runs past its time limit (a
    ``BaseException``, so that the function's own ``except Exception`` does not swallow it)."""


@contextlib.contextmanager
def call_deadline(seconds: Optional[float]) -> Iterator[Callable[[float], None]]:
    """An ``arm(seconds)`` function that raises :class:`CallTimeout` in the running code after
    that many seconds of wall time (``arm(0)`` disarms), by ``SIGALRM``; a no-op where there is
    none (Windows) or off the main thread, or when ``seconds`` is ``None``."""
    usable = (seconds is not None and hasattr(signal, "setitimer")
              and threading.current_thread() is threading.main_thread())
    if not usable:
        yield lambda _: None
        return

    def on_alarm(signum: int, frame: Any) -> None:
        raise CallTimeout()
    previous = signal.signal(signal.SIGALRM, on_alarm)
    try:
        def arm(after: float) -> None:
            signal.setitimer(signal.ITIMER_REAL, after)
        yield arm
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


PROGRESS_EVERY = 50
"""A function's calls are reported to the progress bar in batches of this many samples."""


def call_sampler(test: SampleTest, fn: Callable[..., Any], count: int, target: ModelView, draft: ModelView,
                 timeout: Optional[float] = None, tick: Optional[Callable[[int], None]] = None) -> None:
    """Call ``fn`` ``count`` times for ``test`` (one seeded ``random.Random`` for the config)
    with :func:`sampler_arguments`, and fill its ``samples`` or its ``problem`` (a setting the
    function cannot receive, a signature it cannot be called with, or the exception with the
    student's frame, or a call that ran longer than ``timeout`` seconds: an endless loop fails its
    config instead of hanging the grader). What the function prints goes to standard error, so
    that the command's own output (``--json``) stays whole. ``tick(calls)``, when given, is
    called after every :data:`PROGRESS_EVERY` calls and after the last (a progress bar that
    moves while the config's samples are drawn)."""
    test.source, test.requested = "function", count
    kwargs, test.problem = sampler_arguments(fn, test.config)
    if test.problem is not None:
        return
    rng = random.Random(test.seed)
    kwargs = {"target": target, "draft": draft, "rng": rng, **kwargs}
    test.problem = signature_problem(fn, kwargs)
    if test.problem is not None:
        return
    call = 0
    try:
        with contextlib.redirect_stdout(sys.stderr), call_deadline(timeout) as arm:
            for call in range(1, count + 1):
                arm(timeout or 0)
                out = fn(**kwargs)
                arm(0)
                sample, test.problem = returned_labels(out)
                if test.problem is not None:
                    test.samples = []
                    return
                test.samples.append(sample)
                if tick is not None and (call % PROGRESS_EVERY == 0 or call == count):
                    tick(call)
    except CallTimeout as error:
        test.samples = []
        test.problem = (f"call {call} of the function ran longer than {timeout:g} s and was stopped (at "
                        f"{_student_frame(error)}): an endless loop? (--timeout sets the limit of one call)")
    except (Exception, SystemExit) as error:  # a student's function: any exception (sys.exit too) fails its config only
        test.samples = []
        test.problem = f"the function raised {type(error).__name__}: {error} ({_student_frame(error)})"


def returned_labels(out: Any) -> tuple[list[str], Optional[str]]:
    """A function's return value as a session's labels: ``(labels, None)`` for a list (any
    iterable but a string) of strings, else ``([], problem)`` saying what it returned (token ids
    get a hint to return ``target.vocab[i]``)."""
    shown = repr(out)[:80]
    if isinstance(out, (str, bytes)) or not hasattr(out, "__iter__"):
        return [], f"the function returned {type(out).__name__} {shown}, not a list of token labels"
    items = list(out)
    if all(isinstance(x, str) for x in items):
        return [str(x) for x in items], None
    if all(isinstance(x, numbers.Integral) for x in items):
        return [], (f"the function returned token ids {shown}, not labels: return the labels, "
                    f"[target.vocab[i] for i in ids]")
    return [], f"the function returned {shown}, not a list of token labels (strings)"


def grade_collected(client: Any, tests: Sequence[SampleTest], progress: Optional[Progress] = None) -> None:
    """Grade every test whose samples were collected (one ``POST /v1/grade/samples`` each); a
    refused request (422) becomes the test's ``problem`` when it is the samples that are wrong.
    Raises :class:`~specdec_client.errors.InvalidInput` when every field the service names is
    in the config: the caller's config, not the sampler, is wrong (``specdec grade`` exits 4)."""
    from .errors import InvalidInput

    todo = [t for t in tests if t.problem is None]
    if progress is not None:
        progress("samples", 0, len(todo))
    for done, test in enumerate(todo, 1):
        try:
            test.report = client.grade_samples(test.config, test.samples)
        except InvalidInput as error:
            pointers = [e.pointer or "" for e in error.errors]
            if pointers and all(p == "#/config" or p.startswith("#/config/") for p in pointers):
                raise
            test.problem = f"the service refused the samples: {error}"
        if progress is not None:
            progress("samples", done, len(todo))


def _check_arguments(fn: Optional[Callable[..., Any]], command: Optional[str], samples: int, jobs: int,
                     timeout: float) -> None:
    """:func:`grade_sampler`'s argument checks: ``ValueError`` naming the bad one."""
    if (fn is None) == (command is None):
        raise ValueError("give exactly one of fn and command")
    if not 1 <= samples <= MAX_SAMPLES:
        raise ValueError(f"samples must be 1 to {MAX_SAMPLES}, got {samples}")
    if not 1 <= jobs <= 64:
        raise ValueError(f"jobs must be 1 to 64, got {jobs}")
    if fn is not None and jobs != 1:
        raise ValueError("jobs runs programs at once; a Python function is called in this process, one call at a "
                         "time (use --exec for parallel runs)")
    if not 0 < timeout <= MAX_TIMEOUT:
        raise ValueError(f"timeout must be above 0 and at most {MAX_TIMEOUT:g} seconds, got {timeout}")


def _chosen_configs(client: Any, suite: str, configs: Optional[Sequence[tuple[str, Mapping[str, Any]]]],
                    modes: Optional[Sequence[str]]) -> list[tuple[int, str, dict[str, Any]]]:
    """The ``[(index, id, config)]`` :func:`grade_sampler` grades: ``configs`` or the suite's
    sample configs, kept to ``modes`` when given (``ValueError`` for an unknown mode or none
    left); ``index`` is the config's place before ``modes`` filters them, so that its seed does
    not depend on the filter."""
    chosen = sample_configs(client, suite) if configs is None else [(i, dict(c)) for i, c in configs]
    return [(n, chosen[n][0], dict(chosen[n][1])) for n in kept_modes(chosen, modes, SAMPLE_MODES)]


def _collect_from_function(client: Any, tests: Sequence[SampleTest], fn: Callable[..., Any], samples: int,
                           timeout: float, progress: Optional[Progress]) -> None:
    """Call ``fn`` ``samples`` times per config, in this process, one config after another;
    ``progress("sample", samples drawn, samples of every config)`` follows the calls in batches
    of :data:`PROGRESS_EVERY`."""
    total = samples * len(tests)
    for done, test in enumerate(tests):
        def tick(calls: int, before: int = done * samples) -> None:
            if progress is not None:
                progress("sample", before + calls, total)
        call_sampler(test, fn, samples, *models_of(client, test.config), timeout=timeout, tick=tick)
        tick(samples)


class _LineCount:
    """The lines printed by the programs of every config, fed to ``progress`` as one ``"sample"``
    stage (each program's count capped at ``samples``; thread-safe: reader threads call it)."""

    def __init__(self, progress: Optional[Progress], samples: int, programs: int):
        self.progress, self.samples = progress, samples
        self.lines = [0] * programs
        self.lock = threading.Lock()

    def add(self, program: int, lines: int) -> None:
        """``lines`` more lines printed by ``program``."""
        with self.lock:
            self.lines[program] = min(self.samples, self.lines[program] + lines)
            self._report()

    def finish(self, program: int) -> None:
        """``program`` ended (with its samples, or a problem): it counts whole."""
        with self.lock:
            self.lines[program] = self.samples
            self._report()

    def _report(self) -> None:
        if self.progress is not None:
            self.progress("sample", sum(self.lines), self.samples * len(self.lines))


def _collect_from_program(tests: Sequence[SampleTest], command: str, samples: int, timeout: float,
                          cwd: Optional[str], jobs: int, progress: Optional[Progress]) -> None:
    """Run ``command`` once per config, ``jobs`` at a time; on Ctrl-C or an error no further run
    starts and the running ones are killed (as ``--exec`` does). ``progress("sample", lines,
    samples of every config)`` follows the lines the programs print as they print them (at most
    ``samples`` a program; a finished program counts whole)."""
    running, counted = Running(), _LineCount(progress, samples, len(tests))
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs)
    try:
        runs = {pool.submit(run_sampler_program, test, command, samples, timeout, cwd, running,
                            functools.partial(counted.add, i)): i for i, test in enumerate(tests)}
        for run in concurrent.futures.as_completed(runs):
            run.result()
            counted.finish(runs[run])
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        running.stop()
        raise
    pool.shutdown()


def grade_sampler(client: Any, *, fn: Optional[Callable[..., Any]] = None, command: Optional[str] = None,
                  suite: str = "standard", samples: int = DEFAULT_SAMPLES, seed: int = 0, timeout: float = 60.0,
                  cwd: Optional[str] = None, progress: Optional[Progress] = None,
                  configs: Optional[Sequence[tuple[str, Mapping[str, Any]]]] = None,
                  modes: Optional[Sequence[str]] = None, jobs: int = 1) -> list[SampleTest]:
    """Collect ``samples`` sessions per config of ``suite`` (or of ``configs``, ``[(id, config)]``,
    any configs instead of a suite's; ``modes``, when given, keeps only the configs of those
    modes, e.g. ``["speculative", "autoregressive"]`` for a sampler of SPEC 4 alone) from a
    Python function ``fn`` or a shell ``command`` (exactly one) and grade them. The ``i``-th
    config of the suite's sample configs (or of ``configs``) gets the seed ``seed + i``, counted
    before ``modes`` filters them: the same config gets the same seed with or without ``modes``. ``jobs`` (1-64) runs of ``command`` at once (a function is
    called in this process, one call at a time: ``jobs`` must be 1). ``timeout`` (seconds) limits each run of ``command``, or each
    call of ``fn`` (an endless loop fails its config; by ``SIGALRM``, on the main thread). Raises ``ValueError`` for bad arguments (a mode outside
    :data:`SAMPLE_MODES`, or no config left), the client's errors when the service fails, and
    :class:`~specdec_client.errors.InvalidInput` when it refuses a config of ``configs``."""
    _check_arguments(fn, command, samples, jobs, timeout)
    chosen = _chosen_configs(client, suite, configs, modes)
    tests = [SampleTest(i, c, seed + n) for n, i, c in chosen]
    if fn is not None:
        if progress is not None:
            progress("sample", 0, samples * len(tests))
        _collect_from_function(client, tests, fn, samples, timeout, progress)
    else:
        assert command is not None
        if progress is not None:
            progress("sample", 0, samples * len(tests))
        _collect_from_program(tests, command, samples, timeout, cwd, jobs, progress)
    grade_collected(client, tests, progress)
    return tests


def gradescope_sample_results(tests: Sequence[SampleTest], points: float = 10.0, suite: str = "standard") -> dict[str, Any]:
    """Gradescope's results: one test per config (``points`` when passed, else 0)."""
    results = [{"name": f"{suite} samples: {t.id}", "score": points if t.passed else 0.0, "max_score": points,
                "status": "passed" if t.passed else "failed", "output": t.message(), "visibility": "visible"}
               for t in tests]
    return {"score": sum(r["score"] for r in results), "tests": results}
