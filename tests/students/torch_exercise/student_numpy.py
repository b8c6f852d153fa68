"""The exercise of ``student.py`` in numpy (the same algorithm, line for line, over the same
logits): CI, which does not install torch, runs the adapter's logic through it."""

import numpy as np

MISTAKE = ""


def _softmax(logits):
    z = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


def _multinomial(row, gen):
    return int(gen.choice(len(row), p=row / row.sum()))


def speculative_sampling(target_fn, draft_fn, prefix, gamma, max_new, gen):
    """As ``student.speculative_sampling``, with numpy arrays and a ``numpy.random.Generator``."""
    x = prefix
    start = prefix.shape[1]
    while x.shape[1] - start < max_new:
        k = min(gamma, max_new - (x.shape[1] - start))
        drafted, qs = x, []
        for _ in range(k):
            q = _softmax(draft_fn(drafted)[0, -1])
            qs.append(q)
            drafted = np.concatenate([drafted, [[_multinomial(q, gen)]]], axis=1)
        ps = _softmax(target_fn(drafted)[0])
        n = x.shape[1]
        for i in range(k):
            token = drafted[0, n + i]
            p, q = ps[n + i - 1], qs[i]
            if gen.random() < p[token] / q[token]:
                x = np.concatenate([x, [[token]]], axis=1)
                continue
            r = p if MISTAKE == "correction-from-p" else np.clip(p - q, 0, None)
            x = np.concatenate([x, [[_multinomial(r, gen)]]], axis=1)
            break
        else:
            if x.shape[1] - start < max_new:
                x = np.concatenate([x, [[_multinomial(ps[-1], gen)]]], axis=1)
    return x
