"""Every bound on a caller's input, in one place.

The engine's parsers (:mod:`.state`, :mod:`.models`, :mod:`.draws`, the
grading parsers), the marshmallow schemas of the HTTP layer and so the
OpenAPI contract all read these values; ``tests/test_bounds.py`` checks that
the contract, ``trace.schema.json`` and the parsers agree on each of them
(the parser accepts the bound and refuses one past it).

Sources: SPEC section 1 (vocabularies, labels), 2 (seeds and positions are
JSON-safe integers), 7 (counters), 8 (width, limit); the service's own
limits on work per request (draw slices, grading batches and samples,
``docs/service.md``, ``docs/grading.md``).
"""

from __future__ import annotations

from typing import Any

MAX_SAFE_INTEGER = 2**53 - 1
"""The largest integer every JSON implementation reads exactly (RFC 8259
section 6): the bound of seeds, positions and counters (SPEC sections 2, 7)."""
MAX_SEED = MAX_SAFE_INTEGER
"""Seeds are 0..2^53-1 (SPEC section 2)."""
MAX_POSITION = MAX_SAFE_INTEGER
"""Draw positions are 0..2^53-1 (SPEC section 2)."""
MAX_COUNTER = MAX_SAFE_INTEGER
"""Each work counter is 0..2^53-1 (SPEC section 7)."""

MIN_WIDTH, MAX_WIDTH = 1, 16
"""Proposals a block, ``width`` (SPEC section 8)."""
MIN_DRAFTS, MAX_DRAFTS = 1, 8
"""Draft chains a block in mode tree, ``drafts`` (SPEC section 11)."""
MIN_BRANCHING, MAX_BRANCHING, MAX_BRANCHING_DEPTHS = 1, 8, 16
"""``tree.branching`` (SPEC section 12): 1 to 16 depths, each 1 to 8 children a node."""
MAX_TREE_NODES = 256
"""Nodes a distinct draft tree holds at most: the sum over i = 1..min(width, limit) of
b_1 * ... * b_i (SPEC section 12)."""
MIN_TOP_K, MAX_TOP_K = 1, 64
"""Bounds of ``sampling.top_k`` (SPEC section 9)."""
MIN_TEMPERATURE, MAX_TEMPERATURE = "0.05", 20
"""Bounds of a positive ``sampling.temperature`` (SPEC section 9: 0, or 0.05 to 20); the lower one
as the decimal written (read exactly)."""
MIN_LIMIT, MAX_LIMIT = 1, 256
"""Tokens a session commits at most, ``limit`` (SPEC section 8)."""
MIN_VOCAB, MAX_VOCAB = 2, 64
"""Labels of a custom model's vocabulary (SPEC section 1)."""
MIN_LABEL, MAX_LABEL = 1, 16
"""Characters of a token label (SPEC section 1)."""

MAX_DRAWS_SLICE = 4096
"""Draws one ``GET /v1/draws`` returns at most (``count``)."""
MAX_TRACES = 1000
"""Traces in one grading batch (``POST /v1/grade`` with ``{"traces": [...]}``)."""
MAX_SAMPLES = 10**6
"""Samples in one distribution grade (the sum of the counts)."""
MAX_M = 4
"""Longest output prefix a distribution grade compares (``m``)."""
MAX_CELLS = 100_000
"""Entries of ``counts`` in one distribution grade."""
MIN_DEPTH, MAX_DEPTH = 1, 8
"""Bounds of an analysis' ``depth``: the output distribution is over the first 1-8 tokens."""
MAX_DRAFT_COST = 100
"""The largest ``draft_cost`` of an analysis (a draft step costs at most 100 target passes)."""


def int_in(value: Any, low: int, high: int) -> bool:
    """Whether ``value`` is a JSON integer from ``low`` to ``high`` inclusive."""
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
