"""The named checks of a trace grade (partial credit), evaluated block by block.

A single mistake makes every later block of a trace differ from the reference (one missing
bonus shifts every later prefix and position). So the checks do not compare a submission with
the reference *trace*; each block is judged from the submission's **own** state before it:

- the rule checks compare the block with the engine from the same prefix and position:
  ``proposal`` with ``engine.step``'s proposal; ``acceptance`` with ``engine.verify`` of the
  *submitted* proposal (so a wrong proposal is not counted again as a wrong verification);
  ``correction``, ``discard`` and ``bonus`` with what SPEC 4.3-4.4 make of the block's *own*
  proposal and decisions (:func:`_tail_given_decisions`), so a wrong acceptance test is not
  counted again as a wrong correction; in mode tree the same after the block's own chains and
  tests (:mod:`.tree_checks`, SPEC 11) or its own tree and tests (:mod:`.tree_steps`, SPEC 12:
  ``acceptance`` walks the submitted tree, so a wrong tree is not counted again as wrong tests);
- the bookkeeping checks are consistency checks of the submission's own records: ``draws``
  (each recorded draw is SplitMix64 at its position), ``position`` (draws used consecutively
  from the block's position, blocks chained), ``output`` (a block commits what the engine reads
  off its record: the accepted prefix plus its correction or bonus, blocks chained, and the
  session ends where SPEC section 6 says), ``counters`` (each block's counters are the
  engine's count of its own records; the totals sum them), and ``format`` (format name,
  settings echoed, block modes). The readings are the engine's (the mode's verifier's
  ``commits`` and ``tally``, ``engine.state.ended``): the checks run the same code as the
  engine, not a second implementation.

So a submission whose only mistake is the bonus fails the ``bonus`` check alone (score 0.9).
A check holds when it holds in every block; each failing check lists its blocks and the first
failing field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional

from ..engine import COUNTER_NAMES, Config, Counters, InvalidInput, SessionDone, State, draw, pointer, step, verify
from ..engine.bounds import MAX_POSITION, int_in
from ..engine.draws import Stream
from ..engine.proposals import Drafted
from ..engine.decoders import MODE_RULES
from ..engine.state import ended
from ..engine.verifiers.tokenwise import Decisions, TokenWise
from ..engine.trace import TRACE_FORMAT
from .compare import first_difference
from .tree_checks import tree_tail
from .tree_steps import judge, judged_here
from .check_names import CHECKS, RULES, explain


@dataclass
class CheckResult:
    """One named check: ``blocks`` that fail it (trace-level failures add ``None`` as
    ``trace``), and the first failing field as a pointer with a short ``detail``."""

    name: str
    blocks: list = field(default_factory=list)
    trace: bool = False
    first: Optional[tuple[str, str]] = None

    @property
    def passed(self) -> bool:
        return not self.blocks and not self.trace

    def fail(self, block: Optional[int], path: tuple, detail: str) -> None:
        if block is None:
            self.trace = True
        elif not self.blocks or self.blocks[-1] != block:
            self.blocks.append(block)
        if self.first is None:
            self.first = (pointer(path), detail)

    def to_json(self, mode: str = "speculative") -> dict:
        """``{"name", "passed", "blocks", "trace", "first_failure", "rule"}``; a failure is
        ``{"pointer", "detail", "explanation"}``, the explanation being the check's rule in plain
        words for a trace of ``mode`` (:func:`.check_names.explain`)."""
        return {
            "name": self.name,
            "passed": self.passed,
            "blocks": self.blocks,
            "trace": self.trace,
            "first_failure": None if self.first is None else {"pointer": self.first[0], "detail": self.first[1],
                                                              "explanation": explain(self.name, mode)},
            "rule": RULES[self.name],
        }


def all_passed() -> list[CheckResult]:
    """Every check, holding (the report of a trace equal to the reference)."""
    return [CheckResult(name) for name in CHECKS]


def _describe(value: Any) -> str:
    text = json.dumps(value, separators=(",", ":"), default=str)
    return text if len(text) <= 80 else text[:77] + "..."


_DRAW_VALUES = frozenset({"u", "hex"})


def _compare(result: CheckResult, block: int, base: tuple, expected: Any, got: Any) -> None:
    diff = first_difference(expected, got, skip=_DRAW_VALUES, typed=True)
    if diff is not None:
        result.fail(block, base + diff.path, f"{diff.kind}: expected {_describe(diff.expected)}, got {_describe(diff.got)}")


def _draws_of(block: dict):
    """Every recorded draw of a block in the order SPEC section 4 uses them, with its path. The
    target-only tests of one node share its one draw (SPEC 12.4): a record of the same parent
    and draw as the record before it is that draw again, not another."""
    for i, s in enumerate(block["proposal"]["steps"]):
        yield ("proposal", "steps", i, "draw"), s["draw"]
    before = None
    for i, v in enumerate(block["verification"]):
        if not (_shares_draw(v, before)):
            yield ("verification", i, "draw"), v["draw"]
        before = v
    for key in ("correction", "bonus", "sample"):
        record = block[key]
        if record is not None:
            yield (key, "draw"), record["draw"]


def _shares_draw(record: Any, before: Any) -> bool:
    """Whether a verification ``record`` is a target-only test (SPEC 12.4, it has ``u_acc``) of
    the same node and draw as the record ``before`` it."""
    return (isinstance(record, dict) and isinstance(before, dict) and "u_acc" in record and "parent" in record
            and record.get("parent") == before.get("parent") and record.get("draw") == before.get("draw"))


def _is_position(x: Any) -> bool:
    return int_in(x, 0, MAX_POSITION)


class _Walk:
    """What the checks carry from block to block: the output committed so far (labels), where
    the previous block ended, whether the session has ended, the counters summed, the last
    block's ``done``."""

    def __init__(self) -> None:
        self.prefix: list = []
        self.next_position: Any = 0
        self.ended = False
        self.sums = dict.fromkeys(COUNTER_NAMES, 0)
        self.done: Any = None


