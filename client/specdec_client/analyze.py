"""``specdec analyze``: the exact analysis of a configuration as a readable report.

::

    specdec analyze --draft biased [--target toy] [--mode speculative] [--width 3] [--limit 8]
                    [--eos TOKEN] [--depth 3] [--widths 1-8] [--draft-cost 0.05] [--json]

Calls ``POST /v1/analysis`` (``Client.analyze``) and prints: alpha and the residual per
context; the expected work counters of one session; the exact committed tokens per pass and
speedup against Leviathan et al.'s closed form; the sweep over widths as a table with a bar
per width (Unicode block characters, ``#`` when the terminal cannot show them), the best
width marked; the output's total variation to the target (and the naive rule's).
``--json`` prints the service's answer instead. Exit status 0, or 2 on a usage error, a
connection failure or an error answer (an analysis over the route's work budget is one).
"""

from __future__ import annotations

import argparse
from fractions import Fraction
from typing import Any

from .analysis import Analysis
from .argtypes import integer
from .render import Style

BAR_CELLS = 32
"""The bar of the largest speedup is this many characters wide."""
_EIGHTHS = " ▏▎▍▌▋▊▉"
EXACT_SHOWN = 24
"""Exact values longer than this many characters are left out of the text report (see --json)."""


def widths_arg(text: str) -> list[int]:
    """``--widths``: ``1-8``, ``2,4,8`` or a mix (``1-3,8``), each 1-16, no repeats."""
    widths: list[int] = []
    one = integer(1, 16)
    try:
        for part in text.split(","):
            low, dash, high = part.strip().partition("-")
            values = range(one(low), one(high) + 1) if dash else [one(low)]
            widths.extend(values)
    except argparse.ArgumentTypeError as error:
        raise argparse.ArgumentTypeError(f"{text!r}: {error}") from None
    if not widths or len(set(widths)) != len(widths):
        raise argparse.ArgumentTypeError(f"{text!r}: give distinct widths 1-16, e.g. 1-8 or 1,2,4,8")
    return widths


def cost_arg(text: str) -> str:
    """``--draft-cost``: a non-negative decimal, kept as written (sent as that number)."""
    try:
        value = Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return text


def bar(value: float, largest: float, style: Style) -> str:
    """A horizontal bar of ``value`` on a scale where ``largest`` is :data:`BAR_CELLS` wide."""
    cells = 0.0 if largest <= 0 else value / largest * BAR_CELLS
    if not style.unicode:
        return "#" * round(cells)
    whole, eighths = divmod(round(cells * 8), 8)
    return "█" * whole + (_EIGHTHS[eighths] if eighths else "")


def _exact(value: Fraction) -> str:
    text = str(value)
    return text if len(text) <= EXACT_SHOWN else ""


def _num(value: Any) -> str:
    return "-" if value is None else f"{float(value):.4f}"


def _model_name(model: Any) -> str:
    """A built-in model's name, or ``custom (N tokens)`` for a custom table."""
    return model if isinstance(model, str) else f"custom ({len(model['vocab'])} tokens)"


def report(result: Analysis, style: Style) -> list[str]:
    """The text report of an analysis (see the module docstring)."""
    cfg = result.config
    head = (f"Analysis of target {_model_name(cfg['target'])}, draft {_model_name(cfg['draft'])}, {cfg['mode']}, "
            f"width {cfg['width']}, limit {cfg['limit']}" + (f", eos {cfg['eos']}" if cfg["eos"] else "")
            + f"; draft cost {float(result.draft_cost):g} (exact over all sessions)")
    lines = [style.bold(head), "", style.bold("Acceptance per context") + style.dim("  alpha = sum of min(p, q); "
                                                                                     "residual = correction distribution")]
    lines.append(style.dim(f"  {'context':<10} {'alpha':>8}  {'exact':<12} residual"))
    for c in result.contexts:
        context = style.empty if c.context is None else c.context
        residual = style.none if c.residual is None else " ".join(str(x) for x in c.residual)
        lines.append(f"  {context:<10} {_num(c.alpha):>8}  {_exact(c.alpha):<12} {residual}")

    e = result.expected
    lines += ["", style.bold("Expected per session") + style.dim("  (SPEC section 7 counters, as a trace counts them)")]
    for key, value in e.counters.items():
        lines.append(f"  {key:<16} {_num(value):>10}  {style.dim(_exact(value))}")
    lines += ["", style.bold("Exact against Leviathan et al.")
              + style.dim("  (closed form: constant acceptance rate a, no limit)")]
    lines.append(style.dim(f"  {'':<22} {'exact':>10} {'Leviathan':>10}"))
    lev = result.leviathan
    lines.append(f"  {'acceptance rate a':<22} {_num(e.acceptance_rate):>10} {'(input)' if lev else '-':>10}")
    lines.append(f"  {'tokens per pass':<22} {_num(e.committed_per_pass):>10} {_num(lev and lev.tokens_per_pass):>10}")
    lines.append(f"  {'speedup':<22} {_num(e.speedup):>10} {_num(lev and lev.speedup):>10}")

    lines += ["", style.bold("Sweep over width") + style.dim(f"  (speedup at draft cost {float(result.draft_cost):g})")]
    lines.append(style.dim(f"  {'width':>5} {'per pass':>9} {'speedup':>9}"))
    largest = max(float(s.speedup) for s in result.sweep)
    for s in result.sweep:
        best = s.width == result.best_width
        mark = (" ◀ best" if style.unicode else " <- best") if best else ""
        row = f"  {s.width:>5} {_num(s.committed_per_pass):>9} {_num(s.speedup):>9}  {bar(float(s.speedup), largest, style)}"
        lines.append(style.good(row + mark) if best else row)

    lines += _block_lines(result, style)
    if result.tree_sweep:
        lines += tree_report(result, style)

    out = result.output
    lines += ["", style.bold(f"Output over the first {out.depth} token(s)") + style.dim(
        f"  ({len(out.distribution)} outcomes; the target has {len(out.target)})")]
    verdict = "the target's distribution exactly" if out.tv == 0 else "not the target's distribution"
    if result.tree_verdict == "lossy":
        verdict = "lossy: " + verdict
    lines.append(f"  total variation to the target: {out.tv} ({verdict})")
    if result.naive is not None:
        lines.append(f"  naive rule (correction from p): total variation {result.naive.tv} = {_num(result.naive.tv)}")
    return lines


