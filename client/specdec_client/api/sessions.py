"""``POST /v1/draft``, ``POST /v1/verify``, ``POST /v1/step``: one block at a time.

The service is stateless: each call sends a whole state and gets the next
one back (SPEC sections 4-8). :class:`specdec_client.session.Session` keeps
that state between calls.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence, Union

from ..types import Config, Proposal, State, StepResult, proposal_body
from . import ApiGroup

StateLike = Union[State, Config, Mapping[str, Any]]
"""A session state: a :class:`State`, its JSON form, or a :class:`Config`
(the empty session of those settings)."""


def state_body(state: StateLike) -> dict[str, Any]:
    """The JSON body of a state: a :class:`State` as sent/received, a
    :class:`Config` as the empty session, a mapping as is."""
    if isinstance(state, State):
        return state.to_dict()
    if isinstance(state, Config):
        return {"config": state.to_dict()}
    if isinstance(state, Mapping):
        return dict(state)
    raise TypeError(f"a state is a State, a Config or a JSON object, not {type(state).__name__}")


class SessionsApi(ApiGroup):
    """The block routes."""

    def draft(self, state: StateLike) -> Proposal:
        """``POST /v1/draft``: the uncommitted proposal of the next block of
        ``state`` (SPEC section 4.1). Nothing is committed.
        Raises :class:`~specdec_client.errors.SessionDone` for an ended session."""
        return self.transport.call("POST", "/v1/draft", Proposal.from_dict, json=state_body(state))

    def verify(self, state: StateLike, proposal: Union[Proposal, Sequence[str], Sequence[Sequence[str]]]) -> StepResult:
        """``POST /v1/verify``: verify ``proposal`` (a :class:`Proposal` or
        token labels: 1..min(width, limit - committed), none when
        autoregressive) in ``state`` and commit the block (SPEC 4.2-4.4).
        Raises :class:`~specdec_client.errors.InvalidInput` for a proposal the
        rules refuse, :class:`~specdec_client.errors.SessionDone` when done. In mode tree the
        proposal is D chains: a :class:`Proposal` with ``chains`` or a list of lists of labels
        (SPEC section 11)."""
        body = {"state": state_body(state), "proposal": proposal_body(proposal)}
        return self.transport.call("POST", "/v1/verify", StepResult.from_dict, json=body)

    def step(self, state: StateLike) -> StepResult:
        """``POST /v1/step``: draft and verify the next block of ``state``;
        returns the block, the next state and ``done``."""
        return self.transport.call("POST", "/v1/step", StepResult.from_dict, json=state_body(state))
