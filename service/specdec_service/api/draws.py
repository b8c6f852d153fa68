"""``GET /v1/draws``: a slice of a seed's SplitMix64 draw stream (SPEC section 2)."""

from __future__ import annotations

from ..engine import MAX_DRAWS_SLICE, InvalidInput, draw_slice
from .bodies import load_query
from .problems import conditional, invalid, json_response
from .routes import ApiBlueprint, example
from .schemas import DrawsOut, DrawsQuery

blueprint = ApiBlueprint("draws", __name__, tag="draws", description="The SplitMix64 draw stream (SPEC section 2).")
_QUERY = DrawsQuery()


@blueprint.operation(
    "GET", "/v1/draws", summary="A slice of the draw stream",
    operation_id="getDraws",
    description=f"`count` (1-{MAX_DRAWS_SLICE}) consecutive draws of `seed` from `position` "
                "(position + count - 1 <= 2^53-1), each with its raw 64-bit value in hex (SPEC section 2). "
                "Parameters are decimal integers; an unknown or repeated parameter is a 422.",
    parameters=[{"in": "query", "schema": DrawsQuery}],
    ok=DrawsOut, ok_description="The draws (cacheable for ever).", problems=(400, 422),
    conditional=True, immutable=True,
    ok_examples=lambda: {"seed1": example("seed=1&position=0&count=4 (SPEC section 2 test vector)",
                                          {"draws": [d.to_json() for d in draw_slice(1, 0, 4)]})})
def draws():
    """``count`` (1-4096) draws of ``seed`` from ``position``:
    ``{"draws": [{"position", "u", "hex"}, ...]}``. Bad parameters are a 422.
    The answer is a pure function of the query (SPEC section 2): cacheable for ever
    (``Cache-Control`` :data:`~.problems.IMMUTABLE`), with an ``ETag`` (304 on a match)."""
    query = load_query(_QUERY)
    try:
        slice_ = draw_slice(query["seed"], query["position"], query["count"])
    except InvalidInput as error:  # position + count - 1 beyond 2^53-1
        raise invalid([{"parameter": str(f.path[0]), "detail": f.message} for f in error.faults]) from None
    return conditional(json_response({"draws": [d.to_json() for d in slice_]}), immutable=True)
