"""Client-side sessions: the service is stateless, the session lives here.

>>> s = client.session(draft="biased", seed=1, width=3)   # doctest: +SKIP
>>> s.draft()            # the uncommitted proposal; the session does not move
>>> s.verify()           # verify that proposal and commit the block
>>> s.step()             # draft + verify in one request
>>> s.run()              # to the end; returns the Trace
>>> s.output, s.counters, s.done, s.done_reason
>>> for block in client.session(draft="aligned", seed=7): ...

A :class:`Session` keeps the state the service returned after each block and
sends it back for the next one; it never computes a block itself. Changing
any setting (``target``, ``draft``, ``mode``, ``width``, ``seed``, ``limit``,
``eos``, ``drafts``, ``sampling``) starts a new session: empty prefix, position 0, counters 0 (SPEC
section 8).
"""

from __future__ import annotations

from typing import Any, Iterator, Optional, Sequence, Union

from .api.sessions import SessionsApi
from .types import Block, Config, Counters, Proposal, State, StepResult, Trace, TRACE_FORMAT


def _setting(name: str) -> property:
    def get(self: "Session") -> Any:
        return getattr(self._config, name)

    def set(self: "Session", value: Any) -> None:
        self.configure(**{name: value})

    return property(get, set, doc=f"The session's ``{name}``; setting it starts a new session (SPEC section 8).")


class Session:
    """A decoding session driven block by block through the block routes.

    Made by :meth:`Client.session`; ``client`` is anything with the block
    routes (:class:`~specdec_client.api.sessions.SessionsApi`, which
    :class:`~specdec_client.Client` is). Attributes: ``blocks`` (the committed
    :class:`Block` s, oldest first), ``output`` (committed tokens),
    ``counters`` (totals), ``position`` (next unused draw), ``done`` (bool)
    and ``done_reason`` (``None``, ``"limit"`` or ``"eos"``), ``state`` (the
    :class:`State` the next request sends), ``proposal`` (the pending
    uncommitted proposal, if :meth:`draft` was called). Iterating yields the
    blocks so far, then steps until the session is done.

    Methods raise the client's exceptions, e.g.
    :class:`~specdec_client.errors.SessionDone` for a block asked of a done
    session.
    """

    target = _setting("target")
    draft_model = _setting("draft")  # ``draft`` itself is the method that drafts
    mode = _setting("mode")
    width = _setting("width")
    seed = _setting("seed")
    limit = _setting("limit")
    eos = _setting("eos")
    drafts = _setting("drafts")
    sampling = _setting("sampling")

    def __init__(self, client: SessionsApi, config: Config):
        self.client = client
        self._config = config
        self.reset()

    # ------------------------------------------------------------ settings

    @property
    def config(self) -> Config:
        """The settings (as the service echoed them once a block is done)."""
        return self._state.config

    def configure(self, **changes: Any) -> "Session":
        """Change settings (any of ``target``, ``draft``, ``mode``, ``width``,
        ``seed``, ``limit``, ``eos``, ``drafts``, ``sampling``) and start a new session (SPEC section 8).
        Returns the session. Raises
        :class:`~specdec_client.errors.InvalidSettings` (a ``TypeError``) for
        an unknown setting."""
        self._config = self._config.replace(**changes)
        self.reset()
        return self

    def reset(self) -> "Session":
        """Back to the empty prefix, position 0, counters 0, same settings."""
        self._state = State(self._config)
        self._blocks: list[Block] = []
        self._proposal: Optional[Proposal] = None
        self._done: Optional[str] = None
        return self

    # ------------------------------------------------------------ views

    @property
    def state(self) -> State:
        """What the next request sends: settings, committed, position, counters."""
        return self._state

    @property
    def blocks(self) -> tuple[Block, ...]:
        """The committed blocks, oldest first."""
        return tuple(self._blocks)

    @property
    def output(self) -> tuple[str, ...]:
        """The committed tokens."""
        return tuple(self._state.committed)

    @property
    def counters(self) -> Counters:
        """The session's total work counters (SPEC section 7)."""
        return self._state.counters

    @property
    def position(self) -> int:
        """The index of the next unused draw (SPEC section 2)."""
        return self._state.position

    @property
    def done(self) -> bool:
        """Whether the session has ended (limit or EOS, SPEC section 6)."""
        return self._done is not None

    @property
    def done_reason(self) -> Optional[str]:
        """``None`` while running, else ``"limit"`` or ``"eos"``."""
        return self._done

    @property
    def proposal(self) -> Optional[Proposal]:
        """The pending proposal from :meth:`draft`, not yet verified."""
        return self._proposal

    def __repr__(self) -> str:
        state = f"done ({self._done})" if self._done else "open"
        return (f"<Session draft={self._config.draft!r} seed={self._config.seed} width={self._config.width} "
                f"mode={self._config.mode} blocks={len(self._blocks)} output={' '.join(self.output) or '∅'} {state}>")

    # ------------------------------------------------------------ actions

    def draft(self) -> Proposal:
        """The uncommitted proposal of the next block (``POST /v1/draft``).
        The session does not move; the proposal is kept as :attr:`proposal`
        for :meth:`verify` (asking again returns the same one, no request)."""
        if self._proposal is None:
            self._proposal = self.client.draft(self._state)
        return self._proposal

    def verify(self, tokens: Union[Proposal, Sequence[str], None] = None) -> Block:
        """Verify a proposal and commit its block (``POST /v1/verify``).

        ``tokens``: the proposal to verify; by default the pending one from
        :meth:`draft` (drafted now if there is none). A tree of shape
        ``"distinct"`` or ``"beam"`` (SPEC 12) is drafted by the service itself,
        so its pending proposal is verified by ``POST /v1/step``: the same draws
        draft the same tree. Returns the block; the session advances. Raises
        :class:`~specdec_client.errors.InvalidInput` for a proposal the rules
        refuse (the session does not move)."""
        if tokens is None:
            self.draft()
            if self._drafts_its_own_tree():
                return self.step()
            tokens = self._proposal
        assert tokens is not None
        return self._advance(self.client.verify(self._state, tokens))

    def _drafts_its_own_tree(self) -> bool:
        tree = self._state.config.tree
        return self._state.config.mode == "tree" and tree is not None and tree.shape in ("distinct", "beam")

    commit = verify

    def step(self) -> Block:
        """Draft and verify the next block in one request (``POST /v1/step``);
        returns the block. Any pending proposal is dropped (the service drafts
        the same one again)."""
        return self._advance(self.client.step(self._state))

    def run(self) -> Trace:
        """Step until the session is done; returns :meth:`trace`."""
        while not self.done:
            self.step()
        return self.trace()

    def __iter__(self) -> Iterator[Block]:
        """The blocks so far, then each new block until the session is done."""
        yield from list(self._blocks)
        while not self.done:
            yield self.step()

    def trace(self) -> Trace:
        """The session so far in the ``specdec-trace/1`` format (the same
        trace as ``POST /v1/runs`` once the session is done)."""
        return Trace(self._state.config, tuple(self._blocks), tuple(self._state.committed), self._state.counters,
                     self._state.position, self._done, format=TRACE_FORMAT)

    def _advance(self, result: StepResult) -> Block:
        self._state = result.state
        self._blocks.append(result.block)
        self._proposal = None
        self._done = result.done
        return result.block

