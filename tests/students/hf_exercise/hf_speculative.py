"""transformers' ``_speculative_sampling`` (src/transformers/generation/utils.py, the sampling
branch of assisted generation), re-implemented from its description for the tests: the same
inputs (``candidate_input_ids`` [1, n + k], ``candidate_logits`` [1, k, V] from the assistant,
``candidate_length`` k, ``new_logits`` [1, k + 1, V] from the target, ``is_done_candidate``), the
same tensor calls and the same outputs (``valid_tokens`` [1, m], ``n_matches``):

- keep candidate i while ``r_i <= p_i / q_i`` (``torch.rand_like``), ``n_matches`` the number
  kept before the first failure;
- an accepted EOS that is the last candidate (``is_done_candidate``) ends there, no token added;
- else one more token from ``max(p - q, 0)`` normalised at the first failure, or from p when
  every candidate was kept (the bonus).

``MISTAKE = "correction-from-p"`` plants the public bug of sampling the replacement from p."""

import torch

MISTAKE = ""


def speculative_sampling(candidate_input_ids, candidate_logits, candidate_length, new_logits, is_done_candidate):
    drafted = candidate_input_ids[:, -candidate_length:]
    q = candidate_logits.softmax(dim=-1)
    p = new_logits.softmax(dim=-1)
    steps = torch.arange(candidate_length)
    q_i = q[:, steps, drafted].squeeze(0, 1)
    p_i = p[:, steps, drafted].squeeze(0, 1)
    ratio = p_i / q_i
    is_accepted = torch.rand_like(ratio) <= ratio
    n_matches = int(((~is_accepted).cumsum(dim=-1) < 1).sum())
    if is_done_candidate and n_matches == candidate_length:
        return drafted[:, : n_matches], n_matches - 1
    p_next = p[:, n_matches, :]
    if n_matches < candidate_logits.shape[1] and MISTAKE != "correction-from-p":
        p_next = torch.clamp(p_next - q[:, n_matches, :], min=0)
        p_next.div_(p_next.sum())
    t = torch.multinomial(p_next, num_samples=1).squeeze(0)[None, :]
    return torch.cat((drafted[:, :n_matches], t), dim=-1), n_matches