def evaluate(trace: dict, config: Config) -> list[CheckResult]:
    """Evaluate every check of :data:`~.check_names.CHECKS` on a schema-valid ``trace`` whose
    ``config`` parsed as ``config``. Returns the results in :data:`CHECKS` order.

    What a block commits, counts and whether the session ends there are not worked out here:
    they are the engine's own readings of the block's record (the mode's verifier's
    ``commits`` and ``tally``, and :func:`~specdec_service.engine.state.ended`)."""
    results = {name: CheckResult(name) for name in CHECKS}
    fmt = results["format"]
    if trace["format"] != TRACE_FORMAT:
        fmt.fail(None, ("format",), f"expected {TRACE_FORMAT!r}")
    diff = first_difference(config.to_json(), trace["config"], ("config",), tolerant=True, typed=True)
    if diff is not None:
        fmt.fail(None, diff.path, f"{diff.kind}: expected {_describe(diff.expected)}, got {_describe(diff.got)}")
    walk = _Walk()
    for b, block in enumerate(trace["blocks"]):
        _block_checks(results, walk, config, b, block)
    _trace_checks(results, walk, trace)
    return [results[name] for name in CHECKS]


def _block_checks(results: dict, walk: _Walk, config: Config, b: int, block: dict) -> None:
    """Every check of one block, in the order its failures are reported."""
    base = ("blocks", b)
    if block["mode"] != config.mode:
        results["format"].fail(b, base + ("mode",), f"expected {config.mode!r}")
    if block["prefix"] != walk.prefix:
        results["output"].fail(b, base + ("prefix",), "differs from the output committed by the previous blocks")
    if block["position"] != walk.next_position:
        results["position"].fail(b, base + ("position",), f"expected {walk.next_position}, where the previous block ended")
    if walk.ended:
        results["output"].fail(b, base, "a block after the session ended")

    # Rule checks against the engine from this block's own state.
    index = config.index
    found = [index.get(label) for label in block["prefix"]]
    tokens = [t for t in found if t is not None]
    if len(tokens) < len(found) or not _is_position(block["position"]):
        for name in ("proposal", "acceptance", "correction", "discard", "bonus"):
            results[name].fail(b, base + ("prefix",), "cannot be checked: the block's prefix or position is not a state")
    else:
        state = State(config, tuple(tokens), block["position"], Counters())
        _rule_checks(results, b, base, state, block)

    used = _draw_checks(results, config, b, base, block)
    walk.next_position = block["next_position"]
    verifier = MODE_RULES[config.mode].verifier
    _counter_checks(results["counters"], walk, b, base, block, verifier.tally(block, used).to_json())
    _output_checks(results["output"], walk, config, b, base, block, verifier.commits(block))


