# PYTHON_ARGCOMPLETE_OK  (argcomplete's marker: this command completes itself, see `specdec completion`)
"""The ``specdec`` command line.

::

    specdec run --draft biased --seed 1 [--width 3] [--mode speculative|greedy|autoregressive|block|tree]
                [--drafts 1] [--limit 8] [--target toy] [--eos TOKEN] [--json] [--save TRACE.json]
                [--temperature T] [--top-k K] [--top-p P] [--min-p M] [--draft-rows processed|raw]
                [--tree-shape chains|distinct|beam] [--tree-verify residual|target_only] [--branching 2,1]
                [--threshold-single T] [--threshold-acc T]
    specdec draws --seed 1 [--position 0] --count 5 [--json]
    specdec replay TRACE.json [--json]
    specdec models [--json]
    specdec health [--json]
    specdec analyze --draft biased [--width 3] [--limit 8] [--widths 1-8] [--draft-cost 0.05] [--json]
                    [--temperature T] [--top-k K] [--top-p P] [--min-p M] [--draft-rows processed|raw]
    specdec completion bash|zsh
    specdec --version

``--url`` (or the ``SPECDEC_URL`` environment variable; default
``http://localhost:8000``) picks the service, ``--timeout`` the seconds to
wait, ``--color auto|always|never`` the colour (``auto``: only on a terminal,
never when ``NO_COLOR`` is set, always when ``FORCE_COLOR`` is). ``--json``
(every command but ``completion``) prints JSON on stdout instead of text.
Long tasks draw a progress bar on stderr (:mod:`specdec_client.progress`).

Exit status (:mod:`specdec_client.exits`): 0 success, 1 the check failed
(``replay`` found a divergence, ``grade`` a failing file), 2 a usage error
(``specdec`` alone prints the commands) or an unusable input file, 3 the
service cannot be reached, 4 it refused the request (HTTP 4xx), 5 it failed
(HTTP 5xx), 6 no answer within ``--timeout`` (with a hint to raise it), 70 an internal
error, 130 interrupted. Errors are one line on
stderr, never a traceback; a refused connection adds a second line: start
the service (``specdec-service serve``) or point ``--url`` / ``SPECDEC_URL`` at it.

Other modules may add subcommands: when ``specdec_client.grading`` exists,
its ``add_parser(subparsers)`` is called; a subcommand sets
``handler=function(args, client) -> exit status`` with ``set_defaults``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from typing import IO, Any, Callable, Optional, Sequence

from . import __version__, exits
from .argtypes import finite_number, integer, integer_list, positive_number
from .client import DEFAULT_URL, Client
from .errors import APIError, ConnectionFailed, RequestTimedOut, SpecdecError, TraceFormatError
from .progress import Bars
from .render import Renderer, Style, can_encode, use_color, vocab_of
from .traces import load_trace, loads_json, save_trace
from .types import Config

EXIT_OK, EXIT_DIVERGED, EXIT_ERROR = exits.OK, exits.FAILED, exits.USAGE
"""The statuses the subcommands return themselves (the others: :mod:`specdec_client.exits`)."""
EXTENSIONS = ("specdec_client.grading", "specdec_client.analyze")
"""Modules whose ``add_parser(subparsers)`` adds subcommands, if installed."""


# ---------------------------------------------------------------- output helpers


def style_for(args: argparse.Namespace, stream: Optional[IO[str]] = None) -> Style:
    """The :class:`Style` for ``--color`` and the stream's abilities."""
    stream = stream or sys.stdout
    return Style(color=use_color(stream, getattr(args, "color", "auto")), unicode=can_encode(stream))


def emit(lines: Sequence[str]) -> None:
    """Print lines to stdout."""
    sys.stdout.write("\n".join(lines) + "\n")


