# docs/grading.md, "Wrapping real code": transformers' _speculative_sampling graded by samples
import torch
from hf_speculative import speculative_sampling   # transformers' _speculative_sampling, or your course's copy

def speculative_decode(target, draft, width, limit, eos, rng):
    torch.manual_seed(rng.getrandbits(32))              # the function's own randomness, seeded per session
    p, q = target.table(), draft.table()                # TableModel: ids in, rows out (probs(ids) -> [n + 1, V])
    ids = []
    while len(ids) < limit and (not ids or ids[-1] != p.eos_id):
        cand, most = list(ids), min(width, limit - len(ids) - 1)   # HF's schedule: the last token is the target's
        while len(cand) - len(ids) < most and (len(cand) == len(ids) or cand[-1] != q.eos_id):
            cand.append(int(torch.multinomial(q.probs(cand, return_tensors="pt")[-1], 1)))   # the assistant samples
        k = len(cand) - len(ids)
        new_logits = p.probs(cand, return_tensors="pt")[len(ids):][None].clamp_min(1e-30).log()   # [1, k + 1, V]
        if k == 0:                                      # no candidate: the target samples the next token
            ids.append(int(torch.multinomial(new_logits[0, 0].softmax(dim=-1), 1)))
            continue
        candidate_logits = q.probs(cand, return_tensors="pt")[len(ids):-1][None].clamp_min(1e-30).log()   # [1, k, V]
        valid, _ = speculative_sampling(torch.tensor([cand]), candidate_logits, k, new_logits, cand[-1] == p.eos_id)
        ids += valid[0].tolist()
    return p.labels(ids)