def _block_lines(result: Analysis, style: Style) -> list[str]:
    """Mode block only: per width, the expected accepted proposals of the first block (no limit)
    under block verification and under token-wise verification (SPEC 10)."""
    comparison = result.block_comparison
    if comparison is None:
        return []
    lines = ["", style.bold("Block against token-wise verification") + style.dim(
        "  (expected accepted proposals of the first block, no limit)")]
    lines.append(style.dim(f"  {'width':>5} {'block':>16} {'token-wise':>16}"))
    for width, row in comparison.items():
        lines.append(f"  {width:>5} {str(row['block']):>16} {str(row['token_wise']):>16}")
    return lines


def tree_report(result: Analysis, style: Style) -> list[str]:
    """Mode tree (SPEC 11): committed tokens of one block from the empty prefix with no limit,
    for D = 1..8 drafts (rows) and each width (columns)."""
    sweep = result.tree_sweep or ()
    widths = sorted({t.width for t in sweep})
    lines = ["", style.bold("Several drafts: committed per pass") + style.dim("  (one block from the empty prefix, "
                                                                              "no limit; rows D, columns width)")]
    lines.append(style.dim("  " + f"{'D':>3}" + "".join(f"{w:>9}" for w in widths)))
    for d in sorted({t.drafts for t in sweep}):
        cells = {t.width: t.committed_per_pass for t in sweep if t.drafts == d}
        lines.append("  " + f"{d:>3}" + "".join(f"{_num(cells[w]):>9}" for w in widths))
    return lines


ANALYZE_TIMEOUT = 60
"""``specdec analyze``'s default ``--timeout`` in seconds: an exact analysis of mode block over
the default widths 1-8 costs about 2 s of one core, 10 s or more on a loaded machine (the
service's budget bounds it, docs/service.md)."""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``analyze`` subcommand to ``subparsers``; its handler is :func:`run`."""
    from .cli import add_config_options, common_options

    parser: argparse.ArgumentParser = subparsers.add_parser(
        "analyze", parents=[common_options()], help="exact expectations, width sweep and output distribution of a config",
        description="The exact analysis of a configuration over all sessions (POST /v1/analysis, docs/analysis.md).")
    add_config_options(parser, seed=False)
    parser.add_argument("--depth", type=int, help="output distribution over the first DEPTH tokens, 1-8 "
                                                  "(default: min(limit, 3))")
    parser.add_argument("--widths", type=widths_arg, help="widths to sweep: 1-8 (default), 1,2,4,8 or 1-3,8")
    parser.add_argument("--draft-cost", type=cost_arg, help="cost of one draft step in target passes (default: 0)")
    parser.add_argument("--json", action="store_true", help="print the service's answer as JSON")
    parser.set_defaults(handler=run, default_timeout=ANALYZE_TIMEOUT)
    return parser


def run(args: argparse.Namespace, client: Any) -> int:
    """``specdec analyze``: print the report (or the JSON answer); 0 on success."""
    from .cli import EXIT_OK, config_settings, emit, emit_json, style_for

    result = client.analyze(config_settings(args), depth=args.depth, widths=args.widths, draft_cost=args.draft_cost)
    if args.json:
        emit_json(result.to_dict())
    else:
        emit(report(result, style_for(args)))
    return EXIT_OK
