"""A student's implementation of SPEC.md, written from docs/SPEC.md and docs/trace-format.md alone
(it imports nothing of specdec): reads one config as JSON on stdin, prints its trace on stdout.
Every mode, mode tree (SPEC 11) included, and the sampling parameters of SPEC 9.

    python3 student.py [--plant MISTAKE]

``--plant`` plants one mistake, for the tests of ``specdec grade --exec``: ``no-bonus``,
``resample-from-p``, ``skip-draw`` (no draw when p >= q), ``ties-last`` (greedy argmax ties go to
the last token), or a misbehaving program: ``sleep``, ``crash``, ``junk``, ``empty``,
``chatty`` (prints a line before the trace), ``verify-first`` (a mistake outside the
catalogue: in mode speculative the k verification draws are taken before the k draft draws), ``wrong-seed`` (echoes seed + 1), ``crash-greedy``
(crashes in mode greedy only), ``malformed-autoregressive`` (a block position that is not a
number, in mode autoregressive only).
"""

import json
import sys
import time
from decimal import Decimal, localcontext
from fractions import Fraction

PLANT = sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--plant" else None
MASK = 2**64 - 1
TOY = {"vocab": ["A", "B", "C"], "start": ["0.5", "0.3", "0.2"],
       "next": {"A": ["0.2", "0.6", "0.2"], "B": ["0.55", "0.15", "0.3"], "C": ["0.25", "0.25", "0.5"]}}
BUILTIN = {"toy": TOY, "aligned": TOY,
           "biased": {"vocab": ["A", "B", "C"], "start": ["0.8", "0.15", "0.05"],
                      "next": {t: ["0.8", "0.15", "0.05"] for t in "ABC"}}}


