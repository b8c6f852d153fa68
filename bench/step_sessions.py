"""Whole sessions through ``POST /v1/step`` in process (the Flask application's test client:
body reading, parsing, the block, the answer), the answer's state sent back each block, with a
client's compact JSON (as orjson writes it: the service's fast reading path). Shared by
``bench/paired.py --routes`` and ``bench/frozen_values.py``; the service is the first
``specdec_service`` on the path."""

from __future__ import annotations

import json
import random

from specdec_service.app import create_app

CLIENT = create_app().test_client()


def dumps(value: object) -> bytes:
    """``value`` as compact JSON bytes."""
    return json.dumps(value, separators=(",", ":")).encode()


def table(seed: int, n: int = 64) -> dict:
    """A custom bigram model of ``n`` labels, each row random four-decimal entries (0.0123)
    summing to 1."""
    rng = random.Random(seed)
    vocab = [f"t{i}" for i in range(n)]

    def row() -> list[float]:
        w = [rng.randint(1, 300) for _ in vocab]
        r = [x * 10000 // sum(w) for x in w]
        r[0] += 10000 - sum(r)
        return [x / 10000 for x in r]

    return {"vocab": vocab, "start": row(), "next": {v: row() for v in vocab}}


CONFIGS = {
    "toy": {"draft": "biased", "seed": 1, "width": 3},
    "sampling": {"draft": "biased", "seed": 1, "width": 3, "sampling": {"temperature": 0.7, "top_p": 0.9}},
    "table": {"target": table(1), "draft": table(2), "seed": 1, "width": 3},
}
"""The toy, the toy with sampling parameters (SPEC 9), a custom 64-label table."""


def session(config: dict) -> int:
    """One whole session of ``config``; returns its number of blocks."""
    body, steps = dumps({"config": config}), 0
    while True:
        answer = CLIENT.post("/v1/step", data=body, content_type="application/json")
        assert answer.status_code == 200, answer.get_data(as_text=True)[:300]
        steps += 1
        out = answer.get_json()
        if out["done"]:
            return steps
        body = dumps(out["state"])
