"""``specdec analyze``: the exact analysis of a configuration as a readable report.

::

    specdec analyze --draft biased [--target toy] [--mode speculative] [--width 3] [--limit 8]
                    [--eos TOKEN] [--depth 3] [--widths 1-8] [--draft-cost 0.05] [--json]

Calls ``POST /v1/analysis`` (``Client.analyze``) and prints: alpha and the residual per
context; the expected work counters of one session; the exact committed tokens per pass and
speedup against Leviathan et al.'s closed form; the sweep over widths as a table with a bar
per width (Unicode block characters, ``#`` when the terminal cannot show them), the best
width marked; the output's total variation to the target (and the naive rule's). In mode
tree with a ``tree`` setting (SPEC 12): the shape, branching, verifier and thresholds under the
title, each node's acceptance (p(children) under ``"target_only"``, instead of SPEC 4's alpha
and residual; beside them under ``"residual"``), tokens per pass without Leviathan's column,
"lossy" when the thresholds make it so. When the service cut its defaults to fit its budget
(``fitted``), a line names the widths (and drafts) analysed and how to ask for more.
``--json`` prints the service's answer instead. Exit status 0, or 2 on a usage error, a
connection failure or an error answer (an analysis over the route's work budget is one).
"""

from __future__ import annotations

import argparse
from fractions import Fraction
from typing import Any, Sequence

from .analysis import Analysis, TreeAnalysis
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
    drafts = f", drafts {cfg.get('drafts', 1)}" if cfg["mode"] == "tree" else ""
    head = (f"Analysis of target {_model_name(cfg['target'])}, draft {_model_name(cfg['draft'])}, {cfg['mode']}, "
            f"width {cfg['width']}{drafts}, limit {cfg['limit']}" + (f", eos {cfg['eos']}" if cfg["eos"] else "")
            + f"; draft cost {float(result.draft_cost):g} (exact over all sessions)")
    lines = [style.bold(head)]
    if result.tree is not None:
        lines.append(tree_line(result.tree))
    lines += fitted_lines(result, style)
    lines += [""] + acceptance_lines(result, style)

    e = result.expected
    lines += ["", style.bold("Expected per session") + style.dim("  (SPEC section 7 counters, as a trace counts them)")]
    for key, value in e.counters.items():
        lines.append(f"  {key:<16} {_num(value):>10}  {style.dim(_exact(value))}")
    lines += [""] + pass_lines(result, style)

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


def tree_line(tree: TreeAnalysis) -> str:
    """The tree analysed (SPEC 12): ``Tree: shape beam, verify target_only, threshold_acc 1/2
    (lossy)``; the branching for shape distinct, the thresholds for verify target_only."""
    parts = [f"shape {tree.shape}"]
    if tree.branching is not None:
        parts.append("branching " + ",".join(str(b) for b in tree.branching))
    parts.append(f"verify {tree.verify}")
    if tree.verify == "target_only":
        parts += [f"threshold_single {tree.threshold_single}", f"threshold_acc {tree.threshold_acc}"]
    return "Tree: " + ", ".join(parts) + (" (lossy)" if tree.lossy else " (lossless)")


def _span(values: Sequence[int]) -> str:
    """``1-7`` for a run of consecutive integers, else ``1,2,4``."""
    run = list(values) == list(range(values[0], values[0] + len(values)))
    return f"{values[0]}-{values[-1]}" if run and len(values) > 1 else ",".join(str(v) for v in values)


def fitted_lines(result: Analysis, style: Style) -> list[str]:
    """When the service cut a default to fit its budget: what was analysed, why, and how to ask
    for more (empty otherwise)."""
    fitted = result.fitted
    if fitted is None:
        return []
    analysed = f"widths {_span(fitted.widths)}" + (f", D {_span(fitted.drafts)} in the sweep over drafts"
                                                   if fitted.drafts is not None else "")
    asked = f"widths {_span(fitted.default_widths)}" + (", D 1-8" if fitted.drafts is not None else "")
    more = [w for w in fitted.default_widths if w not in fitted.widths]
    hint = (f"ask for the others with --widths (e.g. --widths {_span(more)}), each request within the budget"
            if more else "a smaller --limit, --width, --depth or --drafts sweeps more drafts")
    return [style.dim(f"Analysed {analysed}: {asked} would cost {fitted.default_cost:,} analysis units, over the "
                      f"service's budget of {fitted.budget:,}; {hint}.")]


