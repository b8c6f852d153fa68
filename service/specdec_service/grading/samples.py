"""Grading a sampler by whole sessions: every position tested, one error rate.

Speculative sampling is exact (Leviathan et al. 2023, theorem 1; Chen et al. 2023): a correct
implementation's committed output, whatever its random numbers, draft schedule or block width,
is a **Markov chain** under the bigram target (SPEC section 1), stopped at an EOS (SPEC 6) and
at the limit. :func:`grade_samples` tests whole sessions against that law:

- **lengths** (:func:`check_lengths`): every sample must be a complete session: exactly
  ``limit`` tokens, or shorter only when it ends in the EOS (and nothing after it); otherwise
  the grade fails with how many samples were too long or too short and by how much;
- **transitions**: the sampled tokens are counted per *row*: a position ``t`` (0-based) and
  its context ``c`` (the token at ``t - 1``, or the empty prefix), with one more outcome
  ``END`` (the sample stops before position ``t``). Under the target, a row with ``t < limit``
  and ``c`` not the EOS has the law ``(p_c, END: 0)``; every other row is ``END`` for sure.
  Each row is tested by Pearson's chi-square (:func:`row_test`); its cells: outcomes expecting
  at least :data:`MIN_EXPECTED` (5) samples one by one, the others pooled into one cell
  (merged into the smallest cell when the pool expects fewer than 5). **Pooling rule**: a row
  with fewer than two such cells (too few samples at that position) is not tested alone: its
  counts are added, for its context, to the row ``(*, c)`` that pools every such position (the
  law of each is ``p_c`` under the target, so their sum is multinomial ``p_c`` too); what still
  has fewer than two cells is reported as untested. The **family** of tests: every row
  tested, every pooled context row, the **global** test (the sum of those statistics and their
  degrees of freedom, with power against deviations spread thin over many rows) and, when the
  config has an EOS, the **length law** (the exact distribution of the session length, by a
  forward pass over contexts); one **family-wise error rate** ``alpha`` by Holm's step-down
  method (Holm 1979): the grade fails iff some test's Holm-adjusted p-value is at most
  ``alpha`` (iff the smallest p-value is at most ``alpha / K`` for ``K`` tests), so a correct
  sampler fails with probability at most ``alpha``;
- an outcome of probability 0 (a token the target row never gives, a token past the limit
  or after the EOS, a session stopped early) is **impossible**: the grade fails;
- the row whose Holm-adjusted p-value is smallest is the **most deviating** (its position,
  context and most over- and under-represented outcomes);
- **the mistake named** (:func:`mistake_laws`, :func:`name_mistake`): for every catalogued
  mistake of the config's mode (speculative, autoregressive, block or tree) whose output law
  differs from the target's, the exact law of its output projected on the same rows (the
  probability of each outcome at each position and context), by a forward pass over blocks:
  from its rules as exact rows (:func:`specdec_service.engine.analysis.rules_for`,
  :func:`law_of_rules`) or, where a block has no such rows, by exact enumeration of one block
  (:mod:`.laws`; :data:`.laws.UNSTATED` says why the others keep the target's law). Evidence per mistake: the log-likelihood ratio of the samples
  under it against the target, the G statistics (``2 sum O ln(O / E)``) against each, and its
  own goodness of fit (the same family test with its law). A mistake is **named** only when the
  target fails, the mistake's own fit passes (Holm-adjusted p above ``alpha``) and its
  likelihood is the highest of those that pass; otherwise "no catalogued mistake explains it".

Every number served is the same bits on every CPU: rows are the nearest float64 of their exact
rationals, every sum is :func:`math.fsum` or a plain Python loop in one fixed order, logarithms
``math.log`` (correctly rounded in practice on every libm we ship with; it feeds only the
evidence, never the pass/fail decision), p-values ``scipy.special.chdtrc`` of one float. numpy
only counts tokens (integers: exact everywhere), no float goes through it, no BLAS (the expected
acceptance rate, when asked for, is :func:`.distribution.expected_acceptance`, hardware-independent
the same way).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from itertools import chain, repeat
from math import fsum, inf, log, sqrt
from typing import Any

import numpy as np

from ..budget import SAMPLE_GRADING, check_grading_work, config_row_bits
from ..engine import Config, InvalidInput, builtin_models, parse_config
from ..engine.analysis import rules_for
from ..engine.tree_law import TreeShapeLaw, is_lossless
from .catalogue import CATALOGUE
from .distribution import _acceptance, chi_square, first_misfit
from .faulty import NeverBonus
from .laws import MAX_PATHS, PROGRAMS, SCHEDULES, UNSTATED, TooLarge, block_shape, decoding_rows, law_of_program
from .tree_laws import SHAPE_LAWS, applies
from .submissions import DEFAULT_ALPHA, MAX_OUTPUT, check_sample, check_samples_request

MIN_EXPECTED = 5.0
"""An outcome expecting fewer samples than this is pooled (the usual rule for chi-square)."""
END = -1
"""The outcome "the sample stops here" of a row (no token at that position)."""
TOP = 3
"""How many over- and under-represented outcomes of the most deviating row are reported."""
LAW_BUDGET = 20_000
"""Work of the mistakes' exact laws at most: ``limit x max(width, 1) x (V + 1)^2 x (1 + bits /
256)`` per mistake (``bits`` the rows' processed size, ``budget.config_row_bits``: each enumerated
path's exact arithmetic grows with it), summed over the mistakes of the mode; a larger config is
graded without naming a mistake (``mistake.computed`` false, with the reason). Measured (CPU, a
loaded 2-core machine): 4 labels, width 16, limit 5, 15-digit rows: 48,460 paths in 6.1 s, about
28,000 units (at 400,000 a 4-label width-16 limit-66 grade took 20 s)."""
SCHEDULE = "k = min(width, limit - L) proposals a block (SPEC 4.1), no bonus at the limit (SPEC 4.4)"
"""The block schedule the expected acceptance rate assumes (stated in the report)."""

Row = tuple  # (position, context): context None is the empty prefix


# ---------------------------------------------------------------- input


def _parse(payload: Any) -> tuple[Config, bool, float, Counter, dict | None]:
    """The checked request: ``(config, has_draft, alpha, samples as index tuples, counters)``."""
    check_samples_request(payload)
    raw = dict(payload["config"])
    has_draft = "draft" in raw
    if not has_draft:  # no draft: only the target is tested; the draft is the target's own table
        target = raw.get("target", "toy")
        raw["draft"] = _builtin_table(target) if isinstance(target, str) else target
    raw.setdefault("seed", 0)
    try:
        config = parse_config(raw)
    except InvalidInput as error:
        raise error.prefixed("config") from None
    if config.mode == "greedy":
        raise InvalidInput.at(("config", "mode"), "must be speculative or autoregressive: greedy decoding is "
                              "deterministic, grade its trace with POST /v1/grade")
    check_grading_work(config)
    counters = payload.get("counters")
    if counters is not None:
        if not has_draft:
            raise InvalidInput.at(("config", "draft"), "is needed for the acceptance rate (counters were given)")
        counters = {name: int(value) for name, value in counters.items()}
        if counters["accepted"] > counters["draft_steps"]:
            raise InvalidInput.at(("counters", "accepted"), "cannot exceed draft_steps")
    vocab = {label: i for i, label in enumerate(config.vocab)}
    SAMPLES_BUDGET.check(samples_cost(payload["samples"]), pointer="#/samples")
    samples = _read_samples(payload["samples"], vocab)
    return config, has_draft, float(payload.get("alpha", DEFAULT_ALPHA)), samples, counters


def _read_samples(raw: list, vocab: dict) -> Counter:
    """The samples as ``Counter({token indices: how many})``, each checked against
    :data:`.submissions.SAMPLE` and the vocabulary. Identical samples are read once (a grade of
    10^6 short samples has few distinct ones); any fault is found and named by the full check
    of the first faulty sample, at its path ``samples/i(/j)`` (:func:`_refuse`)."""
    distinct = None
    if all(map(isinstance, raw, repeat(list))):
        try:
            distinct = Counter(map(tuple, raw))
        except TypeError:  # an unhashable entry inside a sample
            distinct = None
    if distinct is None:
        return _refuse(raw, vocab, None)
    token_of, faulty = vocab.__getitem__, []
    samples: Counter = Counter()
    for k, n in distinct.items():
        try:
            if 0 < len(k) <= MAX_OUTPUT:
                samples[tuple(map(token_of, k))] = n
                continue
        except (KeyError, TypeError):
            pass
        faulty.append(k)
    return _refuse(raw, vocab, faulty) if faulty else samples


FEW_FAULTY = 16
"""Distinct faulty samples :func:`_refuse` finds by ``list.index`` (a C-speed pass each); with
more, one set of C-speed passes finds the first (:func:`.distribution.first_misfit`)."""


def _refuse(raw: list, vocab: dict, faulty: list | None) -> Counter:
    """Raise the fault of :func:`_read_samples`'s samples, ``faulty`` the distinct faulty ones
    (as tuples; None: not known): the first faulty sample, found in C-speed passes, is checked in
    full, which names its fault at ``samples/i(/j)`` (the samples before it are sound)."""
    i: int | None
    if faulty is not None and len(faulty) <= FEW_FAULTY:
        i = min(raw.index(list(k)) for k in faulty)
    else:
        i = first_misfit(raw, vocab, 1, None)
    if i is not None:
        sample = raw[i]
        check_sample(sample, ("samples", i))
        for j, label in enumerate(sample):
            if label not in vocab:
                raise InvalidInput.at(("samples", i, j), f"{label!r} is not a token of the vocabulary")
    raise AssertionError("no faulty sample among samples the fast path refused")  # pragma: no cover


def _weighted(samples) -> Mapping:
    """``{sample: how many}`` from a mapping of that form or a list of samples."""
    return samples if isinstance(samples, Mapping) else Counter(map(tuple, samples))


def _builtin_table(name: str) -> Any:
    """The table of the built-in model ``name`` (a custom-table draft equal to it), or ``name``
    itself when there is none (then ``parse_config`` names the unknown model)."""
    for model in builtin_models():
        if model["name"] == name:
            return {"vocab": model["vocab"], "start": model["start"], "next": model["next"]}
    return name


SAMPLES_BUDGET = SAMPLE_GRADING
"""The work budget of one sample grade (:mod:`specdec_service.budget`)."""


def samples_cost(samples: Any) -> int:
    """The cost of reading and counting ``samples``: their tokens (a non-list costs 0)."""
    if not isinstance(samples, list):
        return 0
    if all(map(isinstance, samples, repeat(list))):  # in C: no Python per sample
        return sum(map(len, samples))
    return sum(len(s) if isinstance(s, list) else 1 for s in samples)


# ---------------------------------------------------------------- lengths


def check_lengths(samples, config: Config) -> dict:
    """Is every sample a complete session? A sample is complete when it
    holds exactly ``limit`` tokens without an EOS, or ends at its first EOS within the limit.

    Returns ``{"complete", "too_long", "too_short", "after_eos", "too_long_by",
    "too_short_by", "message"}``: counts, ``{tokens: samples}`` histograms (keys as strings,
    ascending) and one sentence (``None`` when every sample is complete). ``after_eos``
    counts samples with tokens after their first EOS (also counted as too long)."""
    eos, limit = config.eos, config.limit
    long_by: Counter = Counter()
    short_by: Counter = Counter()
    after = 0
    samples = _weighted(samples)
    for s, w in samples.items():
        end = s.index(eos) + 1 if eos is not None and eos in s else None
        if end is not None and len(s) > end:
            after += w
            long_by[len(s) - min(end, limit)] += w
        elif len(s) > limit:
            long_by[len(s) - limit] += w
        elif end is None and len(s) < limit:
            short_by[limit - len(s)] += w
    too_long, too_short = sum(long_by.values()), sum(short_by.values())
    n = sum(samples.values())
    return {"complete": n - too_long - too_short, "too_long": too_long, "too_short": too_short,
            "after_eos": after, "too_long_by": {str(k): long_by[k] for k in sorted(long_by)},
            "too_short_by": {str(k): short_by[k] for k in sorted(short_by)},
            "message": _length_message(n, long_by, short_by, after, config)}


def _by(histogram: Counter) -> str:
    return ", ".join(f"{count} by {k} token{'s' if k > 1 else ''}" for k, count in sorted(histogram.items()))


def _length_message(n: int, long_by: Counter, short_by: Counter, after: int, config: Config) -> str | None:
    parts = []
    if long_by:
        extra = f" ({after} go on after the EOS)" if after else ""
        parts.append(f"{sum(long_by.values())} of {n} samples are too long{extra}: {_by(long_by)}")
    if short_by:
        parts.append(f"{sum(short_by.values())} of {n} samples are too short without ending in the EOS: "
                     f"{_by(short_by)}")
    if not parts:
        return None
    eos = "" if config.eos is None else f", or fewer ending in the EOS {config.vocab[config.eos]!r}"
    return "; ".join(parts) + f". A session has exactly limit = {config.limit} tokens{eos}."


# ---------------------------------------------------------------- counting


def transition_counts(samples) -> dict[Row, Counter]:
    """``{(t, c): Counter({outcome: samples})}``: at each position ``t`` and context ``c``
    (the token at ``t - 1``, ``None`` at ``t = 0``), how many samples have each token there,
    or stop (:data:`END`) before it. ``samples``: a list of samples or ``{sample: how many}``.

    Counted with numpy on integer keys ``(t * B + c) * B + y`` (``B`` = vocabulary + 2: the
    empty prefix and END get codes of their own): integer counts are exact on every CPU, and a
    request's 2 million tokens are counted in a fraction of a second."""
    weighted = _weighted(samples)
    keys = list(weighted)
    if not keys:
        return {}
    weights = np.fromiter(weighted.values(), dtype=np.int64, count=len(keys))
    lengths = np.fromiter(map(len, keys), dtype=np.int64, count=len(keys))
    flat = np.fromiter(chain.from_iterable(keys), dtype=np.int64, count=int(lengths.sum()))
    size = int(flat.max()) + 1 if flat.size else 0
    start_code, end_code, base = size, size + 1, size + 2
    starts = np.cumsum(lengths) - lengths
    position = np.arange(flat.size, dtype=np.int64) - np.repeat(starts, lengths)
    context = np.empty_like(flat)
    context[1:] = flat[:-1]
    context[starts[lengths > 0]] = start_code
    last = np.where(lengths > 0, flat[np.maximum(starts + lengths - 1, 0)] if flat.size else start_code, start_code)
    codes = np.concatenate([(position * base + context) * base + flat, (lengths * base + last) * base + end_code])
    counts = np.concatenate([np.repeat(weights, lengths), weights])
    unique, inverse = np.unique(codes, return_inverse=True)
    totals = np.zeros(unique.size, dtype=np.int64)
    np.add.at(totals, inverse, counts)  # integer additions: exact
    rows: dict[Row, Counter] = {}
    for code, k in zip(unique.tolist(), totals.tolist()):
        rest, y = divmod(code, base)
        t, c = divmod(rest, base)
        key = (t, None if c == start_code else c)
        row = rows.get(key)
        if row is None:
            row = rows[key] = Counter()
        row[END if y == end_code else y] = k
    return rows


# ---------------------------------------------------------------- laws


def target_law(config: Config):
    """The target's law of a row: ``law((t, c)) -> {outcome: probability > 0}`` (SPEC 1, 6):
    ``p_c`` below the limit unless ``c`` is the EOS, else ``END`` for sure; with sampling
    parameters the processed row ``p'_c`` (SPEC 9: the output is exactly sampling from p')."""
    target = decoding_rows(config).target  # p', when the config sets sampling (SPEC 9)
    rows = {c: {y: p for y, p in enumerate(target(c).floats) if p > 0}
            for c in [None, *range(len(config.vocab))]}
    stop = {END: 1.0}

    def law(row: Row) -> dict:
        t, c = row
        return rows[c] if t < config.limit and (c is None or c != config.eos) else stop
    return law


def reference_law(config: Config):
    """The law correct samples follow, as :func:`target_law` gives it: the target's, except for
    a lossy tree (SPEC 12.4: ``target_only`` with a threshold below 1), whose law is the one SPEC
    12 defines (the exact enumeration of :class:`~specdec_service.engine.tree_law.TreeShapeLaw`
    projected on rows by :func:`.laws.law_of_program`), so that a correct lossy implementation
    passes."""
    if not is_lossy(config):
        return target_law(config)
    return _getter(law_of_program(config, TreeShapeLaw))


def is_lossy(config: Config) -> bool:
    """Whether ``config`` is a lossy tree (SPEC 12: mode tree, a ``tree`` with a threshold below 1)."""
    tree = getattr(config, "tree", None)
    return config.mode == "tree" and tree is not None and not is_lossless(tree)


def _applies(mistake, config: Config) -> bool:
    """Whether ``mistake`` (of ``config``'s mode) can be made with ``config``'s tree: SPEC 12's
    in their shape and verifier (:func:`.tree_laws.applies`), SPEC 11's in the default tree."""
    if mistake.id in SHAPE_LAWS:
        return applies(mistake.id, config)
    tree = getattr(config, "tree", None)
    return mistake.mode != "tree" or tree is None or tree.is_section_11


def _floats(rows: dict) -> dict:
    return {c: [float(x) for x in row] for c, row in rows.items()}


class _Forward:
    """The forward pass of :func:`law_of_rules`: ``mass[(t, c)][y]`` (the probability of
    outcome ``y`` at row ``(t, c)``) and ``start[L][c]`` (of a block starting there)."""

    def __init__(self, config: Config, rules, schedule: str = "spec"):
        self.rules, self.eos, self.limit, self.schedule = rules, config.eos, config.limit, schedule
        self.accept, self.correct, self.bonus = _floats(rules.accept), _floats(rules.correct), _floats(rules.bonus)
        self.mass: dict[Row, dict] = {}
        self.start: dict[int, dict] = {0: {None: 1.0}}

    def add(self, row: Row, y: int, m: float) -> None:
        cell = self.mass.setdefault(row, {})
        cell[y] = cell.get(y, 0.0) + m

    def land(self, t: int, c, m: float) -> None:
        """A token ``c`` committed at ``t - 1``: the session ends (EOS, limit) or a block starts."""
        if (c is not None and c == self.eos) or t >= self.limit:
            self.add((t, c), END, m)
        else:
            here = self.start.setdefault(t, {})
            here[c] = here.get(c, 0.0) + m

    def block(self, length: int) -> None:
        """Every block starting after ``length`` committed tokens."""
        frontier = self.start.pop(length)
        k, fits = block_shape(self.schedule, self.rules.width, self.limit, length) if length < self.limit else (0, False)
        for i in range(k):
            frontier = self._step(length + i, frontier)
        adds = (not isinstance(self.rules.bonus_rule, NeverBonus) and length < self.limit
                and (fits or self.rules.bonus_allowed(length, k)))
        for c, m in frontier.items():
            if not adds and k:
                self.land(length + k, c, m)  # the next block starts here
                continue
            if not adds:  # a block that commits nothing would start again forever: the session ends
                self.add((length, c), END, m)
                continue
            for y, b in enumerate(self.bonus[c]):
                if b:
                    self.add((length + k, c), y, m * b)
                    self.land(length + k + 1, y, m * b)

    def _step(self, t: int, frontier: dict) -> dict:
        """One proposal at position ``t``: corrections end the block, accepted proposals go on."""
        nxt: dict = {}
        for c, m in frontier.items():
            for y, r in enumerate(self.correct[c]):
                if r:
                    self.add((t, c), y, m * r)
                    self.land(t + 1, y, m * r)
            for x, a in enumerate(self.accept[c]):
                if a:
                    self.add((t, c), x, m * a)
                    if x == self.eos:
                        self.add((t + 1, x), END, m * a)
                    else:
                        nxt[x] = nxt.get(x, 0.0) + m * a
        return nxt


def law_of_rules(config: Config, ruleset, schedule: str = "spec") -> dict[Row, dict]:
    """The exact law of the output of ``ruleset`` decoding ``config``, projected on rows:
    ``{(t, c): {outcome: probability > 0}}`` for every row the output reaches.

    A forward pass over blocks (each block's rows from :func:`~specdec_service.engine.analysis.rules_for`,
    exact rationals rounded once to float64): ``start[L][c]``, the probability that a block
    starts after ``L`` committed tokens ending in ``c``; inside it, proposals accepted
    (``accept``), a rejection committing its correction (``correct``, with the miss probability
    folded in), the bonus when all ``k`` are accepted and the bonus rule draws it
    (:meth:`BlockRules.bonus_allowed`; none for a rule that never adds one). A committed EOS
    ends the session; a block that reaches the limit ends it. Floats summed in one fixed order.
    ``schedule``: how many proposals a block drafts and whether a bonus fits
    (:func:`.laws.block_shape`; SPEC's by default)."""
    rules = rules_for(config, ruleset)  # ValueError: a rule whose law is not a distribution
    walk = _Forward(config, rules, schedule)
    while walk.start:
        walk.block(min(walk.start))
    mass = walk.mass
    law = {}
    for row, cell in mass.items():
        total = fsum(cell.values())
        law[row] = {y: m / total for y, m in sorted(cell.items()) if m > 0}
    return law


def _law_computable(mistake) -> str | None:
    """Why a mistake's output law is not stated here (``None`` when it is): by
    :func:`.laws.law_of_program` (the enumeration of its decoder or a closed form,
    :data:`.laws.PROGRAMS`), or by :func:`law_of_rules` for the other token-wise decoders (a
    closed form from per-context rows, ``tests/test_grading_laws_enumerated.py`` proves it equal to
    the enumeration of each such decoder); :data:`.laws.UNSTATED` says why the others' law is the
    target's."""
    if mistake.id in UNSTATED:
        return UNSTATED[mistake.id]
    if mistake.id in PROGRAMS or mistake.rules.mode in ("speculative", "greedy", "autoregressive"):
        return None
    return f"its output law (mode {mistake.rules.mode}) is not computed by the token-wise forward pass"


def _law_of(config: Config, mistake, paths: list, schedule: str = "spec", kernels: dict | None = None) -> dict:
    """One mistake's row law under ``schedule`` (:data:`.laws.SCHEDULES`): its block program's
    (:data:`.laws.PROGRAMS`; ``kernels`` shared by its schedules) or its rules'."""
    if mistake.id in PROGRAMS:
        return law_of_program(config, PROGRAMS[mistake.id], mistake.id, paths, schedule, kernels)
    return law_of_rules(config, mistake.rules, schedule)


SAME_LAW = 1e-12
"""A mistake's law within this of the target's at every row and outcome is the target's (its
rounding aside): samples cannot tell them apart, so it is neither named nor shown as closest."""


def is_targets_law(law: dict, target) -> bool:
    """Whether a row law (``{(t, c): {outcome: p}}``) is the target's (:func:`target_law`) at
    every row it reaches, to :data:`SAME_LAW`."""
    for row, cell in law.items():
        want = target(row)
        if set(cell) != set(want) or any(abs(p - want[y]) > SAME_LAW for y, p in cell.items()):
            return False
    return True


def _schedule_laws(config: Config, mistake, share: list, target) -> dict:
    """``{schedule: law}`` of one mistake under each schedule of :data:`.laws.SCHEDULES` (one
    for width 0, where they agree), leaving out the laws equal to the target's."""
    kernels: dict = {}
    names = list(SCHEDULES) if config.width else ["spec"]
    laws = {name: _law_of(config, mistake, share, name, kernels) for name in names}
    return {name: law for name, law in laws.items() if not is_targets_law(law, target)}


def law_cost(config: Config, mistakes: int) -> int:
    """The work of ``mistakes`` exact mistake laws of ``config`` in :data:`LAW_BUDGET` units."""
    size = len(config.vocab) + 1
    return mistakes * config.limit * max(config.width, 1) * size * size * (256 + config_row_bits(config)) // 256


def mistake_laws(config: Config, has_draft: bool = True, skipped: list | None = None) -> tuple[list, str | None]:
    """The catalogued mistakes of ``config``'s mode with their exact row laws under each block
    schedule (:func:`law_of_rules` or :func:`.laws.law_of_program`; :data:`.laws.SCHEDULES`):
    ``([(mistake, {schedule: law}), ...], None)`` (a law equal to the target's left out, a
    mistake without any left out), or
    ``([], reason)`` when none is computed (no draft given, or the config over
    :data:`LAW_BUDGET`). ``skipped``, when given, receives ``(id, reason)`` of each mistake of the
    mode whose law is not computed for this config (undefined rule, or more than
    :data:`.laws.MAX_PATHS` paths to enumerate for all of them)."""
    if not has_draft:
        return [], "no draft was given: the catalogued mistakes' laws depend on the draft"
    mistakes = [m for m in CATALOGUE if m.mode == config.mode and _applies(m, config) and _law_computable(m) is None]
    cost = law_cost(config, len(mistakes))
    if cost > LAW_BUDGET:
        return [], (f"the config is too large to compute the mistakes' laws here ({cost} > {LAW_BUDGET} units: "
                    "limit x width x (V + 1)^2 x (1 + bits of the rows / 256) per mistake)")
    laws = []
    target = reference_law(config)
    left = MAX_PATHS  # one budget of enumerated paths for the whole grade, shared fairly
    for i, mistake in enumerate(mistakes):
        share = [left // (len(mistakes) - i)]  # an equal share of what is left; unused paths roll over
        try:
            by_schedule = _schedule_laws(config, mistake, share, target)
            if by_schedule:
                laws.append((mistake, by_schedule))
        except ValueError:  # a rule undefined here (a residual of zero mass): it cannot have made the samples
            pass
        except TooLarge:
            if skipped is not None:
                skipped.append((mistake.id, f"its exact law takes more than the {left // (len(mistakes) - i)} "
                                            f"enumerated paths left to it (of {MAX_PATHS} a grade)"))
        left -= left // (len(mistakes) - i) - max(share[0], 0)
    return laws, None


# ---------------------------------------------------------------- the tests


def row_test(counts: Counter, law: dict) -> tuple[float, int, float] | None:
    """Pearson's chi-square of one row's ``counts`` against ``law`` (outcome -> probability,
    only positive ones): ``(statistic, dof, p_value)``, or ``None`` when fewer than two cells
    can be formed. Outcomes expecting at least :data:`MIN_EXPECTED` samples are cells of their
    own; the others are pooled into one cell (merged into the smallest cell when the pool
    expects fewer than 5). Observed outcomes outside ``law`` are not counted here (impossible)."""
    n = sum(counts[y] for y in law)
    big = sorted((y for y, p in law.items() if n * p >= MIN_EXPECTED), key=lambda y: (-law[y], y))
    observed = [counts[y] for y in big]
    expected = [n * law[y] for y in big]
    rest = [y for y in law if n * law[y] < MIN_EXPECTED]
    if rest:
        o, e = sum(counts[y] for y in rest), n * fsum(law[y] for y in rest)
        if e >= MIN_EXPECTED or not observed:
            observed.append(o)
            expected.append(e)
        else:
            observed[-1] += o
            expected[-1] += e
    if len(observed) < 2:
        return None
    statistic, p_value = chi_square(observed, expected)
    return statistic, len(observed) - 1, p_value


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values (Holm 1979), in the order given: with ``K`` tests
    sorted ascending, ``adj_(i) = max_{j <= i} min(1, (K - j + 1) p_(j))``. Rejecting every test
    whose adjusted p-value is at most ``alpha`` keeps the family-wise error rate at ``alpha``."""
    order = sorted(range(len(p_values)), key=lambda i: (p_values[i], i))
    adjusted = [1.0] * len(p_values)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def _impossible(counts: dict[Row, Counter], law) -> list[tuple[Row, int, int]]:
    found = []
    for row in sorted(counts, key=_row_key):
        allowed = law(row)
        for y in sorted(counts[row]):
            if y not in allowed:
                found.append((row, y, counts[row][y]))
    return found


def _row_key(row: Row) -> tuple:
    t, c = row
    return (t, -1 if c is None else c)


def _pooled_tests(pooled: dict) -> tuple[list, int]:
    """The tests of the rows pooled per context (``{context: (counts, law)}``), and how many
    samples' outcomes no test could take (a pool still too small)."""
    tests, untested = [], 0
    for c in sorted(pooled, key=lambda c: -1 if c is None else c):
        pool, allowed = pooled[c]
        result = row_test(pool, allowed)
        if result is None:
            untested += sum(pool.values())
        else:
            tests.append(("pooled", (None, c), *result))
    return tests, untested


def family_test(counts: dict[Row, Counter], law, length_law: tuple | None = None) -> dict:
    """The family of tests of :func:`grade_samples` for one law (``law(row)`` ->
    ``{outcome: p}``): ``{"tests": [(name, row or None, statistic, dof, p, adjusted)],
    "impossible": [(row, outcome, count)], "untested": samples' outcomes in no test,
    "p_value": the smallest Holm-adjusted p-value (1.0 when nothing is tested)}``."""
    tests: list[tuple] = []
    pooled: dict = {}
    for row in sorted(counts, key=_row_key):
        allowed = law(row)
        if len(allowed) < 2:
            continue
        result = row_test(counts[row], allowed)
        if result is None:
            pool = pooled.setdefault(row[1], (Counter(), allowed))[0]
            pool.update({y: k for y, k in counts[row].items() if y in allowed})
        else:
            tests.append(("row", row, *result))
    pooled_tests, untested = _pooled_tests(pooled)
    tests += pooled_tests
    if tests:
        stat, dof = fsum(x[2] for x in tests), sum(x[3] for x in tests)
        from scipy.special import chdtrc
        tests.append(("global", None, stat, dof, float(chdtrc(dof, stat))))
    if length_law is not None:
        tests.append(length_law)
    adjusted = holm([x[4] for x in tests])
    tests = [(*x, a) for x, a in zip(tests, adjusted)]
    return {"tests": tests, "impossible": _impossible(counts, law), "untested": untested,
            "p_value": min(adjusted, default=1.0), "pools": {c: pool for c, (pool, _) in pooled.items()}}


def length_test(samples: list | Mapping, config: Config) -> tuple | None:
    """The chi-square test of the session lengths against their exact law under the target
    (a forward pass over contexts: ``P(length = t + 1)`` is the probability that the first EOS
    is at position ``t``; the rest is at the limit), as a family member
    ``("length", None, statistic, dof, p_value)``, or ``None`` without an EOS or cells."""
    eos, limit = config.eos, config.limit
    if eos is None:
        return None
    target = decoding_rows(config).target
    alive = {None: 1.0}
    law: dict = {}
    for t in range(limit):
        nxt: dict = {}
        stops = []
        for c, m in alive.items():
            for y, p in enumerate(target(c).floats):
                if p == 0:
                    continue
                if y == eos:
                    stops.append(m * p)
                elif t + 1 < limit:
                    nxt[y] = nxt.get(y, 0.0) + m * p
                else:
                    stops.append(m * p)
        law[t + 1] = fsum(stops)
        alive = nxt
    law = {k: v for k, v in law.items() if v > 0}
    counts: Counter = Counter()
    for s, w in _weighted(samples).items():
        counts[len(s)] += w
    result = row_test(counts, law)
    return None if result is None else ("length", None, *result)


# ---------------------------------------------------------------- evidence


def log_likelihood(counts: dict[Row, Counter], law) -> float:
    """``sum O ln P`` over every row and outcome observed (``-inf`` when one is impossible)."""
    terms = []
    for row in sorted(counts, key=_row_key):
        allowed = law(row)
        for y, k in sorted(counts[row].items()):
            p = allowed.get(y, 0.0)
            if p <= 0:
                return -inf
            terms.append(k * log(p))
    return fsum(terms)


def saturated(counts: dict[Row, Counter]) -> float:
    """``sum O ln(O / n_row)``: the log-likelihood of the rows' own shares (for G statistics)."""
    terms: list[float] = []
    for row in sorted(counts, key=_row_key):
        n = sum(counts[row].values())
        terms.extend(k * log(k / n) for _, k in sorted(counts[row].items()))
    return fsum(terms)


def _g(best: float, ll: float) -> float | None:
    return None if ll == -inf else 2 * (best - ll)


def _candidate(counts, mistake, laws: dict, target_ll: float, sat: float, alpha: float) -> tuple:
    """``(log-likelihood, mistake, evidence)`` of one mistake (:func:`name_mistake`) under the
    schedule whose law is the most likely (``laws``: ``{schedule: law}``; ties: the first of
    :data:`.laws.SCHEDULES`)."""
    scored = [(log_likelihood(counts, _getter(law)), i, name) for i, (name, law) in enumerate(laws.items())]
    _, _, schedule = max(scored, key=lambda x: (x[0], -x[1]))
    return _evidence(counts, mistake, laws[schedule], schedule, target_ll, sat, alpha)


def _getter(law: dict):
    get = law.get

    def mistake_law(row, get=get):
        return get(row, {END: 1.0})
    return mistake_law


def _evidence(counts, mistake, law: dict, schedule: str, target_ll: float, sat: float, alpha: float) -> tuple:
    """``(log-likelihood, mistake, evidence)`` of one mistake's law under ``schedule``."""
    mistake_law = _getter(law)
    fit = family_test(counts, mistake_law)
    ll = log_likelihood(counts, mistake_law)
    fits = not fit["impossible"] and fit["p_value"] > alpha  # a deterministic law has no test: it fits
    ratio = None if ll == -inf or target_ll == -inf else ll - target_ll
    return (ll, mistake, {
        "id": mistake.id, "title": mistake.title, "rule": mistake.rule, "hint": mistake.hint,
        "log_likelihood_ratio": ratio, "g_target": _g(sat, target_ll), "g_mistake": _g(sat, ll),
        "p_value": 0.0 if fit["impossible"] else fit["p_value"], "fits": fits,
        "schedule": schedule, "schedule_rule": SCHEDULES[schedule]})


def name_mistake(counts, laws, target_ll: float, alpha: float, target_failed: bool, why_not: str | None,
                 skipped: list | None = None) -> dict:
    """The catalogued mistake whose law explains the samples best (see the module docstring):
    ``{"named": mistake or None, "computed": bool, "reason": sentence, "candidates": [...],
    "closest": candidate or None}``; each candidate ``{"id", "title", "hint", "rule",
    "log_likelihood_ratio", "g_target", "g_mistake", "p_value", "fits", "schedule",
    "schedule_rule"}`` (``log_likelihood_ratio`` = ln L(mistake) - ln L(target), ``null`` when
    infinite; ``schedule``: the block schedule, :data:`.laws.SCHEDULES`, under which its law is
    the most likely). ``laws``: ``[(mistake, {schedule: law})]`` (:func:`mistake_laws`).
    ``closest``, when the target fails and no law fits: the candidate more likely than the
    target with the highest likelihood, with ``"guess": true`` (a guess, not a diagnosis; laws
    equal to the target's are never among the candidates). ``skipped``: ``(id, reason)`` of the
    mistakes whose law was not computed for this config (named in the reason)."""
    if why_not is not None:
        return {"named": None, "computed": False, "reason": why_not, "candidates": [], "closest": None}
    sat = saturated(counts)
    candidates = sorted((_candidate(counts, mistake, law, target_ll, sat, alpha) for mistake, law in laws),
                        key=lambda x: (-x[0], CATALOGUE.index(x[1])))  # ties: the catalogue's first
    fitting = [c for c in candidates if c[2]["fits"] and c[0] > target_ll]
    listed = [c[2] for c in candidates[:3]]
    untried = "" if not skipped else \
        f" (laws not computed for this config: {'; '.join(f'{i}: {why}' for i, why in skipped)})"
    if not target_failed:
        return {"named": None, "computed": True, "reason": "the target's law explains the samples",
                "candidates": listed, "closest": None}
    if not fitting:
        closest = next(({**c[2], "guess": True} for c in candidates if c[0] > target_ll), None)
        guess = "" if closest is None else (
            f"; the closest law is {closest['id']}'s under the schedule {closest['schedule']} (log-likelihood ratio "
            f"{_ratio_text(closest['log_likelihood_ratio'])} against the target, its own fit p = "
            f"{closest['p_value']:.3g}): a guess, not a diagnosis")
        return {"named": None, "computed": True, "candidates": listed, "closest": closest,
                "reason": f"no catalogued mistake explains the samples (none of their exact laws fits){untried}{guess}"}
    best = fitting[0][2]
    ties = [c[2]["id"] for c in fitting[1:] if c[0] == fitting[0][0]]
    also = f" (its law equals that of {', '.join(ties)} here)" if ties else ""
    return {"named": best, "computed": True, "candidates": listed, "closest": None,
            "reason": (f"the exact law of {best['id']} under the schedule {best['schedule']} ({best['schedule_rule']}) "
                       f"fits the samples (p = {best['p_value']:.3g} > alpha) and explains them better than the "
                       f"target and every other catalogued mistake{also}{untried}")}


def _ratio_text(ratio: float | None) -> str:
    """A log-likelihood ratio in words (``None``: the target gives some sample probability 0)."""
    return "infinite" if ratio is None else f"{ratio:.4g}"


# ---------------------------------------------------------------- the grade


def _label(config: Config, y: int) -> str | None:
    return None if y == END else config.vocab[y]


def _row_json(config: Config, test: tuple, counts: dict, law, pools: dict) -> dict:
    kind, row, statistic, dof, p, adjusted = test
    out = {"test": kind, "position": None, "context": None, "statistic": statistic, "dof": dof,
           "p_value": p, "adjusted_p_value": adjusted, "over_represented": [], "under_represented": []}
    if row is None:
        return out
    t, c = row
    out["position"], out["context"] = t, None if c is None else config.vocab[c]
    if kind == "pooled":
        cell, allowed = pools[c], law((0, c))
    else:
        cell, allowed = counts[row], law(row)
    n = sum(cell[y] for y in allowed)
    residuals = [((cell[y] - n * p) / sqrt(n * p), y) for y, p in sorted(allowed.items())]
    share = [{"token": _label(config, y), "observed": cell[y], "expected": n * allowed[y], "residual": r}
             for r, y in sorted(residuals, key=lambda x: (-x[0], x[1]))]
    out["over_represented"] = [s for s in share if s["residual"] > 0][:TOP]
    out["under_represented"] = [s for s in reversed(share) if s["residual"] < 0][:TOP]
    return out


def _reason(lengths: dict, impossible: list, conclusive: bool, worst: dict | None, alpha: float,
            config: Config) -> str | None:
    if lengths["message"]:
        return "Incomplete sessions: " + lengths["message"]
    if impossible:
        (t, c), y, k = impossible[0]
        after = "the start" if c is None else repr(config.vocab[c])
        what = "the session stops" if y == END else f"token {config.vocab[y]!r}"
        return (f"Impossible under the target: {what} at position {t} after {after} ({k} samples); "
                f"{len(impossible)} impossible outcome(s) in all.")
    if not conclusive:
        return "Inconclusive: too few samples for any test with at least one degree of freedom."
    if worst is not None and worst["adjusted_p_value"] <= alpha:
        after = "the start" if worst["context"] is None else repr(worst["context"])
        where = ("every row together" if worst["test"] == "global" else "the session lengths" if worst["test"] == "length"
                 else f"position {worst['position']} after {after}" if worst["test"] == "row"
                 else f"every sparse position after {after}")
        return (f"The samples deviate from the target at {where}: chi-square {worst['statistic']:.4g} with "
                f"{worst['dof']} dof, Holm-adjusted p = {worst['adjusted_p_value']:.3g} <= alpha = {alpha}.")
    return None


def _verdict(config: Config, family: dict, counts: dict, law, lengths: dict, conclusive: bool,
             alpha: float) -> tuple[dict | None, str | None]:
    """``(most deviating row as JSON or None, reason or None when the samples pass)``: the most
    deviating row (or pooled row, or the lengths) is the test of smallest p-value; the test that
    fails the family the one of smallest adjusted p-value (the global test only when no row is
    smaller), and a failing global test names the most deviating row too."""
    rows = [t for t in family["tests"] if t[0] != "global"]
    worst_test = min(rows, key=lambda t: (t[4], t[5]), default=None)
    failing = min(family["tests"], key=lambda t: (t[5], t[0] == "global", t[4]), default=None)
    worst = None if worst_test is None else _row_json(config, worst_test, counts, law, family["pools"])
    reason = _reason(lengths, family["impossible"], conclusive,
                     None if failing is None else _row_json(config, failing, counts, law, family["pools"]), alpha, config)
    if reason and failing is not None and failing[0] == "global" and worst is not None and worst["position"] is not None:
        after = "the start" if worst["context"] is None else repr(worst["context"])
        reason += f" The most deviating row: position {worst['position']} after {after}."
    return worst, reason


def _mistake(config: Config, counts: dict, law, alpha: float, has_draft: bool) -> dict:
    """The catalogued mistake named for failing samples (:func:`name_mistake` over
    :func:`mistake_laws`)."""
    skipped: list = []
    laws, why_not = mistake_laws(config, has_draft, skipped)
    return name_mistake(counts, laws, log_likelihood(counts, law), alpha, True, why_not, skipped)


def grade_samples(payload: Any) -> dict:
    """Grade whole sampled sessions against the target's law (see the module docstring).

    ``payload``: ``{"config": settings (mode speculative or autoregressive; ``draft`` and
    ``seed`` optional), "samples": [[label, ...], ...], "alpha": family-wise error rate
    (optional, default 0.001), "counters": {"accepted", "draft_steps"} (optional: asks for the
    acceptance rate, which needs ``config.draft``)}``.

    Returns ``{"passed", "reason", "samples", "alpha", "lengths", "conclusive", "tests",
    "untested", "p_value", "impossible", "most_deviating", "mistake", "acceptance"}``
    (docs/grading.md). Raises :class:`InvalidInput` (HTTP 422) naming each bad field."""
    config, has_draft, alpha, samples, counters = _parse(payload)
    lengths = check_lengths(samples, config)
    counts = transition_counts(samples)
    law = reference_law(config)  # the target's, or a lossy tree's SPEC 12 law
    lengths_law = length_test(samples, config) if not lengths["message"] and not is_lossy(config) else None
    family = family_test(counts, law, lengths_law)
    conclusive = any(t[0] in ("row", "pooled", "length") for t in family["tests"])
    worst, reason = _verdict(config, family, counts, law, lengths, conclusive, alpha)
    passed = reason is None
    mistake = _mistake(config, counts, law, alpha, has_draft) if not passed else \
        {"named": None, "computed": False, "reason": "the samples pass", "candidates": [], "closest": None}
    if reason is not None:  # not passed
        named = mistake["named"]
        reason += (f" Likely mistake: {named['title']} [{named['id']}]. Hint: {named['hint']}" if named
                   else f" {mistake['reason'][0].upper()}{mistake['reason'][1:]}.")
    acceptance = None
    if counters is not None:
        acceptance = {**_acceptance(config, counters), "schedule": SCHEDULE}
    return {
        "passed": passed, "reason": reason, "samples": sum(samples.values()), "alpha": alpha, "lengths": lengths,
        "conclusive": conclusive, "tests": len(family["tests"]), "untested": family["untested"],
        "p_value": family["p_value"] if not family["impossible"] else 0.0,
        "impossible": [{"position": t, "context": None if c is None else config.vocab[c],
                        "token": _label(config, y), "observed": k} for (t, c), y, k in family["impossible"][:20]],
        "most_deviating": worst, "mistake": mistake, "acceptance": acceptance,
    }


__all__ = [
    "check_lengths",
    "family_test",
    "grade_samples",
    "holm",
    "law_of_rules",
    "length_test",
    "mistake_laws",
    "name_mistake",
    "reference_law",
    "row_test",
    "target_law",
    "transition_counts",
]