def _draw_checks(results: dict, config: Config, b: int, base: tuple, block: dict) -> int:
    """The draws check (each recorded draw is SplitMix64 at its position) and the position
    check of the block's draws (used one after another from the block's position). Returns how
    many draws the block records."""
    draws_, position = results["draws"], results["position"]
    positions = []
    for path, d in _draws_of(block):
        if d is None:
            continue
        n = d["position"]
        positions.append((path, n))
        if not _is_position(n):
            draws_.fail(b, base + path + ("position",), "not a position")
            continue
        ref = draw(config.seed, n)
        if _number(d["u"]) != ref.u:
            draws_.fail(b, base + path + ("u",), f"draw {n} of seed {config.seed} is u = {ref.u!r}")
        if d["hex"] != ref.hex:
            draws_.fail(b, base + path + ("hex",), f"draw {n} of seed {config.seed} is {ref.hex}")
    start = block["position"]
    for offset, (path, n) in enumerate(positions):
        if isinstance(start, int) and n != start + offset:
            position.fail(b, base + path + ("position",), f"expected draw {start + offset}: draws are used one after another")
            break
    if isinstance(start, int) and block["next_position"] != start + len(positions):
        position.fail(b, base + ("next_position",), f"expected {start + len(positions)}: the position plus the draws used")
    return len(positions)


def _counter_checks(counters: CheckResult, walk: _Walk, b: int, base: tuple, block: dict, derived: dict) -> None:
    """Each counter of the block against its own records (``derived``), summed for the totals."""
    for name, value in derived.items():
        got = block["counters"].get(name)
        if got != value:
            counters.fail(b, base + ("counters", name), f"the block's own records give {value}, not {got}")
        walk.sums[name] += got if isinstance(got, int) else 0


def _output_checks(output: CheckResult, walk: _Walk, config: Config, b: int, base: tuple, block: dict,
                   commit: list) -> None:
    """What the block commits (``commit``: its records read by the engine) and where the
    session ends (SPEC section 6)."""
    if block["committed"] != commit:
        output.fail(b, base + ("committed",), f"expected {_describe(commit)}: the accepted prefix, then the correction or bonus")
    new_output = list(block["prefix"]) + list(block["committed"])
    if len(new_output) > config.limit:
        output.fail(b, base + ("committed",), f"the output would hold {len(new_output)} tokens, more than the limit {config.limit}")
    done = ended(config, len(new_output), config.index.get(new_output[-1]) if new_output else None)
    if block["done"] != done:
        output.fail(b, base + ("done",), f"expected {done!r} after {len(new_output)} tokens")
    walk.ended = walk.ended or done is not None
    walk.prefix = new_output
    walk.done = block["done"]


def _trace_checks(results: dict, walk: _Walk, trace: dict) -> None:
    """The trace's own fields against its blocks."""
    output = results["output"]
    if not walk.ended:
        output.fail(None, ("blocks", len(trace["blocks"])), "the session did not reach its end (limit or EOS)")
    if trace["output"] != walk.prefix:
        output.fail(None, ("output",), "differs from the blocks' committed tokens")
    if trace["done"] != walk.done:
        output.fail(None, ("done",), f"expected {walk.done!r}, the last block's")
    if trace["position"] != walk.next_position:
        results["position"].fail(None, ("position",), f"expected {walk.next_position}, the last block's next_position")
    for name, total in walk.sums.items():
        if trace["counters"].get(name) != total:
            results["counters"].fail(None, ("counters", name), f"expected {total}, the sum over the blocks")


