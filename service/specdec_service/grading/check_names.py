"""The named checks of a grade and the SPEC rule behind every field of a trace.

:data:`CHECKS` are the checks an instructor reads in a report (the score is the share that
hold); :data:`RULES` is one sentence per check naming the rule and its SPEC section. :func:`locate`
maps a path into a trace (e.g. ``("blocks", 2, "verification", 0, "draw", "u")``) to the check
that owns it and the sentence to show with a divergence there.
"""

from __future__ import annotations

CHECKS = ("format", "draws", "position", "proposal", "acceptance", "correction", "discard", "bonus", "output", "counters")
"""The checks of a trace grade, in report order."""

RULES = {
    "format": "docs/trace-format.md and SPEC section 8: a trace is format specdec-trace/1 and echoes its "
              "session settings (target, draft, mode, width, seed, limit, eos) with every default filled in.",
    "draws": "SPEC section 2: draw n of a seed is SplitMix64(seed, n); each recorded draw carries that n, "
             "its u = (z >> 11) * 2^-53 and its raw z as 16 hex digits.",
    "position": "SPEC sections 2 and 4: draws are used in order (all draft draws, then one per verification, then "
                "the correction or the bonus), each advancing the position by one; a block starts where the previous ended.",
    "proposal": "SPEC section 4.1: the draft proposes k = min(w, limit - L) tokens, d_i = sample(q_i, draw(n)) with q_i "
                "the draft row after the accepted context, all before any verification draw; drafting stops after an EOS.",
    "acceptance": "SPEC section 4.2: every proposal is verified in order with its own draw (even when p >= q) and "
                  "accepted iff u < p(x)/q(x); verification stops at the first rejection or an accepted EOS.",
    "correction": "SPEC section 4.3: after the first rejection the correction token is sampled with a fresh draw from "
                  "the residual max(p - q, 0) / sum max(p - q, 0).",
    "discard": "SPEC section 4.3: the proposals after the first rejection are discarded, never committed.",
    "bonus": "SPEC section 4.4: when all k proposals are accepted and L + k < limit, one bonus token is sampled from the "
             "target after the accepted prefix with a fresh draw; at the limit, after an accepted EOS or a rejection there is none.",
    "output": "SPEC sections 4.3, 4.4 and 6: a block commits the accepted prefix and then the correction or the bonus; the next "
              "block starts from that output; the session ends when the output reaches the limit or commits an EOS.",
    "counters": "SPEC section 7: each block counts target_passes 1, draft_steps, accepted (the accepted prefix), rejected, "
                "discarded, bonus_tokens, committed and draws; the trace's counters are the sums.",
}

PLAIN = {
    "format": "The trace starts with format specdec-trace/1 and repeats the settings it was given (target, draft, "
              "mode, width, seed, limit, eos), every one of them written out.",
    "draws": "Random number n of a seed is computed exactly as SPEC section 2 shows, and each one written in the "
             "trace shows its number n, its value u and its raw 64-bit value as 16 hex digits.",
    "position": "Random numbers are used one after another, never skipped or used twice: first one per drafted "
                "token, then one per checked token, then one for the replacement or the extra token, and each block "
                "starts where the previous one stopped.",
    "proposal": "The draft model proposes min(width, limit - tokens so far) tokens, each sampled from its row after "
                "the output and the tokens proposed before it, all before any token is checked, and it stops after "
                "an end token.",
    "acceptance": "Each proposed token is checked in order with its own random number u, even when the check cannot "
                  "fail, and kept only if u < p(token) / q(token) (target over draft); checking stops at the first "
                  "token that is not kept.",
    "correction": "After the first token that is not kept, a replacement token is sampled with the next random number "
                  "from max(p - q, 0) divided by its total, at the place of the token that was not kept.",
    "discard": "The proposed tokens after the first one that is not kept are thrown away: they are listed as "
               "discarded and never added to the output.",
    "bonus": "When every proposed token is kept and the output is still shorter than the limit, one extra token is "
             "sampled from the target's row with the next random number; otherwise (at the limit, after an end "
             "token or after a replacement) there is none.",
    "output": "Each block adds its kept tokens and then its replacement or extra token to the output, the next block "
              "continues from there, and the session stops at the limit or right after an end token.",
    "counters": "Each block counts its own work (one target pass, tokens drafted, kept, not kept, thrown away, extra, "
                "added to the output, random numbers used) and the trace's totals are the sums over its blocks.",
}
"""One sentence per check, in plain words (the rule a student must follow, without the SPEC's notation)."""

