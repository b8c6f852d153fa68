"""Public speculative decoders re-implemented from their descriptions (not their code), each as a
``--python`` function ``fn(target, draft, width, limit, eos, rng, mode=...)`` the harness calls
(``target`` and ``draft``: ``.vocab`` and ``model(prefix)`` -> a row of floats; ``rng``: a seeded
``random.Random``; the return value: one whole session's labels). Each keeps the block schedule
of the code it describes; ``tests/test_grading_schedules.py`` grades them by samples and asserts
the verdict and the mistake named:

- :func:`hf_speculative_sampling`: Hugging Face transformers' assisted generation with
  ``_speculative_sampling``: at most ``limit - L - 1`` candidates a step, each accepted iff
  ``u <= p(x) / q(x)``; at the first rejection a token from ``max(p - q, 0)`` normalised, else
  one more from ``p`` (so the last token always comes from the target). Correct.
  ``PLANT_FROM_P`` makes its correction a sample of ``p`` (``resample-from-p``).
- :func:`llamacpp_speculative`: llama.cpp's ``examples/speculative``: the target samples the
  first token after the prompt, then the draft proposes its most probable tokens (a greedy draft
  sampler) and each is accepted iff ``u <= p(x) / q(x)`` with ``q`` the draft's row, as if it
  had been sampled from ``q``; a rejection samples ``max(p - q, 0)`` normalised.
- :func:`vllm_ascend_magicmtp_v1`, :func:`vllm_ascend_magicmtp`, :func:`vllm_ascend_pr7808`:
  vllm-ascend's block verifiers (``rejection_random_sample_block_verify_pytorch``): MagicMTP's
  acceptance of the longest prefix with ``cumprod(min(1, p/q)) >= cumprod(u)`` and a correction
  from ``max(p - q, 0)`` (the first version) or ``max(w_tau p - q, 0)`` (the current code); the
  PyTorch path of PR #7808: SPEC 10's weights and tau, but each threshold ``h_i`` (i < k) from
  the rows of ``d_i``'s own context instead of the next one.
- :func:`eagle2_evaluate_posterior`: EAGLE-2's ``evaluate_posterior`` with sampling
  (SafeAILab/EAGLE, ``eagle/model/utils.py``) on a chain (one candidate a level): the target
  samples the first token; the draft proposes its most probable tokens; candidate ``x`` is
  accepted iff ``u <= p(x) / 1`` (a deterministic proposal has ``q(x) = 1``); a rejection zeroes
  ``p(x)`` and renormalises, and the token after the accepted prefix is sampled from that row,
  or from the target's fresh row when no candidate was rejected. Correct.
  ``PLANT_EAGLE_KEEPS_P`` plants a correction from the target's row with ``p(x)`` left in (the
  line that zeroes it forgotten).
- :func:`sglang_target_only`: SGLang's target-only path: every token sampled from the target.
- :func:`mlx_lm_speculative`: mlx-lm's ``speculative_generate_step`` with sampling: the target
  samples a token at every drafted position, a draft token is kept while it equals the target's
  sample, the first mismatch commits the target's token (exact for any draft).
"""

from planted import _residual, pick

PLANT_FROM_P = False
"""Plant ``resample-from-p`` in :func:`hf_speculative_sampling` (a correction sampled from p)."""

PLANT_EAGLE_KEEPS_P = False
"""Plant a correction from the unchanged row ``p`` in :func:`eagle2_evaluate_posterior`."""


def _ended(out, limit, eos):
    return len(out) >= limit or (out and out[-1] == eos)


def _drafted(draft, out, k, eos, vocab, rng, argmax=False):
    """Up to ``k`` draft tokens after ``out``, sampled (or the most probable ones), stopping after an EOS."""
    proposal = []
    for _ in range(k):
        q = draft(out + proposal)
        proposal.append(vocab[q.index(max(q)) if argmax else pick(q, rng.random())])
        if proposal[-1] == eos:
            break
    return proposal


def hf_speculative_sampling(target, draft, width, limit, eos, rng, mode="speculative"):
    """Hugging Face's assisted generation (see the module docstring)."""
    vocab, out = target.vocab, []
    while not _ended(out, limit, eos):
        candidates = _drafted(draft, out, max(0, min(width, limit - len(out) - 1)), eos, vocab, rng)
        for label in candidates:
            p, q, x = target(out), draft(out), vocab.index(label)
            if rng.random() <= p[x] / q[x]:
                out.append(label)
                if label == eos:
                    break
                continue
            row = p if PLANT_FROM_P else _residual(p, q)
            out.append(vocab[pick(row, rng.random())])
            break
        else:
            if not _ended(out, limit, eos):
                out.append(vocab[pick(target(out), rng.random())])
    return out


def llamacpp_speculative(target, draft, width, limit, eos, rng, mode="speculative"):
    """llama.cpp's speculative example (see the module docstring)."""
    vocab = target.vocab
    out = [vocab[pick(target([]), rng.random())]]
    while not _ended(out, limit, eos):
        proposal = _drafted(draft, out, min(width, limit - len(out)), eos, vocab, rng, argmax=True)
        for label in proposal:
            p, q, x = target(out), draft(out), vocab.index(label)
            if rng.random() <= p[x] / q[x]:
                out.append(label)
                continue
            out.append(vocab[pick(_residual(p, q), rng.random())])
            break
        else:
            if not _ended(out, limit, eos):
                out.append(vocab[pick(target(out), rng.random())])
    return out


