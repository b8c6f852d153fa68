"""The grader's reading of a tree block's own decisions (SPEC 11.3-11.5): what the correct tree
verifier makes of the candidates a submission accepted and rejected.

As :func:`.checks._tail_given_decisions` does for one chain, so that a wrong test fails the
acceptance check alone: the correction, discard and bonus checks ask whether the block did the
right thing *after its own decisions*. The reading is the engine's own
(:class:`~specdec_service.engine.verifiers.tree.TreeVerifier`: its residual update, its discard
and its bonus rule), not a second implementation.
"""

from __future__ import annotations

from typing import Optional

from ..engine.bounds import MAX_POSITION, int_in
from ..engine.draws import Stream
from ..engine.proposals import Drafted
from ..engine.decoders import MODE_RULES
from ..engine.verifiers.tree import TreeVerifier


def _chains(config, block: dict) -> Optional[list]:
    """The block's chains as drafted blocks (token indices), ``None`` when a label is not a token."""
    index, last = config.index, None
    chains = []
    for labels in block["proposal"]["chains"]:
        tokens = [index.get(label) for label in labels]
        if None in tokens:
            return None
        chain = Drafted(last)
        chain.tokens = tokens
        chains.append(chain)
    return chains


def _next_position(block: dict) -> int:
    """The draw after the block's last recorded draft or test draw."""
    n = block["position"]
    for record in block["proposal"]["steps"] + block["verification"]:
        d = record["draw"]
        if d is not None and int_in(d["position"], 0, MAX_POSITION - 1):
            n = d["position"] + 1
    return n


def tree_tail(state, block: dict) -> Optional[dict]:
    """``{"correction", "discarded", "bonus", "no_bonus"}`` as SPEC 11.3-11.5 make them of the
    block's own chains and test records (the correct rules: the recursive residual of the last
    depth's rejections, the untested tokens, the bonus unless rejected, at the limit or after an
    EOS), or ``None`` when the records cannot be read (a label outside the vocabulary, a test of a
    chain or depth the block does not have)."""
    cfg = state.config
    read = _read_tree_block(cfg, block)
    if read is None:
        return None
    chains, records, accepted = read
    verifier = MODE_RULES["tree"].verifier
    assert isinstance(verifier, TreeVerifier)
    rows = MODE_RULES["tree"].rows.read(cfg)
    context = accepted[-1] if accepted else (state.committed[-1] if state.committed else None)
    stream = Stream(cfg.seed, _next_position(block))
    try:
        correction = _tree_correction(cfg, verifier, rows, records, accepted, context, stream)
    except ValueError:  # a rejection no correct test could make: judged by the acceptance check
        return None
    reason = verifier.bonus.missing(cfg, len(state.committed), accepted, correction is not None)
    discarded = [cfg.vocab[t] for t in verifier._discarded(chains, records)]
    depth = len(accepted)
    if reason is None and any(c.tokens[:depth] == accepted and len(c.tokens) > depth for c in chains):
        # SPEC 11.4: an alive chain still has a token, so the next depth is tested: no bonus yet
        return {"correction": None, "discarded": discarded, "bonus": None, "no_bonus": None}
    bonus = None if reason is not None else verifier.bonus.add(rows, context, cfg.vocab, stream)
    return {"correction": correction, "discarded": discarded, "bonus": bonus, "no_bonus": reason}


def _read_tree_block(cfg, block: dict) -> Optional[tuple]:
    """``(chains, test records, accepted token indices)`` of a tree block, or ``None`` when its
    records cannot be read (:func:`tree_tail`)."""
    if "chains" not in block["proposal"] or any("depth" not in v for v in block["verification"]):
        return None  # a block of another mode in a tree trace: the format and acceptance checks say so
    chains = _chains(cfg, block)
    if chains is None:
        return None
    records = block["verification"]
    accepted = [cfg.index.get(v["token"]) for v in records if v["accepted"] is True]
    if None in accepted or any(not 1 <= v["chain"] <= len(chains) for v in records):
        return None
    return chains, records, accepted


def _tree_correction(cfg, verifier, rows, records: list, accepted: list, context, stream) -> Optional[dict]:
    """SPEC 11.3: after every candidate of the last depth is rejected, the correction drawn
    from the recursive residual of those rejections; ``None`` when the last test accepted.
    Raises ``ValueError`` for a rejection no correct test could make."""
    if not records or records[-1]["accepted"] is True:
        return None
    p, q = rows.target(context), rows.draft(context)
    r = p
    for v in records:
        if v["depth"] == records[-1]["depth"] and v["accepted"] is not True:
            r = verifier.after_rejection(r, p, q)
    return verifier._correct(cfg, len(accepted), context, r, stream)
