"""Students' samplers with their own random numbers (issue 20), one planted mistake each: written
from the papers (Leviathan et al. 2023; Sun et al. 2025, block verification; Miao et al. 2024,
SpecInfer), in floats, not from specdec's draw order. ``tests/test_grading_laws.py`` grades
their samples and expects the mistake named.

``target`` and ``draft`` are model objects as the harness passes them (``.vocab`` and
``model(prefix)`` -> a row of floats); ``rng`` is a seeded ``random.Random``; each function
returns one whole session (a list of labels). ``mistake`` is a catalogue id ("" = correct).
"""


def pick(row, u):
    """The first token whose cumulative probability exceeds ``u`` (falls through to the last)."""
    acc = 0.0
    for i, p in enumerate(row):
        acc += p
        if u < acc:
            return i
    return len(row) - 1


def _residual(p, q, w=1.0):
    r = [max(w * a - b, 0.0) for a, b in zip(p, q)]
    total = sum(r)
    return [x / total for x in r]


def _draft(draft, out, start_row, k, eos, vocab, rng, argmax=False):
    proposal, rows = [], []
    for i in range(k):
        q = start_row if i == 0 and start_row is not None else draft(out + proposal)
        x = vocab[q.index(max(q)) if argmax else pick(q, rng.random())]
        proposal.append(x)
        rows.append(q)
        if x == eos:
            break
    return proposal, rows


def _correction(p, q, u, rng, mistake):
    if mistake == "resample-from-p":
        return pick(p, rng.random())
    if mistake == "reused-rejection-draw":
        return pick(_residual(p, q), u)
    if mistake == "residual-not-clipped":
        diff = [a - b for a, b in zip(p, q)]
        positive = sum(x for x in diff if x > 0)
        return pick([x / positive for x in diff], rng.random())
    return pick(_residual(p, q), rng.random())


def room(schedule, width, limit, length):
    """Proposals a block drafts after ``length`` tokens under a block schedule of real code:
    ``spec`` (min(width, limit - L)), ``last-from-target`` (Hugging Face: min(width, limit - L -
    1), the target gives the last token), ``target-first`` (llama.cpp: no proposals before the
    first token, which the target samples)."""
    if schedule == "target-first" and length == 0:
        return 0
    if schedule == "last-from-target":
        return max(0, min(width, limit - length - 1))
    return min(width, limit - length)


def speculative_decode(target, draft, width, limit, eos, rng, mistake="", schedule="spec"):
    """SPEC 4 with one of: keep-after-rejection, draft-from-discarded, reused-rejection-draw,
    residual-not-clipped, resample-from-p, argmax-proposals-tested-as-samples; blocks of ``schedule`` (:func:`room`)."""
    vocab, out, rejected = target.vocab, [], None
    while len(out) < limit and (not out or out[-1] != eos):
        k = room(schedule, width, limit, len(out))
        start = draft(out[:-1] + [rejected]) if mistake == "draft-from-discarded" and rejected and out else None
        proposal, rows = _draft(draft, out, start, k, eos, vocab, rng, mistake == "argmax-proposals-tested-as-samples")
        rejected, tail = None, []
        for i, label in enumerate(proposal):
            p, q, x = target(out), rows[i], vocab.index(label)
            u = rng.random()
            if u < p[x] / q[x]:
                out.append(label)
                continue
            out.append(vocab[_correction(p, q, u, rng, mistake)])
            rejected = label
            tail = proposal[i + 1:] if mistake == "keep-after-rejection" else []
            break
        else:
            if len(out) < limit and (not out or out[-1] != eos):
                out.append(vocab[pick(target(out), rng.random())])
        out += tail
    return out


def _block_passed(ps, qs, proposal, w, vocab, rng, mistake):
    """Which prefixes pass: SPEC 10's eta_i < h_i, #7808's thresholds from the rows one position
    too early (``block-thresholds-row-early``), or MagicMTP's cumprod(min(1, p/q)) >=
    cumprod(u) (``block-cumprod-*``)."""
    if mistake.startswith("block-cumprod"):
        a, product, passed = 1.0, 1.0, []
        for p, q, label in zip(ps, qs, proposal):
            x = vocab.index(label)
            a *= min(1.0, p[x] / q[x])
            product *= rng.random()
            passed.append(product <= a)
        return passed
    h = []
    for i in range(1, len(proposal)):
        row = i - 1 if mistake == "block-thresholds-row-early" else i
        s = sum(max(w[i] * a - b, 0.0) for a, b in zip(ps[row], qs[row]))
        h.append(1.0 if s + 1 - w[i] <= 0 else s / (s + 1 - w[i]))
    if proposal:
        h.append(w[-1])
    return [rng.random() < hi for hi in h]


def _block_correction(p, q, w, rng, mistake):
    """The correction after tau < k: the residual scaled by w_tau (unscaled for the first
    MagicMTP and block-unscaled-residual); vllm-ascend's arg max gives token 0 when it has no mass."""
    scale = 1.0 if mistake in ("block-unscaled-residual", "block-cumprod-acceptance") else w
    r = [max(scale * a - b, 0.0) for a, b in zip(p, q)]
    if sum(r) <= 0 and mistake in ("block-cumprod-acceptance", "block-cumprod-scaled-residual",
                                    "block-thresholds-row-early"):
        return 0
    return pick(_residual(p, q, scale), rng.random())


