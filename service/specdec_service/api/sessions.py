"""``POST /v1/draft``, ``POST /v1/verify``, ``POST /v1/step``: one block of a
session whose whole state the caller sends (the service keeps nothing).

The state a response returns can be sent back unchanged to take the next
block; a block asked of a finished session is a 409 (SPEC section 6).
"""

from __future__ import annotations

from functools import lru_cache

from .. import engine
from ..budget import BUDGETS, session_work
from ..engine import InvalidInput, parse_state
from ..engine.state import parse_verify_chains
from .bodies import read_json
from .problems import json_response
from .routes import ApiBlueprint, example, link
from .schemas import StepOut
from .trace_components import ref

blueprint = ApiBlueprint(
    "sessions", __name__, tag="sessions",
    description="One block at a time: the caller sends the whole state and gets the next one back (SPEC 4-8).")
_PROBLEMS = (400, 409, 413, 415, 422)

SEED1 = {"config": {"draft": "biased", "seed": 1}}
"""The SPEC section 4 worked example: target toy, draft biased, width 3, seed 1."""


@lru_cache(maxsize=1)
def _examples() -> dict:
    """The worked example's documents: its proposal, its first two blocks."""
    first = engine.step(parse_state(SEED1))
    return {
        "proposal": engine.draft(parse_state(SEED1)),
        "state": {
            "seed1": example("SPEC section 4 worked example: toy target, biased draft, seed 1, empty prefix", SEED1),
            "seed1_next": example("The state returned by the first block, sent back unchanged",
                                  first.state.to_json()),
        },
        "step": {
            "seed1": example("Proposes A A C; accepts A, rejects A, corrects to C; commits A C, position 6",
                             first.to_json()),
            "seed1_next": example("The second block of the same session", engine.step(first.state).to_json()),
        },
    }


def _state_from_body(route: str) -> engine.State:
    """The state a body holds, its one block within the route's work budget (``budget.session_work``,
    computed before any exact work: a 422 of type over-budget at ``#/config`` otherwise)."""
    state = read_json(parse_state)
    BUDGETS[route].check(session_work(state.config, 1), pointer="#/config")
    return state


_NEXT = {
    "next_block": link("POST", "/v1/step", "The next block: the answer's `state` sent back unchanged.",
                       "$response.body#/state"),
    "next_proposal": link("POST", "/v1/draft", "The next block's proposal, from the answer's `state`.",
                          "$response.body#/state"),
}
"""The 200's links of ``/v1/step`` and ``/v1/verify``: the stateless session goes on from its ``state``."""


@blueprint.operation(
    "POST", "/v1/draft", summary="Draft a proposal",
    operation_id="draftProposal",
    description="The body is a session state. Returns the uncommitted proposal of the next block: up to "
                "min(width, limit - committed) draft tokens, each with its context, draft row q and draw "
                "(SPEC section 4.1); in mode tree the D chains, chain 1's draws first (SPEC section 11.1), as a "
                "`TraceTreeProposal`. Nothing is committed; the position does not move.",
    body="StateIn", examples=lambda: _examples()["state"], ok={"oneOf": [ref("proposal"), ref("tree_proposal")]},
    ok_description="The proposal (in mode tree, the chains).", problems=_PROBLEMS,
    ok_examples=lambda: {"seed1": example("Draws 0.5666, 0.7458, 0.9710 propose A, A, C", _examples()["proposal"])})
def draft():
    """The uncommitted proposal of the next block (SPEC section 4.1):
    ``{"tokens", "steps"}`` (and ``"chains"`` in mode tree, SPEC 11.1). The state is not advanced. A proposal whose
    draws would run past position 2^53-1 is a 422 at ``#/position``."""
    return json_response(engine.draft(_state_from_body("POST /v1/draft")))


@blueprint.operation(
    "POST", "/v1/verify", summary="Verify a proposal",
    operation_id="verifyProposal",
    description="Verifies a caller's proposal (1..min(width, limit - committed) tokens, each with positive draft "
                "probability in its context; empty in mode autoregressive) against the target and commits the "
                "block (SPEC sections 4.2-4.4); in mode tree `chains` instead of `tokens`, exactly `drafts` chains "
                "(SPEC section 11). The draft draws are used as if drafted, so verifying the "
                "proposal of `POST /v1/draft` equals `POST /v1/step`. Faults point under `#/state` or `#/proposal`.",
    body="VerifyIn",
    examples=lambda: {"seed1": example("The worked example's own proposal",
                                       {"state": SEED1, "proposal": {"tokens": _examples()["proposal"]["tokens"]}})},
    ok=StepOut, ok_description="The block, the next state and whether the session is done.",
    problems=_PROBLEMS, ok_examples=lambda: {"seed1": _examples()["step"]["seed1"]}, links=_NEXT)
def verify():
    """Verify a caller's proposal in a state and commit the block:
    ``{"block", "state", "done"}``. Faults point under ``#/state`` or
    ``#/proposal``."""
    state, tokens, chains = read_json(parse_verify_chains)
    BUDGETS["POST /v1/verify"].check(session_work(state.config, 1), pointer="#/state/config")
    try:
        result = engine.verify(state, tokens, chains)
    except InvalidInput as error:
        raise InvalidInput(
            [type(f)(("proposal" if f.path[:1] in (("tokens",), ("chains",)) else "state",) + f.path, f.message)
             for f in error.faults], error.count) from None
    return json_response(result.to_json())


@blueprint.operation(
    "POST", "/v1/step", summary="Take the next block",
    operation_id="stepSession",
    description="The body is a session state (only `config` is required: `committed` [], `position` 0 and "
                "`counters` zeros may be left out). Drafts, verifies and commits one block (SPEC sections 4-6) "
                "and returns it with every row, draw and decision, and the next state, which can be sent back "
                "unchanged. A finished session (`done` not null) is a 409.",
    body="StateIn", examples=lambda: _examples()["state"], ok=StepOut,
    ok_description="The block, the next state and whether the session is done.",
    problems=_PROBLEMS, ok_examples=lambda: _examples()["step"], links=_NEXT)
def step():
    """The next block (draft, verify, correction or bonus) and the next state:
    ``{"block", "state", "done"}`` (SPEC sections 4-6)."""
    return json_response(engine.step(_state_from_body("POST /v1/step")).to_json())