def emit_json(data: Any) -> None:
    """Print JSON (2-space indent) to stdout."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def progress_bars(args: argparse.Namespace) -> Bars:
    """The progress bars of a long task, on stderr (see :mod:`specdec_client.progress`)."""
    return Bars(sys.stderr, color=use_color(sys.stderr, getattr(args, "color", "auto")))


# ---------------------------------------------------------------- subcommands


def model_arg(value: str) -> Any:
    """A model option: a built-in name, or ``@FILE`` for a custom table
    ``{"vocab", "start", "next"}`` read from a JSON file. Raises
    :class:`~specdec_client.errors.TraceFormatError` for a file that is not JSON."""
    if not value.startswith("@"):
        return value
    path = value[1:]
    with open(path, encoding="utf-8") as f:
        try:
            return loads_json(f.read())
        except ValueError as error:
            raise TraceFormatError(f"{path}: not JSON ({error})") from None


def completes(*words: str) -> Callable[..., list[str]]:
    """An argcomplete completer (an action's ``completer`` attribute) offering ``words``; argcomplete
    itself is imported only when a shell asks (see :func:`autocomplete`)."""
    def completer(**_: Any) -> list[str]:
        return list(words)
    return completer


def add_config_options(parser: argparse.ArgumentParser, *, seed: bool = True) -> None:
    """The session settings as options: ``--draft`` (required), ``--seed`` (required
    when ``seed``), ``--target``, ``--mode``, ``--drafts``, ``--width``, ``--limit``, ``--eos``,
    and the sampling parameters (:func:`add_sampling_options`)."""
    draft = parser.add_argument("--draft", required=True,
                                help="draft model: aligned, biased, or @FILE.json with a custom table {vocab, start, next}")
    setattr(draft, "completer", completes("aligned", "biased"))  # the built-in drafts (SPEC section 1)
    if seed:
        parser.add_argument("--seed", required=True, type=_nonnegative, help="seed of the draw stream, 0..2^53-1")
    target = parser.add_argument("--target", help="target model: toy (default) or @FILE.json with a custom table")
    setattr(target, "completer", completes("toy"))
    parser.add_argument("--mode", choices=("speculative", "greedy", "autoregressive", "block", "tree"),
                        help="decoding procedure (default: speculative; block: block verification, SPEC 10; "
                             "tree: several drafts, SPEC 11)")
    parser.add_argument("--drafts", type=int, help="draft chains per block, 1-8 (default: 1); read only in mode "
                                                   "tree, sent with a warning in another mode")
    parser.add_argument("--width", type=int, help="draft width, proposals per block, 1-16 (default: 3)")
    parser.add_argument("--limit", type=int, help="output length, 1-256 (default: 8)")
    parser.add_argument("--eos", help="end-of-sequence token (default: none)")
    add_tree_options(parser)
    add_sampling_options(parser)


TREE_OPTIONS = (("tree_shape", "shape"), ("tree_verify", "verify"), ("branching", "branching"),
                ("threshold_single", "threshold_single"), ("threshold_acc", "threshold_acc"))
"""``argparse`` destination -> the ``tree`` field it sets (SPEC section 12)."""


def add_tree_options(parser: argparse.ArgumentParser) -> None:
    """The setting ``tree`` of mode tree (SPEC section 12) as options: ``--tree-shape``,
    ``--tree-verify``, ``--branching``, ``--threshold-single``, ``--threshold-acc``; the service
    checks their bounds and combinations (a refusal: exit 4, the field on stderr)."""
    group = parser.add_argument_group(
        "draft trees (SPEC section 12, mode tree)",
        "None given: D chains verified by the residual (SPEC 11).")
    group.add_argument("--tree-shape", choices=("chains", "distinct", "beam"),
                       help="chains (D chains), distinct (siblings without replacement) or beam (top-D, no draws; "
                            "needs --tree-verify target_only)")
    group.add_argument("--tree-verify", choices=("residual", "target_only"),
                       help="residual (tests against each child's proposal law) or target_only (one draw a node, "
                            "the draft's probabilities never read)")
    group.add_argument("--branching", type=integer_list, metavar="B1,B2,...",
                       help="shape distinct: children a node per depth, e.g. 2,1 (default: drafts, then 1)")
    group.add_argument("--threshold-single", type=finite_number, metavar="T",
                       help="verify target_only: accept a child of p(y) >= T, 0 < T <= 1 (below 1: lossy)")
    group.add_argument("--threshold-acc", type=finite_number, metavar="T",
                       help="verify target_only: accept when u * T < acc_j, 0 < T <= 1 (below 1: lossy)")


def tree_settings(args: argparse.Namespace) -> Optional[dict[str, Any]]:
    """The ``tree`` object of the options of :func:`add_tree_options`, or ``None`` when none is
    given (then the config has no ``tree``)."""
    tree = {key: getattr(args, dest) for dest, key in TREE_OPTIONS if getattr(args, dest, None) is not None}
    return tree or None


SAMPLING_OPTIONS = (("temperature", "temperature"), ("top_k", "top_k"), ("top_p", "top_p"), ("min_p", "min_p"),
                    ("draft_rows", "draft"))
"""``argparse`` destination -> the ``sampling`` parameter it sets (SPEC section 9)."""


def add_sampling_options(parser: argparse.ArgumentParser) -> None:
    """The sampling parameters of SPEC section 9 as options (``--temperature``, ``--top-k``,
    ``--top-p``, ``--min-p``, ``--draft-rows``); the service checks their bounds (a value out
    of bounds is refused: exit 4, the field and its bound on stderr)."""
    group = parser.add_argument_group(
        "sampling parameters (SPEC section 9)",
        "Every row is processed before any rule reads it: temperature, then top-k, top-p, min-p, exactly. "
        "None given: rows unprocessed.")
    group.add_argument("--temperature", type=finite_number, metavar="T",
                       help="temperature: 0 (argmax) or 0.05-20; rows become p^(1/T), renormalised")
    group.add_argument("--top-k", type=int, metavar="K", help="keep the K most probable tokens (ties kept), 1-64")
    group.add_argument("--top-p", type=finite_number, metavar="P",
                       help="keep a token iff the probability of the more probable ones before it is below P, 0 < P <= 1")
    group.add_argument("--min-p", type=finite_number, metavar="M",
                       help="keep a token iff its probability is at least M times the largest, 0-1")
    group.add_argument("--draft-rows", choices=("processed", "raw"),
                       help="draft from the processed draft rows q' (default) or the raw q; the target's rows are "
                            "always processed")


def sampling_settings(args: argparse.Namespace) -> Optional[dict[str, Any]]:
    """The ``sampling`` object of the options of :func:`add_sampling_options`, or ``None``
    when none is given (then the config has no ``sampling``)."""
    sampling = {key: getattr(args, dest) for dest, key in SAMPLING_OPTIONS if getattr(args, dest, None) is not None}
    return sampling or None


def config_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The settings given by :func:`add_config_options` (``@FILE`` models read; ``sampling``
    only when a sampling option is given)."""
    settings = {"draft": model_arg(args.draft)}
    for key in ("seed", "target", "mode", "width", "limit", "eos", "drafts"):
        value = getattr(args, key, None)
        if value is not None:
            settings[key] = model_arg(value) if key == "target" else value
    sampling = sampling_settings(args)
    if sampling is not None:
        settings["sampling"] = sampling
    tree = tree_settings(args)
    if tree is not None:
        settings["tree"] = tree
    return settings


def cmd_run(args: argparse.Namespace, client: Client) -> int:
    """``specdec run``: decode a whole session and print it block by block."""
    trace = client.run(Config(**config_settings(args)))
    if args.save:
        save_trace(trace, args.save)
    if args.json:
        emit_json(trace.to_dict())
        return EXIT_OK
    config = trace.config
    models = client.models() if config.vocab() is None else []
    emit(Renderer(vocab_of(config, models), style_for(args)).trace(trace))
    return EXIT_OK


def cmd_draws(args: argparse.Namespace, client: Client) -> int:
    """``specdec draws``: a slice of the draw stream of a seed (SPEC section 2)."""
    draws = client.draws(args.seed, args.position, args.count)
    if args.json:
        emit_json({"draws": [d.to_dict() for d in draws]})
    else:
        emit(Renderer(style=style_for(args)).draws(draws))
    return EXIT_OK


def cmd_replay(args: argparse.Namespace, client: Client) -> int:
    """``specdec replay``: 0 when the saved trace matches the service, 1 when not."""
    trace = load_trace(args.trace)
    with progress_bars(args) as bars:
        report = client.replay(trace, progress=bars)
    if args.json:
        emit_json(report.to_dict())
    else:
        style = style_for(args)
        text = str(report).splitlines()
        text[0] = (style.good if report.ok else style.bad)(text[0])
        emit(text)
    return EXIT_OK if report.ok else EXIT_DIVERGED


def cmd_models(args: argparse.Namespace, client: Client) -> int:
    """``specdec models``: the built-in models and their rows."""
    models = client.models()
    if args.json:
        emit_json({"models": [m.to_dict() for m in models]})
    else:
        emit(Renderer(style=style_for(args)).models(models))
    return EXIT_OK


def cmd_health(args: argparse.Namespace, client: Client) -> int:
    """``specdec health``: the service's status and version."""
    health = client.health()
    if args.json:
        emit_json(health.to_dict())
    else:
        emit([f"{health.status}  version {health.version}  {client.base_url}"])
    return EXIT_OK


SHELLS = ("bash", "zsh")
"""The shells ``specdec completion`` writes a script for."""


def cmd_completion(args: argparse.Namespace) -> int:
    """``specdec completion bash|zsh``: the shell's completion script, from argcomplete (the
    ``cli`` extra); exit 2 with a one-line hint when argcomplete is not installed."""
    try:
        argcomplete = importlib.import_module("argcomplete")
    except ImportError:
        return fail("shell completion needs argcomplete: pip install './client[cli]' (from the repository's root)")
    sys.stdout.write(argcomplete.shellcode(["specdec"], shell=args.shell))
    return EXIT_OK


# ---------------------------------------------------------------- parser

_nonnegative = integer(0)


def common_options() -> argparse.ArgumentParser:
    """Options every subcommand accepts (before or after its name)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--url", default=argparse.SUPPRESS,
                        help=f"the service's base URL (default: $SPECDEC_URL or {DEFAULT_URL})")
    common.add_argument("--timeout", type=positive_number, default=argparse.SUPPRESS,
                        help="seconds to wait for each answer (default: 10; analyze: 60)")
    common.add_argument("--color", choices=("auto", "always", "never"), default=argparse.SUPPRESS,
                        help="colour the output (default: auto, i.e. on a terminal unless NO_COLOR is set)")
    return common


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of ``specdec`` with every subcommand (and those of
    :data:`EXTENSIONS` that are installed)."""
    common = common_options()
    parser = argparse.ArgumentParser(
        prog="specdec", parents=[common],
        description="Drive the specdec service: speculative decoding, inspectable and reproducible.",
        epilog="Exit status: 0 ok, 1 the check failed (replay diverged, grading failed), 2 usage error, "
               "3 the service cannot be reached, 4 it refused the request (HTTP 4xx), 5 it failed (HTTP 5xx), "
               "6 no answer within --timeout.")
    parser.add_argument("--version", action="version", version=f"specdec-client {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")  # none: main prints the help

    run = sub.add_parser("run", parents=[common], help="decode a session and print it block by block",
                         description="Decode a whole session (POST /v1/runs) and print every block.")
    add_config_options(run)
    run.add_argument("--json", action="store_true", help="print the trace as JSON instead")
    run.add_argument("--save", metavar="FILE", help="also save the trace as JSON to FILE")
    run.set_defaults(handler=cmd_run)

    draws = sub.add_parser("draws", parents=[common], help="show draws of the random stream",
                           description="Show draws of a seed's SplitMix64 stream (SPEC section 2).")
    draws.add_argument("--seed", required=True, type=_nonnegative, help="seed, 0..2^53-1")
    draws.add_argument("--position", type=_nonnegative, default=0, help="first draw (default: 0)")
    draws.add_argument("--count", type=int, default=5, help="how many draws, 1-4096 (default: 5)")
    draws.add_argument("--json", action="store_true", help="print JSON")
    draws.set_defaults(handler=cmd_draws)

    replay = sub.add_parser("replay", parents=[common], help="check a saved trace against the service",
                            description="Replay every block of a saved trace and list each divergence. "
                                        "Exit 0 when it matches, 1 when it diverges, 2 on error.")
    replay.add_argument("trace", metavar="TRACE.json", help="a specdec-trace/1 file ('-' for stdin)")
    replay.add_argument("--json", action="store_true", help="print the report as JSON")
    replay.set_defaults(handler=cmd_replay)

    models = sub.add_parser("models", parents=[common], help="list the built-in models",
                            description="List the built-in models and their rows (SPEC section 1).")
    models.add_argument("--json", action="store_true", help="print JSON")
    models.set_defaults(handler=cmd_models)

    health = sub.add_parser("health", parents=[common], help="check that the service answers")
    health.add_argument("--json", action="store_true", help="print the service's answer as JSON")
    health.set_defaults(handler=cmd_health)

    completion = sub.add_parser(
        "completion", help="print the shell completion script (bash or zsh)",
        description="Print the completion script of SHELL (needs the cli extra: pip install './client[cli]' from the repository's root). "
                    "bash: eval \"$(specdec completion bash)\" in ~/.bashrc; "
                    "zsh: eval \"$(specdec completion zsh)\" in ~/.zshrc, after compinit.")
    completion.add_argument("shell", choices=SHELLS, help="bash or zsh")
    completion.set_defaults(local=cmd_completion)

    for name in EXTENSIONS:
        add_extension(sub, name)
    return parser


def add_extension(subparsers: Any, name: str) -> None:
    """Let module ``name`` add its subcommands, if it is installed."""
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name == name:
            return
        raise
    module.add_parser(subparsers)


# ---------------------------------------------------------------- main


def _one_line(error: BaseException) -> str:
    if isinstance(error, APIError):
        return str(error)
    text = " ".join(str(error).split())
    return text or type(error).__name__


def autocomplete(parser: argparse.ArgumentParser) -> None:
    """Answer a shell's completion request (argcomplete's protocol: the ``_ARGCOMPLETE``
    environment variable is set by the script ``specdec completion`` prints) and exit;
    otherwise return at once, without importing argcomplete."""
    if "_ARGCOMPLETE" not in os.environ:
        return
    try:
        argcomplete = importlib.import_module("argcomplete")
    except ImportError:
        return
    argcomplete.autocomplete(parser, exit_method=sys.exit)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run ``specdec`` with ``argv`` (default: ``sys.argv[1:]``); returns the exit status
    (:mod:`specdec_client.exits`)."""
    parser = build_parser()
    autocomplete(parser)
    args = parser.parse_args(argv)
    if getattr(args, "local", None) is not None:  # needs no service
        local: Callable[[argparse.Namespace], int] = args.local
        return local(args)
    if getattr(args, "handler", None) is None:  # `specdec` alone: the commands, as --help lists them
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    refusal = check_tree_options(args)
    if refusal:
        return fail(refusal)
    if getattr(args, "trace", None) == "-":
        args.trace = sys.stdin
    url = getattr(args, "url", None) or os.environ.get("SPECDEC_URL") or DEFAULT_URL
    handler: Callable[[argparse.Namespace, Client], int] = args.handler
    try:
        client = Client(url, timeout=getattr(args, "timeout", getattr(args, "default_timeout", 10)))
    except ValueError as error:  # e.g. --url localhost:8000
        return fail(str(error))
    try:
        with client:
            return handler(args, client)
    except ConnectionFailed as error:
        fail(_one_line(error))
        print("specdec: start the service (specdec-service serve) or point --url / SPECDEC_URL at it",
              file=sys.stderr)
        return exits.UNREACHABLE
    except RequestTimedOut as error:
        fail(_one_line(error))
        print(f"specdec: the service may still be working on it: give it more time with --timeout SECONDS "
              f"(this run waited {error.timeout:g} s)", file=sys.stderr)
        return exits.TIMED_OUT
    except SpecdecError as error:
        return fail(_one_line(error), exits.status_of(error))
    except OSError as error:  # e.g. an unreadable trace file
        where = f"{error.filename}: " if getattr(error, "filename", None) else ""
        return fail(f"{where}{error.strerror or error}")
    except KeyboardInterrupt:
        print("specdec: interrupted", file=sys.stderr)
        return exits.INTERRUPTED
    except Exception as error:  # a bug: still one line, unless debugging
        if os.environ.get("SPECDEC_DEBUG"):
            raise
        return fail(f"internal error: {type(error).__name__}: {error} (set SPECDEC_DEBUG=1 for the traceback)",
                    exits.INTERNAL)


def check_tree_options(args: argparse.Namespace) -> Optional[str]:
    """The options of mode tree read as the service reads them, before any request: ``--drafts``
    outside mode tree is sent and warned about (SPEC 11: only mode tree reads it; the service
    accepts and ignores it elsewhere), and ``--tree-shape beam`` without ``--tree-verify
    target_only`` is a usage error naming the fix (SPEC 12 refuses the residual verifier, the
    default, with beam). Returns the error message, or ``None``."""
    mode = getattr(args, "mode", None) or "speculative"
    if getattr(args, "drafts", None) is not None and mode != "tree":  # not silently ignored
        print(f"specdec: warning: --drafts is read only in mode tree (SPEC 11): mode {mode} ignores it",
              file=sys.stderr)
    if getattr(args, "tree_shape", None) == "beam" and getattr(args, "tree_verify", None) != "target_only":
        return ("--tree-shape beam needs --tree-verify target_only (SPEC 12: a beam tree has no draft law, "
                "so the residual verifier, the default, is refused)")
    return None


def fail(message: str, status: int = EXIT_ERROR) -> int:
    """Print ``specdec: error: message`` on stderr; returns ``status`` (default: usage, 2)."""
    print(f"specdec: error: {message}", file=sys.stderr)
    return status


def entry() -> None:
    """Console-script entry point (``specdec``)."""
    try:
        status = main()
        sys.stdout.flush()
    except BrokenPipeError:  # e.g. `specdec run ... | head`
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        status = 0
    sys.exit(status)
