"""A PyTorch speculative sampling exercise as courses hand it out (after Leviathan et al. 2023,
algorithm 1, in the style of the public implementations issue 20 graded): token ids and logits,
its own randomness (torch's global generator). ``MISTAKE = "correction-from-p"`` plants the
classic mistake (the correction sampled from p instead of the residual)."""

import torch

MISTAKE = ""


def speculative_sampling(target_fn, draft_fn, prefix, gamma, max_new):
    """``target_fn`` / ``draft_fn``: ids [1, n] -> logits [1, n, V] (row j: the next-token logits
    after ids[:j + 1]); ``prefix``: ids [1, n]; ``gamma``: drafted tokens a block; ``max_new``:
    tokens to add. Returns ids [1, n + max_new]."""
    x = prefix
    start = prefix.shape[1]
    while x.shape[1] - start < max_new:
        k = min(gamma, max_new - (x.shape[1] - start))
        drafted, qs = x, []
        for _ in range(k):
            q = torch.softmax(draft_fn(drafted)[0, -1], dim=-1)
            token = torch.multinomial(q, 1)
            qs.append(q)
            drafted = torch.cat([drafted, token.view(1, 1)], dim=1)
        ps = torch.softmax(target_fn(drafted)[0], dim=-1)
        n = x.shape[1]
        for i in range(k):
            token = drafted[0, n + i]
            p, q = ps[n + i - 1], qs[i]
            if torch.rand(1).item() < (p[token] / q[token]).item():
                x = torch.cat([x, token.view(1, 1)], dim=1)
                continue
            r = p if MISTAKE == "correction-from-p" else torch.clamp(p - q, min=0)
            x = torch.cat([x, torch.multinomial(r / r.sum(), 1).view(1, 1)], dim=1)
            break
        else:
            if x.shape[1] - start < max_new:
                x = torch.cat([x, torch.multinomial(ps[-1], 1).view(1, 1)], dim=1)
    return x