_PLAIN_MODES = {
    "greedy": "In mode greedy no random numbers are used: the draft proposes its most likely token (the earliest one "
              "on a tie), the target keeps proposals while they equal its own most likely token, replaces the first "
              "one that differs by its own, and adds its own most likely token when all are kept.",
    "autoregressive": "In mode autoregressive there is no draft: each block samples one token from the target's row "
                      "after the output so far, with the next random number.",
    "block": "In mode block the proposed tokens are judged together: each gets a weight (the running product of "
             "p/q, capped at 1) and a threshold, all k random numbers are drawn, and the tokens up to the last one "
             "whose number is below its threshold are kept; the replacement is sampled from max(w * p - q, 0) "
             "divided by its total, w the weight of the kept tokens, and the extra token comes when all are kept.",
    "tree": "In mode tree the draft proposes several chains, one after another with their own random numbers; the "
            "target then checks them depth by depth: at each depth the tokens of the chains still alive are checked in "
            "chain order against a row r that starts as the target's row and, after each token that is not kept, "
            "loses the draft's row (max(r - q, 0) divided by its total); the first token kept is added and only the "
            "chains that have it go on; if none is kept, a replacement is sampled from the last r; when no alive "
            "chain has a next token, one extra token is sampled from the target.",
}
_MODE_CHECKS = ("proposal", "acceptance", "correction", "discard", "bonus")

_SAMPLE_RULE = ("SPEC section 5: in mode autoregressive each target pass commits one token "
                "sample(p, draw(n)) after the committed prefix.")

_BLOCK_FIELDS = {
    "mode": "format",
    "prefix": "output",
    "position": "position",
    "proposal": "proposal",
    "verification": "acceptance",
    "tau": "acceptance",
    "correction": "correction",
    "discarded": "discard",
    "bonus": "bonus",
    "no_bonus": "bonus",
    "sample": "bonus",
    "committed": "output",
    "counters": "counters",
    "next_position": "position",
    "done": "output",
}
_TRACE_FIELDS = {"format": "format", "config": "format", "output": "output", "counters": "counters",
                 "position": "position", "done": "output", "blocks": "output"}


_GREEDY_RULE = ("SPEC section 5: in mode greedy the draft proposes its argmax (ties to the earliest token), the "
                "target accepts while d_i equals its own argmax, commits its argmax at the first mismatch, and adds "
                "its argmax as the bonus when all match; no draws are used.")


_BLOCK_RULE = ("SPEC section 10: in mode block the weights w_i = min(1, w_(i-1) p_i(d_i)/q_i(d_i)) and thresholds "
               "h_i are computed for the whole block, all k draws eta_i are taken after the draft's, tau is the last i "
               "with eta_i < h_i (0 if none), d_1..d_tau are committed, then a correction from max(w_tau p - q, 0) "
               "normalised or, when tau = k, the bonus.")
_TREE_RULE = ("SPEC section 11: in mode tree D chains are drafted one after another (chain 1's draws first); depth by "
              "depth the alive chains' tokens are tested in chain order, accept y iff u * q(y) < r(y) with r = p and then "
              "max(r - q, 0) normalised after each rejection; the accepted token's chains go on; all rejected: a "
              "correction from r; no alive chain with a next token: a bonus as in section 4.4.")
_MODE_RULES = {"greedy": _GREEDY_RULE, "block": _BLOCK_RULE, "tree": _TREE_RULE}

_SHAPE_RULES = {
    "chains": "SPEC section 12.1.1: D chains drafted as in section 11.1 (chain 1's draws first) and merged into a "
              "trie: a node's children are the distinct tokens that follow its path in some chain, in order of first "
              "appearance; a repeated token is one child.",
    "distinct": "SPEC section 12.1.2: level by level, each node's b_i children drawn without replacement: y_j = "
                "sample(s_j, draw(n)), s_1 the draft row at the node's context and s_(j+1) = s_j with y_j set to 0, "
                "normalised; y_j's proposal law is s_j.",
    "beam": "SPEC section 12.1.3: no draws; depth 1 holds the D most probable tokens of q, each later depth the D "
            "best offers of the previous depth's nodes by path probability (ties: the earlier parent, then "
            "vocabulary order); a token of probability 0 is never offered.",
}
_VERIFY_RULES = {
    "residual": "SPEC sections 12.2-12.3: at each node the children are tested in order, each with its own draw u: "
                "accept y iff u * s(y) < r(y), s its proposal law, r = p and then max(r - s, 0) normalised after "
                "each rejection; all rejected: a correction from the last r; at a leaf: a bonus as in section 4.4.",
    "target_only": "SPEC sections 12.2 and 12.4: one draw u per node; with acc_j = p(y_1) + ... + p(y_j), accept the "
                   "first y_j with p(y_j) > 0 and (u * threshold_acc < acc_j or p(y_j) >= threshold_single); none: "
                   "a correction from p with the children's tokens set to 0, normalised; at a leaf: a bonus as in "
                   "section 4.4.",
}
_PLAIN_SHAPES = {
    "chains": "The draft proposes several chains, one after another with their own random numbers, merged into a "
              "tree: a token several chains share after the same tokens is one node, the nodes in order of first "
              "appearance.",
    "distinct": "The draft proposes a tree level by level: each node's children are drawn without replacement, each "
                "from the draft's row with the children drawn before it removed.",
    "beam": "The draft proposes a tree without random numbers: its most probable tokens, and at each later level the "
            "continuations with the largest path probability, the earlier parent first on a tie.",
}
_PLAIN_VERIFIERS = {
    "residual": "Each node's children are checked in order, each with its own random number u, and kept if u times "
                "the probability it was drawn with is below r, a row that starts as the target's and loses each "
                "rejected child's law; if none is kept, a replacement is sampled from the last r; at a leaf one "
                "extra token is sampled from the target.",
    "target_only": "Each node uses one random number u: the first child whose cumulative target probability exceeds "
                   "u (times threshold_acc), and whose own probability is positive, is kept; if none is, a "
                   "replacement is sampled from the target's row without the children; at a leaf one extra token is "
                   "sampled from the target.",
}


