"""A student's speculative sampler with its own random numbers (issue 20), written from the
papers (Leviathan et al. 2023, Chen et al. 2023), not from SPEC's draw order: the function the
sample harness calls (``specdec grade --python tests/students/sampler.py:speculative_decode``).

``target`` and ``draft`` are model objects: ``.vocab`` (labels) and ``model(prefix)`` -> the
probability row after ``prefix`` (a list of labels), floats in vocabulary order. ``rng`` is a
seeded ``random.Random``. Returns one whole session's output (a list of labels).

Planted mistakes, chosen by the environment variable ``SAMPLER_MISTAKE`` (or the module
global ``MISTAKE``): ``correction-from-p``, ``bonus-at-limit``, ``argmax-proposals``,
``no-bonus``, ``overshoot`` (a block drafts ``width`` tokens whatever the limit, and keeps
them), ``one-draw`` (one acceptance draw for the whole session).

Run as a program (``python3 sampler.py``) it reads ``{"config": ..., "samples": N, "seed": S}``
on standard input and prints N lines, each a JSON list of labels.
"""

import json
import os
import random
import sys

MISTAKE = os.environ.get("SAMPLER_MISTAKE", "")


def _pick(row, u):
    acc = 0.0
    for i, p in enumerate(row):
        acc += p
        if u < acc:
            return i
    return max(i for i, p in enumerate(row) if p > 0)


def speculative_decode(target, draft, width, limit, eos, rng):
    """One session of speculative sampling: a list of labels (at most ``limit``, ending at an EOS)."""
    vocab = target.vocab
    out = []
    session_u = rng.random()
    while len(out) < limit and (not out or out[-1] != eos):
        k = width if MISTAKE == "overshoot" else min(width, limit - len(out))
        proposal, rows = [], []
        for _ in range(k):
            q = draft(out + proposal)
            x = q.index(max(q)) if MISTAKE == "argmax-proposals" else _pick(q, rng.random())
            proposal.append(vocab[x])
            rows.append(q)
            if vocab[x] == eos:
                break
        accepted = 0
        corrected = None
        for i, label in enumerate(proposal):
            p = target(out + proposal[:i])
            x = vocab.index(label)
            u = session_u if MISTAKE == "one-draw" else rng.random()
            if u < p[x] / rows[i][x]:
                accepted += 1
                continue
            if MISTAKE == "correction-from-p":
                residual = p
            else:
                residual = [max(a - b, 0.0) for a, b in zip(p, rows[i])]
            total = sum(residual)
            corrected = vocab[_pick([r / total for r in residual], rng.random())]
            break
        out += proposal[:accepted]
        if corrected is not None:
            out.append(corrected)
            if MISTAKE == "overshoot":
                out += proposal[accepted + 1:]
        elif (not out or out[-1] != eos) and (len(out) < limit or MISTAKE == "bonus-at-limit") and MISTAKE != "no-bonus":
            out.append(vocab[_pick(target(out), rng.random())])
        if MISTAKE in ("bonus-at-limit", "overshoot") and len(out) >= limit:
            break
    return out


class Model:
    """A bigram table as a model object: ``.vocab`` and ``model(prefix)`` -> row."""

    def __init__(self, table):
        self.vocab = list(table["vocab"])
        self.table = table

    def __call__(self, prefix):
        row = self.table["next"][prefix[-1]] if prefix else self.table["start"]
        total = sum(row)
        return [w / total for w in row]


BUILTIN = {
    "toy": {"vocab": ["A", "B", "C"], "start": [0.5, 0.3, 0.2],
            "next": {"A": [0.2, 0.6, 0.2], "B": [0.55, 0.15, 0.3], "C": [0.25, 0.25, 0.5]}},
    "aligned": {"vocab": ["A", "B", "C"], "start": [0.5, 0.3, 0.2],
                "next": {"A": [0.2, 0.6, 0.2], "B": [0.55, 0.15, 0.3], "C": [0.25, 0.25, 0.5]}},
    "biased": {"vocab": ["A", "B", "C"], "start": [0.8, 0.15, 0.05],
               "next": {"A": [0.8, 0.15, 0.05], "B": [0.8, 0.15, 0.05], "C": [0.8, 0.15, 0.05]}},
}


def model_of(value):
    """A config's model (a built-in name or a custom table) as a :class:`Model`."""
    return Model(BUILTIN[value] if isinstance(value, str) else value)


def main():
    job = json.load(sys.stdin)
    config = job["config"]
    target, draft = model_of(config["target"]), model_of(config["draft"])
    rng = random.Random(job["seed"])
    width = config["width"] if config["mode"] == "speculative" else 0
    for _ in range(job["samples"]):
        if width:
            out = speculative_decode(target, draft, width, config["limit"], config["eos"], rng)
        else:
            out = []
            while len(out) < config["limit"] and (not out or out[-1] != config["eos"]):
                out.append(target.vocab[_pick(target(out), rng.random())])
        print(json.dumps(out))


if __name__ == "__main__":
    main()