def _number(x: Any):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def _rule_checks(results: dict, b: int, base: tuple, state: State, block: dict) -> None:
    if state.done is not None:
        return  # a block after the end: reported by the output check
    try:
        reference = step(state).block
    except (InvalidInput, SessionDone) as error:
        for name in ("proposal", "acceptance", "correction", "discard", "bonus"):
            results[name].fail(b, base, f"cannot be checked: {error}")
        return
    _compare(results["proposal"], b, base + ("proposal",), reference["proposal"], block["proposal"])
    tree = state.config.mode == "tree"
    proposal, key = block["proposal"], "chains" if tree else "tokens"
    judged = judge(state, block) if tree and judged_here(state.config) else None
    if judged is not None:  # SPEC 12: the block's own tree walked, its own tests concluded
        reference = {**reference, **judged}
    elif proposal.get(key) != reference["proposal"].get(key):
        try:
            reference = (verify(state, None, proposal.get("chains")) if tree else verify(state, proposal["tokens"])).block
        except (InvalidInput, SessionDone):
            pass  # an unverifiable proposal: judge the rest against the engine's own block
    _compare(results["acceptance"], b, base + ("verification",), reference["verification"], block["verification"])
    if "tau" in reference or "tau" in block:  # mode block (SPEC 10.4): tau is a decision too
        _compare(results["acceptance"], b, base + ("tau",), reference.get("tau"), block.get("tau"))
    tail = None if judged is not None else _own_tail(state, block, tree)
    if tail is not None:
        reference = {**reference, **tail}
    _compare(results["correction"], b, base + ("correction",), reference["correction"], block["correction"])
    _compare(results["discard"], b, base + ("discarded",), reference["discarded"], block["discarded"])
    for key in ("bonus", "no_bonus", "sample"):
        _compare(results["bonus"], b, base + (key,), reference[key], block[key])


def _own_tail(state: State, block: dict, tree: bool) -> Optional[dict]:
    """The correction, discard and bonus the block's own decisions call for: mode tree's
    (:func:`.tree_checks.tree_tail`, SPEC 11; SPEC 12's other trees are
    :func:`.tree_steps.judge`'s), the other drafting modes' (:func:`_tail_given_decisions`),
    ``None`` in mode autoregressive (nothing is decided)."""
    if tree:
        return tree_tail(state, block)
    if state.config.mode == "autoregressive":
        return None
    return _tail_given_decisions(state, block)


def _tail_given_decisions(state: State, block: dict) -> Optional[dict]:
    """What SPEC sections 4.3-4.4 (or 5, greedy) make of the block's **own** proposal and
    acceptance decisions: ``{"correction", "discarded", "bonus", "no_bonus"}``, or ``None`` when
    the proposal is not made of vocabulary tokens.

    So a wrong acceptance test fails the acceptance check alone: the correction, discard and bonus
    checks ask whether the block did the right thing *after* its own decisions. It is the
    engine's own verifier concluding the block's decisions (``TokenWise.conclude``, the mode's
    correct rules); the correction or bonus uses the draw after the block's last recorded draft
    or verification draw (greedy: none).
    """
    cfg = state.config
    index = cfg.index
    found = [index.get(label) for label in block["proposal"]["tokens"]]
    tokens = [t for t in found if t is not None]
    if len(tokens) < len(found):
        return None
    n = block["position"]
    for _, d in _draws_of({**block, "correction": None, "bonus": None, "sample": None}):
        if d is not None and _is_position(d["position"]):
            n = d["position"] + 1
    decoder = MODE_RULES[cfg.mode]
    verifier = decoder.verifier
    assert isinstance(verifier, TokenWise)  # a chain mode's (SPEC 4, 5, 10)
    rows = decoder.rows.read(cfg)
    drafted = Drafted(state.committed[-1] if state.committed else None)
    context = drafted.last
    for token in tokens:
        drafted.tokens.append(token)
        drafted.rows.append(rows.draft(context))
        context = token
    verification = block["verification"]
    rejected = next((i for i, v in enumerate(verification) if v["accepted"] is not True), None)
    if rejected is None or rejected >= len(tokens):
        rejected, accepted = None, tokens[:len(verification)]
    else:
        accepted = tokens[:rejected]
    try:
        verdict = verifier.conclude(state, rows, drafted, Decisions([], accepted, rejected), Stream(cfg.seed, n))
    except ValueError:  # p == q: no rejection was possible, so no correction either
        return {"correction": None, "discarded": [], "bonus": None, "no_bonus": None}
    return {"correction": verdict.correction, "discarded": [cfg.vocab[t] for t in verdict.discarded],
            "bonus": verdict.bonus, "no_bonus": verdict.no_bonus}
