"""Verifiers: the verification of a drafted block, one module each (SPEC sections 4, 5, 10, 11).

A block is **draft -> verify -> commit** (:func:`..block_loop.play`):

1. the decoder's row reader (:mod:`..rows`) makes the block's :class:`~..rows.Rows` once;
2. its proposal rule (:mod:`..proposals`) drafts a :class:`~..proposals.Drafted` block from
   the draft rows and the draw stream;
3. its **verifier** receives the *whole* drafted block, the rows and the draw source
   (:class:`~..draws.Draws`), takes the draws its SPEC section orders, asks each draw its
   questions (``below``, ``pick``: :class:`~..draws.Uniform`; it never reads a draw's value), and
   returns a :class:`Verdict`: its decision records and the correction or bonus;
4. the block commits what the verifier reads off that record (:meth:`commits`, :meth:`tally`)
   and the session ends where SPEC section 6 says (:func:`..state.ended`).

A verifier is an object with (:class:`..rules.Verifier`)

- ``verify(state, rows, drafted, draws) -> Verdict``;
- ``commits(block) -> [label, ...]``: the tokens a block record commits;
- ``tally(block, draws) -> Counters``: the block's work counters (SPEC section 7), read off
  its record (``draws``: the draws it used);
- ``bonus``: its bonus rule (SPEC 4.4).

``commits`` and ``tally`` read a block **record** (the trace's JSON), so the engine and the
grader's checks use the same functions: the engine on the record it has just written, the
grader on a submission's. Its exact law is the enumeration of the block it plays
(:mod:`..enumeration`).

=========================  ============================  =====================
verifier                   module                        SPEC
=========================  ============================  =====================
:class:`TokenWise`         :mod:`.tokenwise`             4 (and 5, autoregressive)
:class:`Greedy`            :mod:`.greedy`                5 (greedy)
BlockVerifier              :mod:`.block`                 10
TreeVerifier               :mod:`.tree`                  11
TreeWalk                   :mod:`.walk`                  12
=========================  ============================  =====================

(SPEC 12's node verifiers: :mod:`.tree_residual`, :mod:`.tree_target_only`.)

Block verification (SPEC section 10, :mod:`.block`) reads all k proposals and their rows at
once (``drafted.tokens``, ``drafted.rows``), takes all k eta draws from the stream, carries the
weights w_i along the block, and scales the residual by w_tau; it records its weights,
thresholds and draws in its own verification records and ``tau`` beside them (the verdict's
``extra``). It needed no change to the other verifiers. The tree verifier (SPEC 11) is one more module and
one more proposal rule (D chains in a drafted block of its own); it tests the candidates of each
depth against the recursive residual. Neither needed a change to the others, to the rows, or to
the commit step.
"""

from .tokenwise import TokenWise, Verdict  # noqa: F401
from .greedy import Greedy  # noqa: F401
from .block import BlockVerifier  # noqa: F401
