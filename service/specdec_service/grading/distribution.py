"""Distribution-level grading: does a sampler produce the target's distribution?

For implementations whose random numbers differ from ours (another generator, another order of
draws), traces cannot be compared. But speculative sampling is *exact*: its output has the
target's distribution (Leviathan et al. 2023, theorem 1; Chen et al. 2023). So the first ``m``
tokens of many sampled outputs must follow the target bigram chain (SPEC section 1), stopped at
an EOS (SPEC section 6) and at the limit.

:func:`grade_distribution` compares submitted samples (or counts of output prefixes) with that
exact distribution:

- **cells** are the output prefixes of length ``m' = min(m, limit)``, or shorter ones ending
  in the EOS; a cell's probability is the product of the target's rows along it (each row the
  nearest float64 of its exact rational; a product of ``m' <= 4`` of them has relative error
  below 1e-15);
- cells whose expected count ``N * P`` is at least :data:`MIN_EXPECTED` (5, the usual rule)
  are tested one by one; every other cell of positive probability is **pooled** into one cell
  (merged into the smallest tested cell if the pool itself expects fewer than 5). Cells are
  enumerated by walking the prefix tree and pruning any prefix whose expected count is below 5
  (its extensions are too), so at most ``N / 5`` cells are enumerated, whatever ``vocab^m``;
- Pearson's **chi-square** test gives the statistic ``sum (O - E)^2 / E`` (plain Python floats,
  summed by :func:`math.fsum`), the degrees of freedom (tested cells - 1) and the p-value
  (``scipy.special.chdtrc``, the chi-square survival function of one Python float); an
  observed prefix of probability 0 is listed under ``impossible``; **passed** iff ``p_value > alpha`` (default :data:`DEFAULT_ALPHA`
  = 0.001), nothing impossible was observed, and the test is ``conclusive`` (at least one
  degree of freedom: too few samples, with every cell pooled into one, never pass);
- the **total-variation distance** ``(1/2) sum |observed share - P|`` over every cell (unpooled);
- the most **over- and under-represented** cells by standardised residual ``(O - E)/sqrt(E)``;
- the **acceptance rate** when counters are given: ``accepted / draft_steps`` against the
  expectation ``E[accepted] / E[draft_steps]`` of a session (computed by dynamic programming
  over blocks, :func:`expected_acceptance`) and the first-position rate
  ``sum_x min(p(x), q(x))`` at the empty prefix.

Every number served is the same, bit for bit, on every machine: no value goes through
BLAS (a BLAS product such as ``u @ M`` picks its summation order and fused multiply-adds by the
CPU's kernel, so its last bits differ between, say, OPENBLAS_CORETYPE=Haswell and SkylakeX).
numpy serves only elementwise arithmetic (each operation one correctly rounded IEEE 754
operation), vector-matrix products are summed in one fixed order (:func:`vecmat`), and every
other sum is :func:`math.fsum` (correctly rounded, so independent of order and of the Python
version: ``sum()`` of floats is compensated from Python 3.12 on).

Bounds: ``m`` 1..:data:`MAX_M`, at most :data:`MAX_SAMPLES` samples in all, at most
:data:`MAX_CELLS` count entries.
"""

from __future__ import annotations

import heapq
from collections import Counter
from itertools import chain, compress, repeat
from operator import contains, itemgetter
from math import fsum, sqrt
from typing import Any, Iterable, Mapping, Optional

import numpy as np

from ..budget import DISTRIBUTION_GRADING, check_grading_work
from ..engine import SPECULATIVE, Config, InvalidInput, parse_config
from ..engine.bounds import MAX_CELLS, MAX_M, MAX_SAMPLES, int_in  # noqa: F401  (MAX_CELLS, MAX_M re-exported)
from ..engine.decoders import at_limit
from .laws import decoding_rows
from .submissions import DEFAULT_ALPHA, MAX_OUTPUT, check_prefix_count, check_request, check_sample

MIN_EXPECTED = 5.0
"""Cells expecting fewer samples than this are pooled (the usual rule for chi-square)."""
TOP = 5
"""How many over- and under-represented cells are reported."""
POOLED = ("own cell", "merged into the smallest tested cell", "only cell")
"""How the pooled cell (every cell expecting fewer than 5 samples) entered the test, the
report's ``pooled_cells``: tested as one more cell; too small for that, merged into the
smallest tested cell; or the only cell (nothing expects 5 samples: the test is not
conclusive). ``None`` when nothing is pooled."""
_CHUNK = 8192


