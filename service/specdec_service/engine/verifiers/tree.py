"""Tree verification: several drafts verified depth by depth against the recursive residual
(SPEC section 11.2-11.5, mode ``tree``; Miao et al. 2024, SpecInfer, multi-step speculative
sampling, the verification vLLM and SGLang apply at each node of a draft tree).

The drafted block holds D chains (:mod:`..chains_proposal`). Depth by depth (i = 1, 2, ...), the
*candidates* are the i-th tokens of the chains still alive (at depth 1 every chain) that have
an i-th token, in chain order, repeats included; p and q are the rows after the committed
prefix plus the tokens accepted so far. Start with r = p; for each candidate y: draw u, accept
y iff ``u * q(y) < r(y)`` (exactly); on acceptance y is committed, the chains alive at the next
depth are the candidates' chains whose i-th token is y, and the next depth begins (an accepted
EOS ends the block); on rejection r becomes ``max(r - q, 0)`` normalised and the next candidate
is tested against it (SPEC 11.2). If every candidate is rejected: the correction
``sample(r, draw(n))`` and the block ends (11.3). If no alive chain has a token at the next
depth: a bonus as in SPEC 4.4, none at the limit and none after an EOS (11.4). Counters (11.5):
``draft_steps`` every drafted token of every chain, ``accepted`` the committed drafted tokens,
``rejected`` the failed tests, ``discarded`` the rest (drafted tokens never tested or not on
the accepted path).

**Law.** Given the accepted path, the candidates of a depth are independent draws from the
same q. The first is accepted with probability ``sum_y min(p(y), q(y))``; after a rejection
the residual r = max(p - q, 0)/Z is the law of the target *given* that rejection, so the next
candidate is a fresh speculative test of r against q, and so on; after the last rejection the
correction is drawn from the last r. So the token committed at each depth has exactly the law
p (SpecInfer, theorem 4.2), and the output has exactly the target's distribution. With D = 1
this is :class:`.tokenwise.TokenWise` draw for draw. :meth:`TreeVerifier.depth_law` states the
law of one depth exactly, for the analysis.

The rule's parts are small methods a catalogued mistake overrides one at a time (:meth:`tested
row <TreeVerifier.test_row>`, :meth:`the residual after a rejection
<TreeVerifier.after_rejection>`, :meth:`the chains that go on <TreeVerifier.going_on>`,
:meth:`the candidates of a depth <TreeVerifier.candidates>`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Optional, Sequence

from ..distributions import Dist, accepts, exact_string, residual, sample_next, to_float
from ..work import charge
from ..draws import Draws
from ..state import Counters
from .tokenwise import SampledBonus, Verdict


def exact_strings(row: Dist) -> list[str]:
    """Each probability of ``row`` as its exact value written as a string: ``"1/2"``, ``"0"``."""
    charge(2 * len(row.weights) * row.total.bit_length())  # each entry's gcd with the total
    return [exact_string(Fraction(w, row.total)) for w in row.weights]


def conclude(bonus: SampledBonus, state, rows, stream: Draws, walked: tuple, discarded: list) -> Verdict:
    """The end of a tree's verification (SPEC 11.3-11.4, 12.2): ``walked`` is ``(accepted,
    context, correction, records)`` (the accepted tokens, the last context, the correction record
    or ``None``, the test records); the bonus when due (SPEC 4.4), and the :class:`Verdict` with the
    last rejected token and the ``discarded`` tokens."""
    accepted, context, correction, records = walked
    cfg = state.config
    reason = bonus.missing(cfg, len(state.committed), accepted, correction is not None)
    extension = None if reason is not None else bonus.add(rows, context, cfg.vocab, stream)
    rejected = next((cfg.index[v["token"]] for v in reversed(records) if not v["accepted"]), None)
    return Verdict(records, correction, discarded, extension, reason, rejected)


def correction_record(vocab: Sequence[str], depth: int, context: Optional[int], r: Dist, stream: Draws) -> dict:
    """SPEC 11.3 and 12.2: the correction ``sample(r, draw(n))`` after ``depth`` (0-based) accepted
    tokens, as a trace records it: ``{"index", "context", "distribution", "draw", "token"}``."""
    token, d = sample_next(r, stream)
    return {"index": depth + 1, "context": None if context is None else vocab[context],
            "distribution": r.to_json(), "draw": d.to_json(), "token": vocab[token]}


@dataclass(frozen=True)
class TreeVerifier:
    """SPEC 11.2-11.5: verify D drafted chains depth by depth against the recursive residual;
    correct when a depth's candidates are all rejected, or add the bonus (``bonus``, SPEC 4.4)."""

    bonus: SampledBonus = SampledBonus()
    name: str = "tree"

    # -- the parts a catalogued mistake changes

    def candidates(self, chains: Sequence, alive: Sequence[int], depth: int) -> list[int]:
        """SPEC 11.2: the alive chains (0-based) that have a token at ``depth`` (0-based), in
        chain order."""
        return [j for j in alive if len(chains[j].tokens) > depth]

    def test_row(self, r: Dist, p: Dist, q: Dist) -> Dist:
        """SPEC 11.2: the row a candidate is tested against: the current residual r."""
        return r

    def after_rejection(self, r: Dist, p: Dist, q: Dist) -> Dist:
        """SPEC 11.2: after a rejection, r becomes max(r - q, 0) normalised (positive: a
        rejection means some r(y) < q(y))."""
        return residual(r, q)

    def going_on(self, chains: Sequence, tested: Sequence[int], depth: int, token: int) -> list[int]:
        """SPEC 11.2: the chains alive at the next depth: the candidates' chains whose token at
        ``depth`` is the accepted ``token``."""
        return [j for j in tested if chains[j].tokens[depth] == token]

    @staticmethod
    def ratio(row: Dist, q: Dist, y: int) -> Optional[Fraction]:
        """r(y)/q(y) exactly for the record; ``None`` when q(y) = 0. A correct tree never tests such
        a token (each candidate was drawn from this q); a decoder that lets a chain go on after
        another token (the catalogued mistake ``tree-disagreeing-chains-continue``) does, and its
        test ``u * q(y) < r(y)`` then accepts iff r(y) > 0."""
        qy = q.probability(y)
        charge(4 * (row.total.bit_length() + q.total.bit_length()))
        return row.probability(y) / qy if qy else None

    # -- the verification

    def verify(self, state, rows, drafted, stream: Draws) -> Verdict:
        """SPEC 11.2-11.4 on ``drafted`` (a class:`~..chains_proposal.DraftedTree`) after ``state``:
        the test records (one per candidate tested, in order), the correction or the bonus,
        the discarded drafted tokens."""
        cfg = state.config
        chains = drafted.chains
        records: list[dict] = []
        accepted: list[int] = []
        alive = list(range(len(chains)))
        context, correction = drafted.last, None
        while True:
            tested = self.candidates(chains, alive, len(accepted))
            if not tested:
                break
            token, r, alive = self._depth(cfg, rows, chains, tested, accepted, context, stream, records)
            if token is None:
                correction = self._correct(cfg, len(accepted), context, r, stream)
                break
            accepted.append(token)
            context = token
            if token == cfg.eos:
                break
        return conclude(self.bonus, state, rows, stream, (accepted, context, correction, records),
                        self._discarded(chains, records))

    def _depth(self, cfg, rows, chains, tested, accepted, context, stream: Draws, records: list):
        """SPEC 11.2, one depth's tests in order: ``(token, r, alive)``: the accepted token (``None``: all
        rejected), the last residual r, the chains alive at the next depth."""
        depth, vocab = len(accepted), cfg.vocab
        p, q = rows.target(context), rows.draft(context)
        r = p
        left = list(tested)
        for j in tested:
            y = chains[j].tokens[depth]
            row = self.test_row(r, p, q)
            d = stream.take()
            ok = accepts(d, row, q, y)
            left.remove(j)
            alive = self.going_on(chains, tested, depth, y) if ok else left
            ratio = self.ratio(row, q, y)
            records.append({
                "depth": depth + 1, "chain": j + 1,
                "context": None if context is None else vocab[context], "token": vocab[y],
                "p": p.to_json(), "q": q.to_json(), "r": row.to_json(), "r_exact": exact_strings(row),
                "r_token": row.floats[y], "q_token": q.floats[y],
                "ratio": None if ratio is None else to_float(ratio), "ratio_exact": None if ratio is None else exact_string(ratio),
                "draw": d.to_json(), "accepted": ok, "alive": [a + 1 for a in alive],
            })
            if ok:
                return y, r, alive
            r = self.after_rejection(r, p, q)
        return None, r, []

    def _correct(self, cfg, depth: int, context: Optional[int], r: Dist, stream: Draws) -> dict:
        """SPEC 11.3: the correction ``sample(r, draw(n))`` at ``depth`` (0-based)."""
        return correction_record(cfg.vocab, depth, context, r, stream)

    @staticmethod
    def _discarded(chains: Sequence, records: Sequence[dict]) -> list[int]:
        """SPEC 11.5: the drafted tokens never tested (each chain's, in chain order)."""
        tested = {(v["chain"] - 1, v["depth"] - 1) for v in records}
        return [t for j, chain in enumerate(chains) for i, t in enumerate(chain.tokens) if (j, i) not in tested]

    # -- reading a block record (the engine's own, or a submission's)

    def commits(self, block: dict) -> list:
        """The labels a tree block record commits: the accepted candidate of each depth, then
        its correction or bonus."""
        commit = [v["token"] for v in block["verification"] if v["accepted"] is True]
        for key in ("correction", "bonus"):
            if block[key] is not None:
                commit.append(block[key]["token"])
                break
        return commit

    def tally(self, block: dict, draws: int) -> Counters:
        """SPEC 11.5, read off a block record: one target pass, every chain's drafted tokens,
        the accepted tests, the failed tests, the discarded tokens, the bonus, the committed
        tokens and ``draws``."""
        tests = block["verification"]
        accepted = sum(1 for v in tests if v["accepted"] is True)
        return Counters(1, len(block["proposal"]["tokens"]), accepted, len(tests) - accepted,
                        len(block["discarded"]), 0 if block["bonus"] is None else 1, len(block["committed"]), draws)

    # -- the exact law, for the analysis

    def depth_law(self, p: Dist, q: Dist, candidates: Sequence[int]) -> tuple[list[Fraction], Dist]:
        """SPEC 11.2-11.3, the exact law of one depth whose candidates are the tokens ``candidates`` in order:
        ``(accept, r)``: ``accept[m]`` the probability that candidate m is the one accepted,
        and r the residual the correction is drawn from when all are rejected (probability
        ``1 - sum(accept)``)."""
        r, left, accept = p, Fraction(1), []
        for y in candidates:
            row = self.test_row(r, p, q)
            ratio = self.ratio(row, q, y)
            a = (Fraction(1) if row.probability(y) else Fraction(0)) if ratio is None else min(Fraction(1), ratio)
            accept.append(left * a)
            left *= 1 - a
            if left == 0:
                accept += [Fraction(0)] * (len(candidates) - len(accept))
                break
            r = self.after_rejection(r, p, q)
        return accept, r
