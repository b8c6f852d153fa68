"""A student's sampler for every mode with an output law (issue 20, issue 23): speculative
(SPEC 4), autoregressive, block (SPEC 10) and tree (SPEC 11), with sampling parameters (SPEC 9),
its own random numbers, written from the papers (:mod:`planted`'s functions), not from SPEC's
draw order.

As a Python function (``specdec grade --python tests/students/modes_sampler.py:decode``) it
takes the harness's extra settings ``mode``, ``drafts`` and ``sampling`` as keyword parameters.
Run as a program (``python3 modes_sampler.py``) it reads ``{"config": ..., "samples": N,
"seed": S}`` on standard input and prints N lines, each a JSON list of labels.

A planted mistake (a catalogue id, e.g. ``tree-residual-not-updated``) is chosen by the
environment variable ``SAMPLER_MISTAKE`` (or the module global ``MISTAKE``); it changes only
the decoder of its mode.
"""

import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import planted  # noqa: E402
from sampler import model_of  # noqa: E402

MISTAKE = os.environ.get("SAMPLER_MISTAKE", "")


def decode(target, draft, width, limit, eos, rng, mode="speculative", drafts=1, sampling=None):
    """One whole session (a list of labels, at most ``limit``, ending at an EOS) in ``mode``;
    with ``sampling`` (SPEC 9) the target's rows, and the draft's unless ``"draft": "raw"``, are
    processed first."""
    if sampling:
        target = planted.Processed(target, sampling)
        if sampling.get("draft") != "raw":
            draft = planted.Processed(draft, sampling)
    if mode == "tree":
        return planted.tree_decode(target, draft, width, drafts, limit, eos, rng, MISTAKE)
    if mode == "block":
        return planted.block_decode(target, draft, width, limit, eos, rng, MISTAKE)
    if mode == "speculative":
        return planted.speculative_decode(target, draft, width, limit, eos, rng, MISTAKE)
    out = []
    while len(out) < limit and (not out or out[-1] != eos):
        out.append(target.vocab[planted.pick(target(out), rng.random())])
    return out


def main():
    job = json.load(sys.stdin)
    config = job["config"]
    target = model_of(config.get("target", "toy"))
    draft = model_of(config["draft"]) if "draft" in config else target
    rng = random.Random(job["seed"])
    for _ in range(job["samples"]):
        print(json.dumps(decode(target, draft, config.get("width", 3), config.get("limit", 8), config.get("eos"), rng,
                                config.get("mode", "speculative"), config.get("drafts", 1), config.get("sampling"))))


if __name__ == "__main__":
    main()