def rule_mode(config) -> str:
    """The key :func:`locate` and :func:`explain` read the block rules of ``config`` by: its mode,
    or for a tree of SPEC 12 other than SPEC 11's, ``"tree/<shape>/<verify>"``."""
    tree = getattr(config, "tree", None)
    if config.mode != "tree" or tree is None or tree.is_section_11:
        return config.mode
    return f"tree/{tree.shape}/{tree.verify}"


def _tree_rule(mode: str, check: str, plain: bool) -> str:
    """The SPEC 12 sentence of ``check`` for ``mode`` = ``"tree/<shape>/<verify>"``: the shape's
    for the proposal, the verifier's for the tests, correction, discard and bonus."""
    _, shape, verify = mode.split("/")
    if check == "proposal":
        return (_PLAIN_SHAPES if plain else _SHAPE_RULES)[shape]
    return (_PLAIN_VERIFIERS if plain else _VERIFY_RULES)[verify]


def locate(path: tuple, mode: str = "speculative") -> tuple[str, str]:
    """``(check, rule sentence)`` for a path into a trace of ``mode``. Inside a draw object,
    ``position`` belongs to the position check and ``u``/``hex`` to the draws check; a whole draw
    that is missing (or present where none is used) belongs to the field that uses it. In mode
    greedy the proposal, acceptance, correction, discard and bonus fields follow SPEC section 5;
    in mode block the acceptance (with ``tau``), correction and discard follow SPEC section 10; in
    mode tree the proposal, acceptance, correction, discard and bonus fields follow SPEC section 11,
    or for a SPEC 12 tree (``mode`` = :func:`rule_mode`'s ``"tree/<shape>/<verify>"``) its shape's
    rule (the proposal) and its verifier's (the rest), SPEC 12."""
    check, rule = _locate(path)
    if mode.startswith("tree/") and check in _MODE_CHECKS:
        return check, _tree_rule(mode, check, plain=False)
    if mode in _MODE_RULES and check in _MODE_CHECKS and not (mode == "block" and check in ("proposal", "bonus")):
        return check, _MODE_RULES[mode]
    return check, rule


def _locate(path: tuple) -> tuple[str, str]:
    if not path:
        return "format", RULES["format"]
    if path[0] != "blocks" or len(path) < 3:
        check = _TRACE_FIELDS.get(path[0], "format")
        return check, RULES[check]
    field = path[2]
    check = _BLOCK_FIELDS.get(field, "format")
    if "draw" in path[3:]:
        leaf = path[-1]
        if leaf == "position":
            return "position", RULES["position"]
        if leaf in ("u", "hex"):
            return "draws", RULES["draws"]
    if field == "sample":
        return check, _SAMPLE_RULE
    return check, RULES[check]


def explain(check: str, mode: str) -> str:
    """The plain-words sentence (:data:`PLAIN`) for a divergence owned by ``check`` in a trace
    of ``mode``: in modes greedy and autoregressive the rules of the block itself are those of
    SPEC section 5, in mode block those of SPEC section 10, for a SPEC 12 tree (:func:`rule_mode`)
    its shape's and its verifier's, each said in one sentence of its own."""
    if mode.startswith("tree/") and check in _MODE_CHECKS:
        return _tree_rule(mode, check, plain=True)
    if mode in _PLAIN_MODES and check in _MODE_CHECKS:
        return _PLAIN_MODES[mode]
    return PLAIN[check]
