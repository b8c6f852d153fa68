"""What the engine's shortcuts inside its frozen values save on a route, each measured against
the plain code in the same process, interleaved (A B A B ...), so that the load of a shared
machine falls on both alike.

    python bench/frozen_values.py [--rounds 15]

The route is ``POST /v1/step`` through the Flask application's test client (body reading,
parsing, the block, the answer), whole sessions with the answer's state sent back, for three
configs: the toy (``toy``), the toy with sampling parameters (``sampling``) and a custom 64-label
table with four-decimal entries sent as compact JSON (``table``). Each shortcut is switched off by replacing one function with the plain code
(the plain code is stated here, beside its name):

- ``parse_config memo``: configs of built-in models memoised (on tuples keyed by each value's
  type); plain: every block's config read afresh;
- ``next_state``: the next :class:`State` set through its ``__dict__`` in one step; plain: the
  dataclass's own constructor;
- ``ProcessedRows memo``: a config's processed rows kept in the frozen :class:`Config`'s
  ``__dict__``; plain: read from the processed tables' memo at every block;
- ``_SpecKey``: a custom table's memo key as marshal's bytes, hashed on its ends; plain: its
  ``repr``, hashed whole;
- ``model memo``: custom tables memoised by their exact JSON; plain: every block's tables read
  afresh (reported for scale: the memo itself is not in question).

Prints, per shortcut and config, the CPU milliseconds of one step with and without it (the
median over ``--rounds`` of the best of 3 repetitions) and the ratio plain / shortcut (above 1:
the shortcut saves that much). Times are process CPU time (``time.process_time``). Results are in
docs/bench-engine.md ("Shortcuts inside frozen values").
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from contextlib import contextmanager
from typing import Callable, ContextManager, Iterator

from specdec_service.app import create_app
from specdec_service.engine import block_loop, models, sampling, state
from specdec_service.engine.rows import Rows

CLIENT = create_app().test_client()


def dumps(value: object) -> bytes:
    """A client's compact JSON, as orjson writes it (the service's fast reading path)."""
    return json.dumps(value, separators=(",", ":")).encode()


def table(seed: int, n: int = 64) -> dict:
    """A custom bigram model of ``n`` labels, rows of random weights as floats."""
    rng = random.Random(seed)
    vocab = [f"t{i}" for i in range(n)]

    def row() -> list[float]:  # four decimals each (0.0123), summing to 1
        w = [rng.randint(1, 300) for _ in vocab]
        r = [x * 10000 // sum(w) for x in w]
        r[0] += 10000 - sum(r)
        return [x / 10000 for x in r]

    return {"vocab": vocab, "start": row(), "next": {v: row() for v in vocab}}


CONFIGS = {
    "toy": ({"draft": "biased", "seed": 1, "width": 3}, 20),
    "sampling": ({"draft": "biased", "seed": 1, "width": 3, "sampling": {"temperature": 0.7, "top_p": 0.9}}, 20),
    "table": ({"target": table(1), "draft": table(2), "seed": 1, "width": 3}, 1),
}
"""name -> (config, sessions per repetition)."""


def session(config: dict) -> int:
    """One whole session through ``POST /v1/step``; returns its number of blocks."""
    body, steps = dumps({"config": config}), 0
    while True:
        answer = CLIENT.post("/v1/step", data=body, content_type="application/json")
        assert answer.status_code == 200, answer.get_data(as_text=True)[:300]
        steps += 1
        out = answer.get_json()
        if out["done"]:
            return steps
        body = dumps(out["state"])


def per_step(config: dict, sessions: int) -> float:
    """CPU milliseconds of one step: the best of 3 repetitions of ``sessions`` sessions."""
    best = float("inf")
    for _ in range(3):
        start, steps = time.process_time(), 0
        for _ in range(sessions):
            steps += session(config)
        best = min(best, (time.process_time() - start) / steps)
    return best * 1e3


@contextmanager
def plain_configs() -> Iterator[None]:
    saved = state.parse_config
    state.parse_config = state._parse_config
    try:
        yield
    finally:
        state.parse_config = saved


@contextmanager
def plain_models() -> Iterator[None]:
    saved = models.parse_model
    models.parse_model = models._parse_model
    try:
        yield
    finally:
        models.parse_model = saved


@contextmanager
def replaced(owner: object, name: str, plain: object) -> Iterator[None]:
    saved = getattr(owner, name)
    setattr(owner, name, plain)
    try:
        yield
    finally:
        setattr(owner, name, saved)


def _plain_read(self, config) -> Rows:
    s = self.sampling
    draft = sampling._table(config.draft, s).__getitem__ if s.draft == "processed" else config.draft.after
    return Rows(sampling._table(config.target, s).__getitem__, draft)


def _plain_key_init(self, spec: dict) -> None:
    self.spec, self.text = spec, repr(spec)
    self._hash = hash(self.text)


SHORTCUTS: dict[str, tuple[Callable[[], ContextManager[None]], tuple[str, ...]]] = {
    "next_state": (lambda: replaced(block_loop, "next_state", state.State), ("toy",)),
    "ProcessedRows memo": (lambda: replaced(sampling.ProcessedRows, "read", _plain_read), ("sampling",)),
    "_SpecKey": (lambda: replaced(models._SpecKey, "__init__", _plain_key_init), ("table",)),
    "parse_config memo": (plain_configs, ("toy", "sampling")),
    "model memo": (plain_models, ("table",)),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    for name, (plain, configs) in SHORTCUTS.items():
        for key in configs:
            config, sessions = CONFIGS[key]
            session(config)  # warm: the memos a long-running worker holds
            kept, removed = [], []
            for _ in range(args.rounds):
                kept.append(per_step(config, sessions))
                with plain():
                    removed.append(per_step(config, sessions))
            a, b = statistics.median(kept), statistics.median(removed)
            ratios = sorted(r / k for k, r in zip(kept, removed))
            print(f"{name:20} {key:9} with {a:8.4f} ms  without {b:8.4f} ms  ratio {b / a:.3f}"
                  f"  (rounds' ratios {ratios[0]:.3f}-{ratios[-1]:.3f})")


if __name__ == "__main__":
    main()