def draw(seed, n):
    z = (seed + (n + 1) * 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    z = z ^ (z >> 31)
    return {"position": n, "u": (z >> 11) * 2.0**-53, "hex": f"{z:016x}"}


def sample(d, u):
    total = Fraction(0)
    for i, p in enumerate(d):
        total += p
        if Fraction(u) < total:
            return i
    return len(d) - 1


def argmax(d):
    best = 0
    for i, p in enumerate(d):
        if p > d[best] or (PLANT == "ties-last" and p == d[best]):
            best = i
    return best


def exact_str(x):
    return str(x)


def block_verify(proposal, last, target, draftm, vocab, seed, n, label):
    """SPEC 10: weights, thresholds, all k eta draws, tau the last passing; returns the records,
    tau, the correction (or None), the accepted proposals and the next position."""
    ctxs = [last] + proposal[:-1]
    ps, qs = [target[c] for c in ctxs], [draftm[c] for c in ctxs]
    w = [Fraction(1)]
    for p, q, tok in zip(ps, qs, proposal):
        w.append(min(Fraction(1), w[-1] * p[tok] / q[tok]))
    k, h = len(proposal), []
    for i in range(1, k):
        s = sum((max(w[i] * a - b, Fraction(0)) for a, b in zip(ps[i], qs[i])), Fraction(0))
        h.append(Fraction(1) if s + 1 - w[i] == 0 else s / (s + 1 - w[i]))
    h.append(w[k])
    etas = []
    for _ in proposal:
        etas.append(draw(seed, n))
        n += 1
    below = [Fraction(d["u"]) < hi for d, hi in zip(etas, h)]
    tau = max((i + 1 for i, b in enumerate(below) if b), default=0)
    records = [{"index": i + 1, "context": label(ctxs[i]), "token": vocab[tok], "p": floats(ps[i]), "q": floats(qs[i]),
                "p_token": float(ps[i][tok]), "q_token": float(qs[i][tok]), "ratio": float(ps[i][tok] / qs[i][tok]),
                "weight": float(w[i + 1]), "weight_exact": exact_str(w[i + 1]), "threshold": float(h[i]),
                "threshold_exact": exact_str(h[i]), "draw": etas[i], "below_threshold": below[i], "accepted": i < tau}
               for i, tok in enumerate(proposal)]
    correction = None
    if tau < k:
        r = [max(w[tau] * a - b, Fraction(0)) for a, b in zip(ps[tau], qs[tau])]
        r = [x / sum(r) for x in r]
        d = draw(seed, n)
        n += 1
        correction = {"index": tau + 1, "context": label(ctxs[tau]), "weight": float(w[tau]),
                      "weight_exact": exact_str(w[tau]), "distribution": floats(r), "draw": d,
                      "token": vocab[sample(r, d["u"])]}
    return records, tau, correction, proposal[:tau], n


def model(spec):
    spec = BUILTIN[spec] if isinstance(spec, str) else spec
    vocab = spec["vocab"]

    def row(values):
        exact = [Fraction(Decimal(str(v))) for v in values]
        return [x / sum(exact) for x in exact]
    rows = {None: row(spec["start"])}
    rows.update({vocab.index(t): row(r) for t, r in spec["next"].items()})
    return vocab, rows


def normalised(row):
    total = sum(row)
    return [x / total for x in row]


def power(x, e):
    """x ** e (SPEC 9.1): exact for an integer exponent, else the float64 nearest to the real value
    (60 significant digits, then rounded once), read back exactly."""
    if e.denominator == 1 or x in (0, 1):
        return x ** e.numerator if e.denominator == 1 else x
    with localcontext() as ctx:
        ctx.prec = 60
        value = (Decimal(e.numerator) / Decimal(e.denominator) * (Decimal(x.numerator) / Decimal(x.denominator)).ln()).exp()
    return Fraction(float(value))


def process(row, sampling):
    """SPEC 9: temperature, top-k, top-p, min-p, in that order, each renormalising exactly."""
    exact = {k: Fraction(Decimal(str(v))) for k, v in sampling.items() if k in ("temperature", "top_p", "min_p")}
    if "temperature" in exact:
        t = exact["temperature"]
        if t == 0:
            best = max(range(len(row)), key=lambda i: (row[i], -i))
            row = [Fraction(int(i == best)) for i in range(len(row))]
        elif t != 1:
            row = normalised([power(x, 1 / t) for x in row])
    if "top_k" in sampling and sampling["top_k"] < len(row):
        kth = sorted(row, reverse=True)[sampling["top_k"] - 1]
        row = normalised([x if x >= kth else 0 for x in row])
    if "top_p" in exact:
        kept, before = [Fraction(0)] * len(row), Fraction(0)
        for i in sorted(range(len(row)), key=lambda i: -row[i]):
            if before < exact["top_p"]:
                kept[i] = row[i]
            before += row[i]
        row = normalised(kept)
    if "min_p" in exact:
        row = normalised([x if x >= exact["min_p"] * max(row) else 0 for x in row])
    return row


def floats(d):
    return [float(x) for x in d]


def residual(r, q):
    r = [max(a - b, 0) for a, b in zip(r, q)]
    return [x / sum(r) for x in r]


def tree_block(config, vocab, target, draftm, out, n):
    """SPEC 11: D chains drafted one after another, verified depth by depth against the
    recursive residual. Returns the block's fields and the next position."""
    seed, eos, limit = config["seed"], config["eos"] and vocab.index(config["eos"]), config["limit"]
    label = lambda t: None if t is None else vocab[t]  # noqa: E731
    last = out[-1] if out else None
    k = min(config["width"], limit - len(out))
    chains, steps = [], []
    for j in range(config["drafts"]):
        chain, ctx = [], last
        for i in range(k):
            q, d = draftm[ctx], draw(seed, n)
            n += 1
            tok = sample(q, d["u"])
            chain.append(tok)
            steps.append({"chain": j + 1, "index": i + 1, "context": label(ctx), "q": floats(q), "draw": d,
                          "token": vocab[tok], "drafted": True})
            if tok == eos:
                break
            ctx = tok
        chains.append(chain)
    tests, accepted, alive, ctx, correction = [], [], list(range(len(chains))), last, None
    while True:
        depth = len(accepted)
        candidates = [j for j in alive if len(chains[j]) > depth]
        if not candidates:
            break
        p, q = target[ctx], draftm[ctx]
        r, chosen, left = p, None, list(candidates)
        for j in candidates:
            y, d = chains[j][depth], draw(seed, n)
            n += 1
            ok = Fraction(d["u"]) * q[y] < r[y]
            left.remove(j)
            alive = [a for a in candidates if chains[a][depth] == y] if ok else left
            tests.append({"depth": depth + 1, "chain": j + 1, "context": label(ctx), "token": vocab[y],
                          "p": floats(p), "q": floats(q), "r": floats(r), "r_exact": [str(x) for x in r],
                          "r_token": float(r[y]), "q_token": float(q[y]), "ratio": float(r[y] / q[y]),
                          "ratio_exact": str(r[y] / q[y]), "draw": d, "accepted": ok, "alive": [a + 1 for a in alive]})
            if ok:
                chosen = y
                break
            r = residual(r, q)
        if chosen is None:
            d = draw(seed, n)
            n += 1
            correction = {"index": depth + 1, "context": label(ctx), "distribution": floats(r), "draw": d,
                          "token": vocab[sample(r, d["u"])]}
            break
        accepted.append(chosen)
        ctx = chosen
        if chosen == eos:
            break
    committed, bonus, no_bonus = list(accepted), None, None
    if correction is not None:
        committed.append(vocab.index(correction["token"]))
        no_bonus = "rejection"
    elif accepted and accepted[-1] == eos:
        no_bonus = "eos"
    elif len(out) + len(accepted) >= limit:
        no_bonus = "limit"
    elif PLANT != "no-bonus":
        d = draw(seed, n)
        n += 1
        tok = sample(target[ctx], d["u"])
        bonus = {"context": label(ctx), "p": floats(target[ctx]), "draw": d, "token": vocab[tok]}
        committed.append(tok)
    tested = {(t["chain"] - 1, t["depth"] - 1) for t in tests}
    discarded = [t for j, c in enumerate(chains) for i, t in enumerate(c) if (j, i) not in tested]
    flat = [t for c in chains for t in c]
    n_acc = len(accepted)
    counters = {"target_passes": 1, "draft_steps": len(flat), "accepted": n_acc, "rejected": len(tests) - n_acc,
                "discarded": len(discarded), "bonus_tokens": int(bonus is not None), "committed": len(committed)}
    block = {"proposal": {"tokens": [vocab[t] for t in flat], "steps": steps,
                          "chains": [[vocab[t] for t in c] for c in chains]},
             "verification": tests, "correction": correction, "discarded": [vocab[t] for t in discarded],
             "bonus": bonus, "no_bonus": no_bonus, "sample": None}
    return block, committed, counters, n


def main():
    config = json.loads(sys.stdin.read())
    if PLANT == "sleep":
        time.sleep(60)
    if PLANT == "crash" or (PLANT == "crash-greedy" and config["mode"] == "greedy"):
        print("Traceback (most recent call last):\n  File \"student.py\", line 1\nKeyError: 'width'", file=sys.stderr)
        sys.exit(3)
    if PLANT == "junk":
        print("<html>not a trace</html>")
        return
    if PLANT == "empty":
        return
    vocab, target = model(config["target"])
    _, draftm = model(config["draft"])
    sampling = config.get("sampling")
    if sampling:  # SPEC 9: p' always, q' unless the draft rows are "raw"
        target = {c: process(r, sampling) for c, r in target.items()}
        if sampling.get("draft", "processed") == "processed":
            draftm = {c: process(r, sampling) for c, r in draftm.items()}
    mode, width, seed, limit = config["mode"], config["width"], config["seed"], config["limit"]
    eos = None if config["eos"] is None else vocab.index(config["eos"])
    out, n, blocks = [], 0, []
    totals = dict.fromkeys(["target_passes", "draft_steps", "accepted", "rejected", "discarded",
                            "bonus_tokens", "committed", "draws"], 0)
    label = lambda t: None if t is None else vocab[t]  # noqa: E731
    while len(out) < limit and not (out and out[-1] == eos):
        start, prefix = n, list(out)
        last = out[-1] if out else None
        steps, proposal, verification, accepted = [], [], [], []
        correction = bonus = no_bonus = sample_rec = None
        discarded, committed = [], []
        if mode == "tree":
            tree, committed, counters, n = tree_block(config, vocab, target, draftm, out, n)
            out += committed
            counters["draws"] = n - start
            for key in totals:
                totals[key] += counters[key]
            done = "eos" if out[-1] == eos else "limit" if len(out) >= limit else None
            blocks.append({"mode": mode, "prefix": [vocab[t] for t in prefix], "position": start, **tree,
                           "committed": [vocab[t] for t in committed], "counters": counters, "next_position": n,
                           "done": done})
            continue
        if mode == "autoregressive":
            p = target[last]
            d = draw(seed, n)
            n += 1
            tok = sample(p, d["u"])
            sample_rec = {"context": label(last), "p": floats(p), "draw": d, "token": vocab[tok]}
            committed = [tok]
        else:
            ctx = last
            room = min(width, limit - len(out))
            early = PLANT == "verify-first" and mode == "speculative"
            for i in range(room):
                q = draftm[ctx]
                d = draw(seed, start + room + i if early else n) if mode in ("speculative", "block") else None
                n += d is not None
                tok = sample(q, d["u"]) if d else argmax(q)
                proposal.append(tok)
                steps.append({"index": i + 1, "context": label(ctx), "q": floats(q), "draw": d,
                              "token": vocab[tok], "drafted": True})
                if tok == eos:
                    break
                ctx = tok
            ctx = last
            tau = None
            if mode == "block":
                verification, tau, correction, accepted, n = block_verify(proposal, last, target, draftm, vocab, seed,
                                                                          n, label)
                if correction is not None:
                    discarded = proposal[tau + 1:]
                    committed = accepted + [vocab.index(correction["token"])]
                    no_bonus = "rejection"
            verify_at = start
            for i, tok in enumerate(proposal if mode != "block" else []):
                p, q = target[ctx], draftm[ctx]
                if mode == "greedy":
                    d, ok, ratio = None, tok == argmax(p), None
                elif PLANT == "skip-draw" and p[tok] >= q[tok]:
                    d, ok, ratio = None, True, float(p[tok] / q[tok])
                else:
                    d = draw(seed, verify_at if early else n)
                    verify_at += 1
                    n += 1
                    ok, ratio = Fraction(d["u"]) * q[tok] < p[tok], float(p[tok] / q[tok])
                verification.append({"index": i + 1, "context": label(ctx), "token": vocab[tok], "p": floats(p),
                                     "q": floats(q), "p_token": float(p[tok]), "q_token": float(q[tok]),
                                     "ratio": ratio, "draw": d, "accepted": ok})
                if not ok:
                    if mode == "greedy":
                        r, d, fix = p, None, argmax(p)
                    else:
                        if PLANT == "resample-from-p":
                            r = p
                        else:
                            r = [max(a - b, 0) for a, b in zip(p, q)]
                            r = [x / sum(r) for x in r]
                        d = draw(seed, n)
                        n += 1
                        fix = sample(r, d["u"])
                    correction = {"index": i + 1, "context": label(ctx), "distribution": floats(r), "draw": d,
                                  "token": vocab[fix]}
                    discarded = proposal[i + 1:]
                    committed = accepted + [fix]
                    no_bonus = "rejection"
                    break
                accepted.append(tok)
                if tok == eos:
                    break
                ctx = tok
            else:
                pass
            if correction is None:
                committed = list(accepted)
                if accepted and accepted[-1] == eos:
                    no_bonus = "eos"
                elif len(out) + len(accepted) >= limit:
                    no_bonus = "limit"
                elif PLANT != "no-bonus":
                    p = target[accepted[-1] if accepted else last]
                    d = draw(seed, n) if mode in ("speculative", "block") else None
                    n += d is not None
                    tok = sample(p, d["u"]) if d else argmax(p)
                    bonus = {"context": label(accepted[-1] if accepted else last), "p": floats(p), "draw": d,
                             "token": vocab[tok]}
                    committed.append(tok)
        out += committed
        counters = {"target_passes": 1, "draft_steps": len(proposal), "accepted": len(accepted),
                    "rejected": int(correction is not None), "discarded": len(discarded),
                    "bonus_tokens": int(bonus is not None), "committed": len(committed), "draws": n - start}
        for key in totals:
            totals[key] += counters[key]
        done = "eos" if out[-1] == eos else "limit" if len(out) >= limit else None
        extra = {"tau": tau} if mode == "block" else {}
        blocks.append({"mode": mode, "prefix": [vocab[t] for t in prefix], "position": start,
                       "proposal": {"tokens": [vocab[t] for t in proposal], "steps": steps},
                       "verification": verification, **extra, "correction": correction,
                       "discarded": [vocab[t] for t in discarded], "bonus": bonus, "no_bonus": no_bonus,
                       "sample": sample_rec, "committed": [vocab[t] for t in committed], "counters": counters,
                       "next_position": n, "done": done})
    echoed = dict(config, seed=config["seed"] + 1) if PLANT == "wrong-seed" else config
    if PLANT == "malformed-autoregressive" and mode == "autoregressive":
        blocks[0]["position"] = "zero"
    if PLANT == "chatty":
        print("debug: starting")
    print(json.dumps({"format": "specdec-trace/1", "config": echoed, "blocks": blocks, "output": [vocab[t] for t in out],
                      "counters": totals, "position": n, "done": blocks[-1]["done"]}))


main()