def grade_distribution(payload: Any) -> dict:
    """Grade sampled outputs against the exact target distribution of their first ``m`` tokens.

    ``payload``: ``{"config": settings (mode speculative or autoregressive), "m": 1..4,
    "samples": [[label, ...], ...]`` or ``"counts": [{"prefix": [label, ...], "count": n}, ...],
    "counters": {"accepted": a, "draft_steps": d} (optional), "alpha": 0 < alpha < 1
    (optional)}``.

    Returns ``{"passed", "m", "samples", "test", "statistic", "dof", "p_value", "alpha",
    "total_variation", "cells", "tested_cells", "pooled_cells", "pooled_expected",
    "impossible", "over_represented", "under_represented", "too_long", "reason", "acceptance"}`` (see
    ``docs/grading.md``). Raises :class:`InvalidInput` (HTTP 422) with the path of every fault.
    """
    config, m, alpha, counts, counters = _parse(payload)
    n = sum(counts.values())
    result = _test(config, m, counts, n, alpha)
    too_long = too_long_samples(payload["samples"], config) if "samples" in payload else 0
    result["too_long"] = too_long
    result["passed"] = result["passed"] and not too_long
    result["reason"] = _reason(result, too_long, config)
    result["acceptance"] = None if counters is None else _acceptance(config, counters)
    return result


def too_long_samples(samples: list, config: Config) -> int:
    """How many ``samples`` (already checked) no session can output: longer than the limit, or
    going on after their first EOS (such outputs fail the grade whatever their first
    ``m`` tokens)."""
    limit = config.limit
    if config.eos is None:
        return sum(len(s) > limit for s in samples)
    eos = config.vocab[config.eos]
    return sum(len(s) > limit or (eos in s and s.index(eos) != len(s) - 1) for s in samples)


def _reason(result: dict, too_long: int, config: Config) -> Optional[str]:
    """Why a distribution grade fails (``None`` when it passes)."""
    if result["passed"]:
        return None
    if too_long:
        return (f"{too_long} of {result['samples']} samples are longer than a session can be (more than limit = "
                f"{config.limit} tokens, or tokens after the EOS); POST /v1/grade/samples says by how much.")
    if result["impossible"]:
        return f"An impossible prefix was observed: {result['impossible'][0]['prefix']} (probability 0 under the target)."
    if not result["conclusive"]:
        return ("Inconclusive: too few samples for a test with at least one degree of freedom (every cell expects "
                "fewer than 5 samples); send more samples.")
    return (f"The first {result['length']} tokens deviate from the target: chi-square {result['statistic']:.4g} with "
            f"{result['dof']} dof, p = {result['p_value']:.3g} <= alpha = {result['alpha']}.")


# ---------------------------------------------------------------- input


def _is_mapping(x: Any) -> bool:
    """``isinstance(x, Mapping)``, with a parsed JSON object (a dict) found without the ABC's
    slow subclass check (it is asked once per count entry: up to 10^5 times a request)."""
    return type(x) is dict or isinstance(x, Mapping)


def _parse(payload: Any):
    """The checked values of a request: its top level against :data:`.submissions.DISTRIBUTION_REQUEST`
    (:func:`.submissions.check_request`), the config by the engine, then the rules no JSON Schema
    states (mode, the work budget, each entry against the vocabulary and ``min(m, limit)``,
    ``accepted <= draft_steps``). A config without ``seed`` is read with seed 0: the exact
    distribution does not depend on the seed (it only picks the random draws, SPEC section 2)."""
    check_request(payload)
    try:
        config = parse_config({"seed": 0, **payload["config"]})
    except InvalidInput as error:
        raise error.prefixed("config") from None
    if config.mode == "greedy":
        raise InvalidInput.at(("config", "mode"), "must be speculative or autoregressive: greedy decoding is "
                              "deterministic, grade its trace with POST /v1/grade")
    check_grading_work(config)
    m = int(payload["m"])  # JSON Schema counts 2.0 an integer
    alpha = float(payload.get("alpha", DEFAULT_ALPHA))
    length = min(m, config.limit)
    vocab = {label: i for i, label in enumerate(config.vocab)}
    key = "samples" if "samples" in payload else "counts"
    DISTRIBUTION_BUDGET.check(distribution_cost(len(config.vocab), length, payload[key], counts=key == "counts"),
                              pointer=f"#/{key}")
    if key == "samples":
        counts = _count_samples(payload["samples"], config, vocab, length)
    else:
        counts = _read_counts(payload["counts"], config, vocab, length)
    counters = payload.get("counters")
    if counters is not None:
        counters = {name: int(value) for name, value in counters.items()}
        if counters["accepted"] > counters["draft_steps"]:
            raise InvalidInput.at(("counters", "accepted"), "cannot exceed draft_steps")
    return config, m, alpha, counts, counters


