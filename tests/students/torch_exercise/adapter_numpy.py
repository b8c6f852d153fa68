"""The adapter of docs/grading.md (``adapter.py``) with numpy for torch: the same logits over ids
(one extra id for the empty prefix, row j after ids[:j + 1], log of the probabilities clamped at
1e-30) and the same seeding per session."""
import numpy as np
from student_numpy import speculative_sampling


def speculative_decode(target, draft, width, limit, eos, rng):
    gen = np.random.default_rng(rng.getrandbits(32))     # the function's own randomness, seeded per session
    start = len(target.vocab)                             # an extra id: the empty prefix (the start row)

    def logits(model):                                    # ids [1, n] -> logits [1, n, V]: row j follows ids[:j + 1]
        def rows(ids):
            return [model([target.vocab[t] for t in ids[1:j + 1]]) for j in range(len(ids))]
        return lambda x: np.log(np.clip(np.array([rows(x[0].tolist())]), 1e-30, None))
    out = speculative_sampling(logits(target), logits(draft), np.array([[start]]), width, limit, gen)
    return [target.vocab[t] for t in out[0, 1:].tolist()]