def block_decode(target, draft, width, limit, eos, rng, mistake="", schedule="spec"):
    """SPEC 10 (Sun et al. 2025, algorithm 2) with one of: block-first-failing-eta,
    block-unscaled-residual, block-cumprod-acceptance, block-cumprod-scaled-residual,
    block-thresholds-row-early; blocks of ``schedule`` (:func:`room`)."""
    vocab, out = target.vocab, []
    while len(out) < limit and (not out or out[-1] != eos):
        k = room(schedule, width, limit, len(out))
        proposal, qs = _draft(draft, out, None, k, eos, vocab, rng)
        ps = [target(out + proposal[:i]) for i in range(len(proposal))]
        w = [1.0]
        for p, q, label in zip(ps, qs, proposal):
            x = vocab.index(label)
            w.append(min(1.0, w[-1] * p[x] / q[x]))
        passed = _block_passed(ps, qs, proposal, w, vocab, rng, mistake)
        if mistake == "block-first-failing-eta":
            tau = passed.index(False) if False in passed else len(passed)
        else:
            tau = max((i + 1 for i, ok in enumerate(passed) if ok), default=0)
        out += proposal[:tau]
        if tau == len(proposal):
            if len(out) < limit and (not out or out[-1] != eos):
                out.append(vocab[pick(target(out), rng.random())])
            continue
        out.append(vocab[_block_correction(ps[tau], qs[tau], w[tau], rng, mistake)])
    return out


def _tree_depth(p, q, chains, cands, depth, rng, mistake, vocab):
    r = p
    for j in cands:
        x = vocab.index(chains[j][depth])
        row = q if mistake == "tree-tested-against-draft-row" else r
        if rng.random() < row[x] / q[x]:
            same = [i for i in cands if chains[i][depth] == chains[j][depth]]
            return chains[j][depth], (list(cands) if mistake == "tree-disagreeing-chains-continue" else same), r
        if mistake != "tree-residual-not-updated":
            r = _residual(r, q)
    return None, [], r


def _chains(target, draft, out, k, drafts, eos, rng, mistake):
    vocab = target.vocab
    if mistake != "tree-shared-draws":
        return [_draft(draft, out, None, k, eos, vocab, rng)[0] for _ in range(drafts)]
    us = [rng.random() for _ in range(k)]
    chain = []
    for u in us:
        chain.append(vocab[pick(draft(out + chain), u)])
        if chain[-1] == eos:
            break
    return [list(chain) for _ in range(drafts)]


def tree_decode(target, draft, width, drafts, limit, eos, rng, mistake=""):
    """SPEC 11 (several drafts, verified depth by depth against the recursive residual) with one
    of: tree-residual-not-updated, tree-tested-against-draft-row,
    tree-disagreeing-chains-continue, tree-shared-draws, tree-bonus-while-a-chain-goes-on."""
    vocab, out = target.vocab, []
    while len(out) < limit and (not out or out[-1] != eos):
        k = min(width, limit - len(out))
        chains = _chains(target, draft, out, k, drafts, eos, rng, mistake)
        end = min(map(len, chains)) if mistake == "tree-bonus-while-a-chain-goes-on" else k
        alive, depth, corrected = list(range(drafts)), 0, False
        while depth < end:
            cands = [j for j in alive if len(chains[j]) > depth]
            if not cands:
                break
            token, alive, r = _tree_depth(target(out), draft(out), chains, cands, depth, rng, mistake, vocab)
            if token is None:
                out.append(vocab[pick(r, rng.random())])
                corrected = True
                break
            out.append(token)
            depth += 1
            if token == eos:
                break
        if not corrected and len(out) < limit and out[-1] != eos:
            out.append(vocab[pick(target(out), rng.random())])
    return out


def process(row, sampling):
    """SPEC 9 in floats, as a student writes it: temperature, top-k, top-p, min-p, each
    renormalising (``sampling`` a dict, or None / {} for none)."""
    if not sampling:
        return list(row)
    r = list(row)
    t = sampling.get("temperature")
    if t == 0:
        best = r.index(max(r))
        r = [1.0 if i == best else 0.0 for i in range(len(r))]
    elif t is not None:
        r = [x ** (1.0 / t) if x > 0 else 0.0 for x in r]
    r = _normalise(r)
    if sampling.get("top_k") is not None and sampling["top_k"] < len(r):
        kth = sorted(r, reverse=True)[sampling["top_k"] - 1]
        r = _normalise([x if x >= kth else 0.0 for x in r])
    if sampling.get("top_p") is not None:
        keep, before = set(), 0.0
        for i in sorted(range(len(r)), key=lambda i: (-r[i], i)):
            if before < sampling["top_p"]:
                keep.add(i)
            before += r[i]
        r = _normalise([x if i in keep else 0.0 for i, x in enumerate(r)])
    if sampling.get("min_p") is not None:
        top = max(r)
        r = _normalise([x if x >= sampling["min_p"] * top else 0.0 for x in r])
    return r


def _normalise(r):
    total = sum(r)
    return [x / total for x in r]


class Processed:
    """A model object whose rows are processed (SPEC 9): what a sampler with sampling
    parameters decodes from."""

    def __init__(self, model, sampling):
        self.vocab, self.model, self.sampling = model.vocab, model, sampling

    def __call__(self, prefix):
        return process(self.model(prefix), self.sampling)