DISTRIBUTION_BUDGET = DISTRIBUTION_GRADING
"""The work budget of one distribution grade (:mod:`specdec_service.budget`)."""


def distribution_cost(vocab: int, length: int, entries: Any, *, counts: bool) -> int:
    """The cost of grading ``entries`` (the ``samples`` list, or the ``counts`` list when
    ``counts``) over a vocabulary of ``vocab`` tokens with cells of ``length`` tokens, in
    sample units, computed before any entry is read: ``len(entries) * length`` to read them,
    plus ``5 *`` the most cells the exact distribution can enumerate, ``min(N / 5,
    vocab^length)`` for ``N`` samples (cells expecting fewer than 5 are pruned, see
    :func:`prefix_distribution`; ``N`` is the sum of the integer counts, at most
    :data:`MAX_SAMPLES`). A non-list ``entries`` costs 0 (it is refused when read)."""
    if not isinstance(entries, list):
        return 0
    if counts:
        n = sum(e["count"] for e in entries
                if _is_mapping(e) and int_in(e.get("count"), 0, MAX_SAMPLES))
    else:
        n = len(entries)
    cells = min(min(n, MAX_SAMPLES) // int(MIN_EXPECTED), vocab ** length)
    return len(entries) * length + int(MIN_EXPECTED) * cells


def _cell(tokens: list, config: Config, vocab: dict, length: int, path: tuple, exact: bool) -> tuple[int, ...]:
    """The cell of an output (``exact=False``: its first tokens) or of a given prefix (a list
    of labels, already checked against its schema); every token must be a label of the
    vocabulary, those past the cell too."""
    for i, label in enumerate(tokens):
        if label not in vocab:
            raise InvalidInput.at(path + (i,), f"{label!r} is not a token of the vocabulary")
    cell: list[int] = []
    for i, label in enumerate(tokens[:length] if not exact else tokens):
        cell.append(vocab[label])
        if cell[-1] == config.eos:
            if exact and i != len(tokens) - 1:
                raise InvalidInput.at(path, "has tokens after the EOS token")
            return tuple(cell)
    if len(cell) != length:
        what = "must hold" if exact else "has fewer than"
        raise InvalidInput.at(path, f"{what} {length} tokens (min(m, limit)) unless it ends in the EOS token")
    return tuple(cell)


def _count_samples(samples: list, config: Config, vocab: dict, length: int) -> Counter:
    """The cells of ``samples`` (1 to :data:`MAX_SAMPLES` entries, checked by
    :func:`.submissions.check_request`), each sample checked against :data:`.submissions.SAMPLE`.

    A sample fits when it is a list of 1 to ``MAX_OUTPUT`` labels of the vocabulary, at least
    ``length`` of them or ending in the EOS within them; the first sample that does not
    (:func:`first_misfit`, found in C-speed passes) is checked in full, which names its fault
    (the samples before it fit). When all fit, their cells are counted by their first ``length``
    labels (``Counter`` over the samples, in C) and each distinct prefix is then mapped to its
    cell (cut after the EOS), in the order the cells first appear, as one loop per sample would."""
    eos = config.eos
    misfit = first_misfit(samples, vocab, length, None if eos is None else config.vocab[eos])
    if misfit is not None:
        check_sample(samples[misfit], ("samples", misfit))
        _cell(samples[misfit], config, vocab, length, ("samples", misfit), exact=False)
        return _count_each(samples, config, vocab, length)  # it fits after all: never, but then read them one by one
    counts: Counter = Counter()
    token_of = vocab.__getitem__
    for prefix, count in Counter(map(tuple, map(itemgetter(slice(0, length)), samples))).items():
        cell = tuple(map(token_of, prefix))
        if eos is not None and eos in cell:
            cell = cell[:cell.index(eos) + 1]
        counts[cell] += count
    return counts


def _count_each(samples: list, config: Config, vocab: dict, length: int) -> Counter:
    """:func:`_count_samples` one sample at a time (the reference ``tests/test_grading_distribution.py``
    compares it with): each sample's cell counted, or its fault raised."""
    counts: Counter = Counter()
    eos, token_of = config.eos, vocab.__getitem__
    for i, sample in enumerate(samples):
        if isinstance(sample, list) and 0 < len(sample) <= MAX_OUTPUT:
            try:
                cell = tuple(map(token_of, sample))[:length]
            except (KeyError, TypeError):
                cell = None
            if cell is not None:
                if eos is not None and eos in cell:
                    counts[cell[:cell.index(eos) + 1]] += 1
                    continue
                if len(cell) == length:
                    counts[cell] += 1
                    continue
        check_sample(sample, ("samples", i))
        counts[_cell(sample, config, vocab, length, ("samples", i), exact=False)] += 1
    return counts


def _first_false(flags: Iterable[bool]) -> Optional[int]:
    """The index of the first false entry of ``flags`` (bools), or None."""
    flags = list(flags)
    return flags.index(False) if False in flags else None


def first_misfit(samples: list, vocab: dict, length: int, eos: Optional[str]) -> Optional[int]:
    """The index of the first sample that does not fit (see :func:`_count_samples`), or None.
    Every pass is a ``map``, ``all``, ``min`` or a set over the samples, in C, and a pass that
    finds an index runs only where a cheaper one found a fault: no Python per sample."""
    head, found = samples, []
    if not all(map(isinstance, samples, repeat(list))):
        found.append(_first_false(map(isinstance, samples, repeat(list))))
        head = samples[:found[0]]  # lists only
    lens = list(map(len, head))
    if lens and (min(lens) < length or max(lens) > MAX_OUTPUT):
        found += [_first_false(map(MAX_OUTPUT.__ge__, lens)), _short_without_eos(head, lens, length, eos)]
    found.append(_first_unknown_label(head, vocab))
    return min((i for i in found if i is not None), default=None)


def _short_without_eos(head: list, lens: list, length: int, eos: Optional[str]) -> Optional[int]:
    """The index of the first list of ``head`` (``lens`` their lengths) shorter than ``length``
    that does not hold the EOS label ``eos`` (an empty one never does), or None."""
    short = list(map(length.__gt__, lens))
    index = list(compress(range(len(head)), short))
    if eos is None:
        return index[0] if index else None
    first = _first_false(map(contains, compress(head, short), repeat(eos)))
    return None if first is None else index[first]


def _first_unknown_label(head: list, vocab: dict) -> Optional[int]:
    """The index of the first list of ``head`` holding anything but a label of ``vocab`` (an
    unknown string, a number, an unhashable list or object), or None: the set of all the labels
    against the vocabulary, then the first list that meets the unknown ones."""
    unhashable = None
    try:
        labels = set(chain.from_iterable(head))
    except TypeError:  # a list or an object among the labels: only strings before the first one
        unhashable = _first_false(map(all, map(map, repeat(isinstance), head, repeat(repeat(str)))))
        head = head[:unhashable]
        labels = set(chain.from_iterable(head))
    unknown = labels - vocab.keys()
    return _first_false(map(unknown.isdisjoint, head)) if unknown else unhashable


def _read_counts(entries: list, config: Config, vocab: dict, length: int) -> Counter:
    """The cells of ``counts`` (1 to :data:`MAX_CELLS` entries, checked by
    :func:`.submissions.check_request`), each entry checked against :data:`.submissions.PREFIX_COUNT`."""
    counts: Counter = Counter()
    eos, token_of = config.eos, vocab.__getitem__
    for i, entry in enumerate(entries):
        # Fast path, accepting only what the full check accepts: {"prefix": [length known
        # labels without EOS, or fewer ending in the EOS], "count": 0..MAX_SAMPLES}, not seen
        # before; anything else is checked in full.
        if type(entry) is dict and len(entry) == 2:
            prefix, count = entry.get("prefix"), entry.get("count")
            if type(count) is int and 0 <= count <= MAX_SAMPLES and type(prefix) is list and 0 < len(prefix) <= length:
                try:
                    cell = tuple(map(token_of, prefix))
                except (KeyError, TypeError):
                    cell = None
                if cell is not None and cell not in counts and (
                        cell[-1] == eos and eos not in cell[:-1] if eos in cell else len(cell) == length):
                    counts[cell] = count
                    continue
        path = ("counts", i)
        check_prefix_count(entry, path)
        cell = _cell(entry["prefix"], config, vocab, length, path + ("prefix",), exact=True)
        if cell in counts:
            raise InvalidInput.at(path + ("prefix",), "is listed twice")
        counts[cell] = int(entry["count"])
    total = sum(counts.values())
    if not 1 <= total <= MAX_SAMPLES:
        raise InvalidInput.at(("counts",), f"the counts must sum to 1 to {MAX_SAMPLES}, not {total}")
    return +counts


# ---------------------------------------------------------------- the exact distribution


def _rows(config: Config, side: str) -> np.ndarray:
    """The rows of the config's ``side`` ("target" or "draft") as a (V + 1) x V float array; row V
    is the start row. The rows a decoder reads (:func:`.laws.decoding_rows`: processed when the
    config sets sampling, SPEC 9)."""
    after = getattr(decoding_rows(config), side)
    return np.array([after(c).floats for c in range(len(config.vocab))] + [after(None).floats], dtype=np.float64)


def cell_probability(config: Config, cell: tuple[int, ...]) -> float:
    """The target probability of one cell (a product of rows along it, SPEC section 2)."""
    target = decoding_rows(config).target
    prob = 1.0
    context: Optional[int] = None
    for token in cell:
        prob *= target(context).floats[token]
        context = token
    return prob


def prefix_distribution(config: Config, length: int, threshold: float = 0.0) -> dict[tuple[int, ...], float]:
    """Every cell (prefix of ``length`` tokens, or shorter ending in the EOS) whose target
    probability is positive and at least ``threshold``, with that probability.

    Prefixes below ``threshold`` are pruned with their extensions, so at most
    ``1 / threshold`` cells come back (``threshold=0`` enumerates everything: use only for
    small vocabularies)."""
    rows = _rows(config, "target")
    vocab = rows.shape[1]
    eos = config.eos
    cells: dict[tuple[int, ...], float] = {}
    prefixes: list[tuple[int, ...]] = [()]
    probs = np.ones(1)
    lasts = np.array([vocab])  # the start row
    for depth in range(1, length + 1):
        new_prefixes, new_probs, new_lasts = [], [], []
        for start in range(0, len(prefixes), _CHUNK):
            block = probs[start:start + _CHUNK, None] * rows[lasts[start:start + _CHUNK]]
            keep = np.nonzero((block > 0) & (block >= threshold))
            for r, t, pr in zip(keep[0].tolist(), keep[1].tolist(), block[keep].tolist()):
                prefix = prefixes[start + r] + (t,)
                if depth == length or t == eos:
                    cells[prefix] = pr
                else:
                    new_prefixes.append(prefix)
                    new_probs.append(pr)
                    new_lasts.append(t)
        prefixes, probs, lasts = new_prefixes, np.array(new_probs), np.array(new_lasts, dtype=np.int64)
        if not prefixes:
            break
    return cells


# ---------------------------------------------------------------- the test


def chi_square(observed: list[int], expected: list[float]) -> tuple[float, float]:
    """Pearson's chi-square test of ``observed`` counts (non-negative integers) against
    ``expected`` counts (positive floats, as many, at least two): ``(statistic, p_value)``.

    The expected counts are first scaled to the observed total (as ``scipy.stats.chisquare``
    requires); the statistic is ``sum (O - E)^2 / E`` in Python floats summed by
    :func:`math.fsum`, the p-value the chi-square survival function with ``len - 1`` degrees of
    freedom (``scipy.special.chdtrc``, a scalar function of one float: no BLAS, no reduction),
    so both are the same bits on every CPU. ``(0.0, 1.0)`` when nothing was observed."""
    from scipy.special import chdtrc

    total = sum(observed)
    if total == 0:
        return 0.0, 1.0
    mass = fsum(expected)
    if mass > 0:
        scale = total / mass
        expected = [e * scale for e in expected]
    statistic = fsum((o - e) * (o - e) / e for o, e in zip(observed, expected))  # no pow(): one rounding
    return statistic, float(chdtrc(len(observed) - 1, statistic))


def _test(config: Config, m: int, counts: Counter, n: int, alpha: float) -> dict:
    length = min(m, config.limit)
    labels = config.vocab
    enumerated = prefix_distribution(config, length, MIN_EXPECTED / n)
    tested = sorted(enumerated, key=lambda c: -enumerated[c])
    observed = [counts.get(c, 0) for c in tested]
    expected = [n * enumerated[c] for c in tested]
    pooled_mass = max(0.0, 1.0 - fsum(enumerated.values()))
    others = {c: k for c, k in counts.items() if c not in enumerated}
    other_probs = {c: cell_probability(config, c) for c in others}
    impossible = sorted((c for c, p in other_probs.items() if p == 0.0), key=lambda c: -others[c])
    pooled_observed = sum(k for c, k in others.items() if other_probs[c] > 0)
    pooled_expected = n * pooled_mass
    pooled_cells = None  # one of POOLED: how the pooled cell entered the test
    if pooled_expected >= MIN_EXPECTED:
        observed.append(pooled_observed)
        expected.append(pooled_expected)
        pooled_cells = "own cell"
    elif pooled_expected > 1e-9 * n or pooled_observed:
        if expected:  # merge the small pool into the smallest tested cell
            observed[-1] += pooled_observed
            expected[-1] += pooled_expected
            pooled_cells = "merged into the smallest tested cell"
        else:
            observed, expected = [pooled_observed], [pooled_expected]
            pooled_cells = "only cell"
    dof = max(len(observed) - 1, 0)
    statistic, p_value = chi_square(observed, expected) if dof else (0.0, 1.0)

    # Total variation over all cells, and the residual ranking.
    tv = 0.0
    ranked = []
    for c in tested:
        o, p = counts.get(c, 0), enumerated[c]
        tv += abs(o / n - p)
        ranked.append((c, o, p))
    other_mass_observed = 0.0
    for c, o in others.items():
        p = other_probs[c]
        tv += abs(o / n - p)
        other_mass_observed += p
        if p > 0:
            ranked.append((c, o, p))
    tv += max(0.0, pooled_mass - other_mass_observed)
    tv /= 2

    def cell_json(c, o, p):
        e = n * p
        return {"prefix": [labels[t] for t in c], "observed": o, "expected": e, "observed_share": o / n,
                "expected_share": p, "residual": (o - e) / sqrt(e)}

    # The TOP cells at each end of the cells sorted (stably) by residual, without building the
    # others: under = the first TOP in that order, over = the last TOP, last first.
    keyed = [((o - n * p) / sqrt(n * p), i) for i, (c, o, p) in enumerate(ranked)]
    over = [cell_json(*ranked[i]) for r, i in heapq.nsmallest(TOP, keyed, key=lambda x: (-x[0], -x[1])) if r > 0]
    under = [cell_json(*ranked[i]) for r, i in heapq.nsmallest(TOP, keyed) if r < 0]
    # With every cell pooled into one there is nothing to test, unless the target really has a
    # single possible prefix: too few samples never pass.
    conclusive = dof >= 1 or (len(tested) == 1 and pooled_mass == 0.0)
    return {
        "passed": conclusive and p_value > alpha and not impossible,
        "conclusive": conclusive,
        "m": m,
        "length": length,
        "samples": n,
        "test": "chi-square",
        "statistic": statistic,
        "dof": dof,
        "p_value": p_value,
        "alpha": alpha,
        "total_variation": tv,
        "cells": len(tested) + len(others),
        "tested_cells": len(tested),
        "pooled_cells": pooled_cells,
        "pooled_expected": pooled_expected,
        "min_expected": MIN_EXPECTED,
        "impossible": [{"prefix": [labels[t] for t in c], "observed": others[c]} for c in impossible[:20]],
        "over_represented": over,
        "under_represented": under,
    }


# ---------------------------------------------------------------- acceptance


def expected_acceptance(config: Config) -> Optional[dict]:
    """Exact expectations of a whole speculative session (SPEC sections 4, 6, 7), by dynamic
    programming over blocks: ``{"accepted": E[accepted], "draft_steps": E[draft_steps],
    "rate": their ratio}``, or ``None`` outside mode speculative.

    A block from context c accepts x with probability min(p_c(x), q_c(x)) (drafted and
    accepted), and rejects with 1 - sum_x min(p_c(x), q_c(x)), then commits y with probability
    max(p_c(y) - q_c(y), 0) (the normalised residual times the rejection probability);
    all accepted below the limit adds a bonus from p. An EOS committed ends the session;
    drafting stops after a drafted EOS (a chain of the draft rows). The width k of a block and
    the no-bonus-at-the-limit rule are the engine's own (:mod:`specdec_service.engine.decoders`).
    Floats (rows as nearest float64), O(limit * width * V^2), in one fixed order of operations:
    the vector-matrix products by :func:`vecmat`, each total one :func:`math.fsum` of all its
    terms, so the result is the same bits on every CPU (no BLAS).
    """
    if config.mode != "speculative":
        return None
    P, Q = _rows(config, "target"), _rows(config, "draft")
    V = P.shape[1]
    A = np.minimum(P, Q)          # (V+1) x V: drafted x and accepted, from context c
    R = np.maximum(P - Q, 0.0)    # rejected, then corrected to y
    eos = config.eos
    Qd = Q.copy()
    if eos is not None:
        Qd[:, eos] = 0.0          # drafting stops after a drafted EOS
    limit = config.limit
    pi = np.zeros((limit + 1, V + 1))
    pi[0, V] = 1.0
    accepted: list[float] = []    # every term of E[accepted] and E[draft_steps], summed once by fsum
    drafted: list[float] = []
    for L in range(limit):
        v = pi[L]
        if not v.any():
            continue
        k = SPECULATIVE.proposal.room(config, L)
        # Expected draft steps: proposals drafted until k or a drafted EOS.
        u = v.copy()
        for i in range(k):
            drafted += u.tolist()
            u = np.concatenate([vecmat(u, Qd), [0.0]])
        for i in range(1, k + 1):
            # reject at step i: land at L + i with the correction token
            landed = vecmat(v, R)
            _land(pi, landed, L + i, eos, limit)
            nxt = vecmat(v, A)
            accepted += nxt.tolist()
            if eos is not None:
                nxt[eos] = 0.0    # an accepted EOS ends the session
            v = np.concatenate([nxt, [0.0]])
        if not at_limit(SPECULATIVE.bonus, config, L, k):
            _land(pi, vecmat(v, P), L + k + 1, eos, limit)
    total_accepted, total_drafted = fsum(accepted), fsum(drafted)
    return {"accepted": total_accepted, "draft_steps": total_drafted,
            "rate": total_accepted / total_drafted if total_drafted else None}


def vecmat(u: np.ndarray, M: np.ndarray) -> np.ndarray:
    """``u @ M`` for a vector ``u`` of ``n`` floats and an ``n x V`` float matrix, without BLAS
    and in one order on every CPU: each product ``u[i] * M[i, j]`` is one correctly rounded IEEE 754
    multiplication (numpy's elementwise multiply), and column ``j`` is summed from row 0 to row
    ``n - 1``, one correctly rounded addition at a time (``np.add.accumulate`` defines each
    partial sum from the previous one, so no kernel may reorder or fuse them). This equals the
    plain Python ``((u[0]*M[0][j] + u[1]*M[1][j]) + u[2]*M[2][j]) + ...`` bit for bit
    (``tests/test_grading_distribution.py``); ``u @ M`` would call BLAS (gemv), whose blocking and
    fused multiply-adds depend on the CPU's kernel."""
    return np.add.accumulate(u[:, None] * M, axis=0)[-1]


def _land(pi: np.ndarray, mass: np.ndarray, length: int, eos: Optional[int], limit: int) -> None:
    if length >= limit:
        return
    if eos is not None:
        mass = mass.copy()
        mass[eos] = 0.0
    pi[length, :-1] += mass


def _acceptance(config: Config, counters: dict) -> dict:
    accepted, steps = counters["accepted"], counters["draft_steps"]
    p, q = config.target.start, config.draft.start
    first = sum(min(a * q.total, b * p.total) for a, b in zip(p.weights, q.weights)) / (p.total * q.total)
    expected = expected_acceptance(config)
    return {
        "accepted": accepted,
        "draft_steps": steps,
        "observed_rate": accepted / steps if steps else None,
        "expected_rate": None if expected is None else expected["rate"],
        "first_position_rate": first if config.mode == "speculative" else None,
    }