def acceptance_lines(result: Analysis, style: Style) -> list[str]:
    """How a drafted token is accepted, per context: SPEC 4's alpha and residual, with the
    residual verifier's node acceptance beside in mode tree; under ``"target_only"``, only the
    node acceptance p(children) (SPEC 12.4: the draft's probabilities are never read)."""
    tree = result.tree
    node = {} if tree is None else {n.context: n.accept for n in tree.nodes}
    if tree is not None and tree.verify == "target_only":
        why = ("p(children), SPEC 12.4" if not tree.lossy else
               "p(children), or more below the thresholds: lossy")
        lines = [style.bold("Acceptance per node") + style.dim(f"  a node accepts one of its children with {why}; "
                                                               "children as drafted at a block's first depth")]
        lines.append(style.dim(f"  {'context':<10} {'accept':>8}  exact"))
        for n in tree.nodes:
            context = style.empty if n.context is None else n.context
            lines.append(f"  {context:<10} {_num(n.accept):>8}  {_exact(n.accept)}")
        return lines
    note = "; node = a node accepts one of its children (SPEC 12.3)" if node else ""
    lines = [style.bold("Acceptance per context") + style.dim("  alpha = sum of min(p, q); "
                                                               "residual = correction distribution" + note)]
    lines.append(style.dim(f"  {'context':<10} {'alpha':>8}  {'exact':<12} " + (f"{'node':>8}  " if node else "")
                           + "residual"))
    for c in result.contexts:
        context = style.empty if c.context is None else c.context
        residual = style.none if c.residual is None else " ".join(str(x) for x in c.residual)
        accepts = f"{_num(node[c.context]):>8}  " if node else ""
        lines.append(f"  {context:<10} {_num(c.alpha):>8}  {_exact(c.alpha):<12} {accepts}{residual}")
    return lines


def pass_lines(result: Analysis, style: Style) -> list[str]:
    """Committed tokens per target pass, acceptance rate and speedup, beside Leviathan et al.'s
    closed form when the service gives it (not in modes autoregressive and tree)."""
    e, lev = result.expected, result.leviathan
    if lev is None:
        lines = [style.bold("Per target pass") + style.dim("  (exact, over all sessions)")]
        lines.append(f"  {'tokens per pass':<22} {_num(e.committed_per_pass):>10}  {style.dim(_exact(e.committed_per_pass))}")
        rate = e.acceptance_rate
        lines.append(f"  {'acceptance rate':<22} {_num(rate):>10}  {style.dim('' if rate is None else _exact(rate))}")
        lines.append(f"  {'speedup':<22} {_num(e.speedup):>10}  {style.dim(_exact(e.speedup))}")
        return lines
    lines = [style.bold("Exact against Leviathan et al.") + style.dim("  (closed form: constant acceptance rate a, no limit)")]
    lines.append(style.dim(f"  {'':<22} {'exact':>10} {'Leviathan':>10}"))
    lines.append(f"  {'acceptance rate a':<22} {_num(e.acceptance_rate):>10} {'(input)':>10}")
    lines.append(f"  {'tokens per pass':<22} {_num(e.committed_per_pass):>10} {_num(lev.tokens_per_pass):>10}")
    lines.append(f"  {'speedup':<22} {_num(e.speedup):>10} {_num(lev.speedup):>10}")
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
    """Mode tree (SPEC 11-12): committed tokens of one block from the empty prefix with no limit,
    for D = 1..8 drafts (rows; fewer when the service fitted its budget) and each width
    (columns), with the tree's shape and verifier when the config sets them."""
    sweep = result.tree_sweep or ()
    widths = sorted({t.width for t in sweep})
    tree = result.tree
    walked = "" if tree is None else f" ({tree.shape}, {tree.verify})"
    lines = ["", style.bold(f"Several drafts{walked}: committed per pass") + style.dim(
        "  (one block from the empty prefix, no limit; rows D, columns width)")]
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