def _block_rows(target, draft, out, k, eos, vocab, rng):
    proposal, ps, qs = [], [], []
    for _ in range(k):
        ps.append(target(out + proposal))
        qs.append(draft(out + proposal))
        proposal.append(vocab[pick(qs[-1], rng.random())])
        if proposal[-1] == eos:
            break
    return proposal, ps, qs


def _prefix_weights(proposal, ps, qs, vocab):
    w = [1.0]
    for label, p, q in zip(proposal, ps, qs):
        x = vocab.index(label)
        w.append(min(1.0, w[-1] * p[x] / q[x]))
    return w


def _vllm_ascend(target, draft, width, limit, eos, rng, version):
    """One of vllm-ascend's block verifiers: ``version`` "v1", "current" or "pr7808"."""
    vocab, out = target.vocab, []
    while not _ended(out, limit, eos):
        proposal, ps, qs = _block_rows(target, draft, out, min(width, limit - len(out)), eos, vocab, rng)
        w = _prefix_weights(proposal, ps, qs, vocab)
        us = [rng.random() for _ in proposal]
        legal = []
        if version == "pr7808":
            for i in range(1, len(proposal) + 1):
                if i == len(proposal):
                    h = w[i]
                else:
                    mass = sum(max(w[i] * a - b, 0.0) for a, b in zip(ps[i - 1], qs[i - 1]))
                    h = mass / (mass + 1.0 - w[i]) if mass + 1.0 - w[i] > 0 else 0.0
                legal.append(us[i - 1] <= h)
        else:
            pi, cum_u = 1.0, 1.0
            for label, p, q, u in zip(proposal, ps, qs, us):
                x = vocab.index(label)
                pi *= min(1.0, p[x] / q[x])
                cum_u *= u
                legal.append(pi >= cum_u)
        tau = max((i + 1 for i, ok in enumerate(legal) if ok), default=0)
        out += proposal[:tau]
        if tau == len(proposal):
            if not _ended(out, limit, eos):
                out.append(vocab[pick(target(out), rng.random())])
            continue
        scale = 1.0 if version == "v1" else w[tau]
        residual = [max(scale * a - b, 0.0) for a, b in zip(ps[tau], qs[tau])]
        total = sum(residual)
        out.append(vocab[pick([r / total for r in residual], rng.random()) if total > 0 else 0])
    return out


def vllm_ascend_magicmtp_v1(target, draft, width, limit, eos, rng, mode="block"):
    """MagicMTP's first version: cumprod acceptance, correction from max(p - q, 0)."""
    return _vllm_ascend(target, draft, width, limit, eos, rng, "v1")


def vllm_ascend_magicmtp(target, draft, width, limit, eos, rng, mode="block"):
    """MagicMTP today: cumprod acceptance, correction from max(w_tau p - q, 0)."""
    return _vllm_ascend(target, draft, width, limit, eos, rng, "current")


def vllm_ascend_pr7808(target, draft, width, limit, eos, rng, mode="block"):
    """PR #7808's PyTorch path: the thresholds from the rows one position too early."""
    return _vllm_ascend(target, draft, width, limit, eos, rng, "pr7808")


def sglang_target_only(target, draft, width, limit, eos, rng, mode="speculative"):
    """Every token from the target (the draft unused)."""
    vocab, out = target.vocab, []
    while not _ended(out, limit, eos):
        out.append(vocab[pick(target(out), rng.random())])
    return out


def mlx_lm_speculative(target, draft, width, limit, eos, rng, mode="speculative"):
    """mlx-lm's speculative generation with sampling (see the module docstring)."""
    vocab, out = target.vocab, []
    while not _ended(out, limit, eos):
        proposal = _drafted(draft, out, max(0, min(width, limit - len(out) - 1)), eos, vocab, rng)
        for label in proposal + [None]:
            sampled = vocab[pick(target(out), rng.random())]
            out.append(sampled)
            if sampled != label or _ended(out, limit, eos):
                break
    return out


def eagle2_evaluate_posterior(target, draft, width, limit, eos, rng, mode="speculative"):
    """EAGLE-2's evaluate_posterior on a chain of argmax draft tokens (see the module docstring)."""
    vocab = target.vocab
    out = [vocab[pick(target([]), rng.random())]]
    while not _ended(out, limit, eos):
        candidates = _drafted(draft, out, min(width, limit - len(out)), eos, vocab, rng, argmax=True)
        row = None
        for label in candidates:
            p, x = list(target(out)), vocab.index(label)
            if rng.random() <= p[x] / 1.0:
                out.append(label)
                continue
            p[x] = p[x] if PLANT_EAGLE_KEEPS_P else 0.0
            row = [a / sum(p) for a in p]
            break
        if not _ended(out, limit, eos):
            out.append(vocab[pick(row or target(out), rng.random())])
    return out
