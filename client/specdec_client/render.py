"""Readable text for traces, blocks and draws: what ``specdec run`` prints.

Only formatting: every number shown is one the service computed. Layout of
one speculative block (SPEC section 4)::

    Block 1   prefix ∅   position 0
      draft   i  context  token       q        u  pos
              1  ∅        A      0.8000   0.5666    0
      verify  i  context  token       p        q    ratio        u  pos
              1  ∅        A      0.5000   0.8000   0.6250   0.4444    3  ✓ accept  (u < ratio)
              2  A        A      0.2000   0.8000   0.2500   0.4443    4  ✗ reject  (u ≥ ratio)
      correction  after A: A 0.0000  B 0.7500  C 0.2500   u 0.7629 @5 -> C
      ...

Probabilities, ratios and draws have 4 decimals; ``pos`` is a draw's
position in the stream (SPEC section 2). Colour (ANSI) only when asked for:
see :func:`use_color`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import IO, Any, Iterable, Optional, Sequence

from .types import (COUNTER_NAMES, Block, BlockVerificationStep, Config, Counters, DraftStep, Draw, ModelInfo, NodeStep,
                    ResidualTest, Sampling, TargetOnlyTest, Trace, TreeNode, TreeTest, VerificationStep)

WRAP = 100
"""Distribution lines wrap before this many columns."""


def use_color(stream: IO[str], choice: str = "auto") -> bool:
    """Whether to colour output to ``stream``: ``choice`` ``"always"`` or
    ``"never"``, or ``"auto"``: never when the ``NO_COLOR`` environment
    variable is set to a non-empty value (https://no-color.org), always when
    ``FORCE_COLOR`` is (https://force-color.org; ``NO_COLOR`` wins when both
    are), otherwise only when ``stream`` is a terminal and ``TERM`` is not
    ``dumb``."""
    if choice in ("always", "never"):
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def can_encode(stream: IO[str], text: str = "✓✗∅→≥·") -> bool:
    """Whether ``stream``'s encoding can write ``text`` (else ASCII symbols are used)."""
    encoding = getattr(stream, "encoding", None) or "ascii"
    try:
        text.encode(encoding)
        return True
    except (UnicodeEncodeError, LookupError):
        return False


@dataclass(frozen=True)
class Style:
    """How to write: ``color`` (ANSI escapes) and ``unicode`` symbols."""

    color: bool = False
    unicode: bool = True

    def paint(self, text: str, code: str) -> str:
        """``text`` in the ANSI SGR ``code`` when colouring, else unchanged."""
        return f"\033[{code}m{text}\033[0m" if self.color else text

    def bold(self, text: str) -> str:
        """Bold: headers, committed tokens, chosen tokens."""
        return self.paint(text, "1")

    def dim(self, text: str) -> str:
        """Dim: table headers, discarded tokens."""
        return self.paint(text, "2")

    def good(self, text: str) -> str:
        """Green: an accepted proposal, a matching replay."""
        return self.paint(text, "32")

    def bad(self, text: str) -> str:
        """Red: a rejected proposal, a diverging replay."""
        return self.paint(text, "31")

    @property
    def empty(self) -> str:
        """The empty token list (and the empty prefix's context)."""
        return "∅" if self.unicode else "-"

    @property
    def arrow(self) -> str:
        """Between a draw and the token it picks."""
        return "→" if self.unicode else "->"

    @property
    def none(self) -> str:
        """A value that does not exist (greedy: no draw, no ratio)."""
        return "—" if self.unicode else "-"

    @property
    def dot(self) -> str:
        """A separator between settings."""
        return "·" if self.unicode else "|"

    def mark(self, accepted: bool) -> str:
        """The decision on a proposal: ``✓ accept`` / ``✗ reject`` (ASCII: ``ACCEPT``/``REJECT``)."""
        if self.unicode:
            return self.good("✓ accept") if accepted else self.bad("✗ reject")
        return self.good("ACCEPT") if accepted else self.bad("REJECT")

    def vs(self, accepted: bool) -> str:
        """The comparison that decided: ``u < ratio`` accepts, ``u ≥ ratio`` rejects (SPEC 4.2)."""
        return "<" if accepted else ("≥" if self.unicode else ">=")


def num(x: Optional[float]) -> str:
    """A probability, ratio or draw with 4 decimals; ``None`` as a dash."""
    return "—" if x is None else f"{x:.4f}"


def vocab_of(config: Config, models: Iterable[ModelInfo] = ()) -> Optional[tuple[str, ...]]:
    """The vocabulary of a config: its custom target's, else the built-in
    target's from ``models`` (``GET /v1/models``); ``None`` if unknown."""
    vocab = config.vocab()
    if vocab is not None:
        return vocab
    for model in models:
        if model.name == config.target:
            return tuple(model.vocab)
    return None


class Renderer:
    """Formats blocks and traces as lines of text.

    ``vocab``: the labels of the distributions' entries (without it they are
    numbered 0, 1, ...); ``style``: colour and symbols.
    """

    def __init__(self, vocab: Optional[Sequence[str]] = None, style: Style = Style()):
        self.vocab = tuple(vocab) if vocab is not None else None
        self.style = style
        labels = list(self.vocab or ())
        self.w = max([len("token"), len("context")] + [len(v) for v in labels])

    # ------------------------------------------------------------ pieces

    def ctx(self, context: Optional[str]) -> str:
        """A context token, ``∅`` at the empty prefix."""
        return self.style.empty if context is None else context

    def tokens(self, tokens: Sequence[str]) -> str:
        """Tokens separated by spaces, ``∅`` when there are none."""
        return " ".join(tokens) if tokens else self.style.empty

    def distribution(self, probs: Sequence[float], lead: str, tail: str, indent: int) -> list[str]:
        """``A 0.0000  B 0.7500  C 0.2500`` after ``lead``, then ``tail``;
        wrapped before :data:`WRAP` columns with continuation lines indented."""
        names = self.vocab if self.vocab is not None and len(self.vocab) == len(probs) else \
            tuple(str(i) for i in range(len(probs)))
        items = [f"{n} {num(p)}" for n, p in zip(names, probs)] + ([tail] if tail else [])
        lines, line = [], lead
        for item in items:
            sep = "" if line == lead else "  "
            if line != lead and len(line) + len(sep) + len(item) > WRAP:
                lines.append(line)
                line, sep = " " * indent, ""
            line += sep + item
        lines.append(line)
        return lines

    def draw(self, d: Optional[Draw]) -> str:
        """``u 0.7629 (pos 5)``, or that no draw was used (greedy)."""
        return f"u {num(d.u)} (pos {d.position})" if d is not None else "(no draw: argmax)"

    def counters(self, c: Counters, indent: int = 14) -> list[str]:
        """The eight counters as a grid of two rows of four, columns aligned."""
        cells = [f"{name} {getattr(c, name)}" for name in COUNTER_NAMES]
        rows = [cells[:4], cells[4:]]
        widths = [max(len(row[i]) for row in rows) for i in range(4)]
        lines = ["   ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
        return [lines[0]] + [" " * indent + line for line in lines[1:]]

    # ------------------------------------------------------------ blocks

    def header(self, config: Config) -> str:
        """The session's settings on one line."""
        def model(m: Any) -> str:
            return m if isinstance(m, str) else "custom"
        s = self.style
        parts = [f"target {model(config.target)}", f"draft {model(config.draft)}", f"mode {config.mode}",
                 f"width {config.width}", f"seed {config.seed}", f"limit {config.limit}"]
        if config.eos is not None:
            parts.append(f"eos {config.eos}")
        if config.drafts is not None:
            parts.append(f"drafts {config.drafts}")
        if config.sampling is not None:
            parts.append(self.sampling(config.sampling))
        if config.tree is not None:
            parts.append("tree " + ", ".join(f"{k} {v}" for k, v in config.tree.to_dict().items()))
        return s.bold("specdec run") + "  " + f" {s.dot} ".join(parts)

    @staticmethod
    def sampling(sampling: Sampling) -> str:
        """The sampling parameters (SPEC section 9) in the header, e.g. ``sampling T 0.5, top-k
        2, top-p 0.8, draft rows raw``; ``sampling none`` when none is set."""
        names = (("temperature", "T"), ("top_k", "top-k"), ("top_p", "top-p"), ("min_p", "min-p"),
                 ("draft", "draft rows"))
        values = sampling.to_dict()
        parts = [f"{label} {values[key]}" for key, label in names if values.get(key) is not None]
        return "sampling " + (", ".join(parts) if parts else "none")

    def block(self, number: int, block: Block, output_so_far: Sequence[str]) -> list[str]:
        """The lines of block ``number`` (1-based); ``output_so_far``
        includes this block's committed tokens."""
        s, w = self.style, self.w
        pad = " " * 14
        lines = [s.bold(f"Block {number}") + f"   prefix {self.tokens(block.prefix)}   position {block.position}"]
        nodes = block.proposal.nodes is not None  # a draft tree of SPEC 12: its nodes, then its tests
        lines += self.tree_nodes(block) + self.node_tests(block) if nodes else self.draft_steps(block)
        if nodes:
            pass
        elif block.verification and block.proposal.chains is not None:
            lines += self.tree_tests(block)
        elif block.verification:
            lines.append(s.dim(f"  {'verify':<10}{'i':>2}  {'context':<{w}}  {'token':<{w}}  {'p':>6}  {'q':>6}  "
                               f"{'ratio':>7}  {'u':>7}  {'pos':>4}"))
            for v in block.verification:
                assert isinstance(v, VerificationStep)
                u, pos = (num(v.draw.u), str(v.draw.position)) if v.draw else (s.none, s.none)
                ratio = num(v.ratio) if v.ratio is not None else s.none
                why = f"(u {s.vs(v.accepted)} ratio)" if v.draw is not None else \
                    ("(the target's argmax)" if v.accepted else "(not the target's argmax)")
                mark = s.mark(v.accepted)
                if isinstance(v, BlockVerificationStep):  # mode block (SPEC 10): eta against h_i, weight w_i
                    why = f"(eta {s.vs(v.below_threshold)} h {v.threshold_exact}, w {v.weight_exact})"
                    if v.accepted and not v.below_threshold:  # i < tau: its own eta fails, a later one passes
                        mark, why = s.good("kept:"), f"a later eta passes {why}"
                lines.append(f"{pad[:12]}{v.index:>2}  {self.ctx(v.context):<{w}}  {v.token:<{w}}  "
                             f"{num(v.p_token):>6}  {num(v.q_token):>6}  {ratio:>7}  {u:>7}  {pos:>4}  "
                             f"{mark}  {s.dim(why)}")
        if block.tau is not None:
            lines.append(f"  {'tau':<12}{block.tau}: the last i with eta_i < h_i (SPEC 10), d_1..d_tau committed")
        if block.correction is not None:
            c = block.correction
            lead = f"  {'correction':<12}after {self.ctx(c.context)}: "
            tail = f"  {self.draw(c.draw)} {s.arrow} {s.bold(c.token)}"
            lines += self.distribution(c.distribution, lead, tail.strip(), len(lead))
        if block.mode != "autoregressive":
            lines.append(f"  {'discarded':<12}{s.dim(self.tokens(block.discarded)) if block.discarded else s.empty}")
            if block.bonus is not None:
                b = block.bonus
                lead = f"  {'bonus':<12}p after {self.ctx(b.context)}: "
                lines += self.distribution(b.p, lead, f"{self.draw(b.draw)} {s.arrow} {s.bold(b.token)}", len(lead))
            else:
                lines.append(f"  {'bonus':<12}none ({block.no_bonus or 'none'})")
        if block.sample is not None:
            a = block.sample
            lead = f"  {'sample':<12}p after {self.ctx(a.context)}: "
            lines += self.distribution(a.p, lead, f"{self.draw(a.draw)} {s.arrow} {s.bold(a.token)}", len(lead))
        lines.append(f"  {'committed':<12}{s.bold(self.tokens(block.committed))}")
        lines.append(f"  {'output':<12}{self.tokens(output_so_far)}")
        counters = self.counters(block.counters)
        lines.append(f"  {'counters':<12}{counters[0]}")
        lines += counters[1:]
        lines.append(f"  {'position':<12}{block.position} {s.arrow} {block.next_position}")
        return lines

    def draft_steps(self, block: Block) -> list[str]:
        """The draft steps of a chain (SPEC 4.1) or of D chains (SPEC 11.1): index, context,
        token, q(token), draw."""
        s, w = self.style, self.w
        steps = [st for st in block.proposal.steps if isinstance(st, DraftStep)]
        if not steps:
            return []
        lines = [s.dim(f"  {'draft':<10}{'i':>2}  {'context':<{w}}  {'token':<{w}}  {'q':>6}  {'u':>7}  {'pos':>4}")]
        for st in steps:
            q = st.q[self.vocab.index(st.token)] if self.vocab and st.token in self.vocab else None
            u, pos = (num(st.draw.u), str(st.draw.position)) if st.draw else (s.none, s.none)
            own = ("" if st.chain is None else f"  chain {st.chain}") + ("" if st.drafted else "  (supplied by the caller)")
            lines.append(f"{'':12}{st.index:>2}  {self.ctx(st.context):<{w}}  {st.token:<{w}}  "
                         f"{num(q) if q is not None else s.none:>6}  {u:>7}  {pos:>4}{own}")
        return lines

    def tree_nodes(self, block: Block) -> list[str]:
        """A draft tree of SPEC 12, one node a line, indented by depth under its parent: its number,
        token, proposal probability (law(y): q for chains, s_j for distinct siblings) or beam
        score, and the draw that drew it."""
        s = self.style
        nodes = block.proposal.nodes or ()
        drawn = {st.node: st.draw for st in block.proposal.steps if isinstance(st, NodeStep)}
        lines = [s.dim(f"  {'tree':<12}node  (parent) token   law(y) or score   u @ pos")]
        children: dict[int, list[TreeNode]] = {}
        for node in nodes:
            children.setdefault(node.parent, []).append(node)

        def walk(parent: int) -> None:
            for node in children.get(parent, []):
                law = node.law[self.vocab.index(node.token)] if node.law and self.vocab and node.token in self.vocab \
                    else None
                weight = f"law {num(law)}" if law is not None else f"score {num(node.score)}" if node.score is not None \
                    else ""
                d = drawn.get(node.node)
                where = f"  {self.draw(d)}" if d is not None else ""
                lines.append(f"{'':14}{'  ' * (node.depth - 1)}#{node.node} ({node.parent}) {s.bold(node.token)}  "
                             f"{weight}{where}")
                walk(node.node)
        walk(0)
        return lines

    def node_tests(self, block: Block) -> list[str]:
        """The tests of a SPEC 12 tree verifier, in order, with the compared numbers: residual
        (u * s(y) against r(y), and the residual after a rejection) or target-only (u *
        threshold_acc against acc_j, p(y_j) against threshold_single; one draw a node)."""
        s, w = self.style, self.w
        lines = [s.dim(f"  {'verify':<8}{'depth':>5} {'node':>4}  {'context':<{w}}  {'token':<{w}}  compared")]
        for v in block.verification:
            if not isinstance(v, (ResidualTest, TargetOnlyTest)):
                continue
            head = f"{'':10}{v.depth:>5} {v.node:>4}  {self.ctx(v.context):<{w}}  {v.token:<{w}}  "
            if isinstance(v, ResidualTest):
                text = f"u*s(y) {num(v.u_s)} {s.vs(v.accepted)} r(y) {num(v.r_token)}"
                if v.residual is not None:
                    text += f"; r becomes {' '.join(num(x) for x in v.residual)}"
            else:
                text = f"u*t_acc {num(v.u_acc)} {s.vs(v.by == 'acc')} acc {v.acc_exact}"
                if v.threshold_single < 1:
                    text += f", p(y) {num(v.p_token)} {'>=' if v.by == 'single' else '<'} t_single {num(v.threshold_single)}"
            lines.append(f"{head}{text}  {num(v.draw.u)} @ {v.draw.position}  {s.mark(v.accepted)}")
        return lines

    def tree_tests(self, block: Block) -> list[str]:
        """Mode tree (SPEC 11.2): each candidate tested, depth by depth, with its chain, the
        exact r(y) it was tested against beside q(y), the ratio, its draw and the chains alive
        after it."""
        s, w = self.style, self.w
        lines = [s.dim(f"  {'verify':<8}{'depth':>5} {'chain':>5}  {'context':<{w}}  {'token':<{w}}  {'r(y)':>7}  "
                       f"{'q':>6}  {'ratio':>7}  {'u':>7}  {'pos':>4}")]
        for v in block.verification:
            assert isinstance(v, TreeTest)
            r_exact = v.r_exact[self.vocab.index(v.token)] if self.vocab and v.token in self.vocab else num(v.r_token)
            alive = ", ".join(map(str, v.alive)) or "none"
            lines.append(f"{'':10}{v.depth:>5} {v.chain:>5}  {self.ctx(v.context):<{w}}  {v.token:<{w}}  "
                         f"{r_exact:>7}  {num(v.q_token):>6}  {num(v.ratio):>7}  {num(v.draw.u):>7}  "
                         f"{v.draw.position:>4}  {s.mark(v.accepted)}  {s.dim(f'(u {s.vs(v.accepted)} r/q; alive {alive})')}")
        return lines

    def trace(self, trace: Trace) -> list[str]:
        """The whole session: header, each block, then the totals."""
        lines = [self.header(trace.config), ""]
        output: list[str] = []
        for i, block in enumerate(trace.blocks, 1):
            output += block.committed
            lines += self.block(i, block, output)
            lines.append("")
        lines += self.totals(trace)
        return lines

    def totals(self, trace: Trace) -> list[str]:
        """The session's end: output, total counters, rates."""
        s = self.style
        c = trace.counters
        why = f"done ({trace.done})" if trace.done else "not done"
        n = len(trace.blocks)
        lines = [s.bold("Session") + f"   {why} after {n} block{'s' if n != 1 else ''}, position {trace.position}",
                 f"  {'output':<12}{s.bold(self.tokens(trace.output))}   ({len(trace.output)} tokens)",
                 f"  {'counters':<12}{self.counters(c)[0]}", *self.counters(c)[1:]]
        if c.target_passes:
            rate = f"  {'per pass':<12}{c.committed / c.target_passes:.4f} tokens per target pass"
            if c.draft_steps:
                rate += f" {s.dot} acceptance rate {c.accepted}/{c.draft_steps} = {c.accepted / c.draft_steps:.4f}"
            lines.append(rate)
        return lines

    # ------------------------------------------------------------ draws and models

    def draws(self, draws: Sequence[Draw]) -> list[str]:
        """A table of draws: position, u (full precision and 4 decimals) and hex."""
        width = max([len("position")] + [len(str(d.position)) for d in draws])
        lines = [self.style.dim(f"{'position':>{width}}  {'u':<20}  hex")]
        lines += [f"{d.position:>{width}}  {d.u!r:<20}  {d.hex}" for d in draws]
        return lines

    def models(self, models: Sequence[ModelInfo]) -> list[str]:
        """Each built-in model's rows (SPEC section 1 table)."""
        lines: list[str] = []
        for m in models:
            w = max(len(v) for v in m.vocab)
            lines.append(self.style.bold(m.name) + f"  ({m.role})   vocab {' '.join(m.vocab)}")
            rows = [("start", m.start)] + [(f"after {k}", v) for k, v in m.next.items()]
            label_w = max(len(r[0]) for r in rows)
            for name, row in rows:
                cells = "  ".join(f"{v:>{w}} {num(p)}" for v, p in zip(m.vocab, row))
                lines.append(f"  {name:<{label_w}}  {cells}")
            lines.append("")
        return lines[:-1] if lines else lines
