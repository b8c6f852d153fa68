"""What the engine's shortcuts inside its frozen values save on a route, each measured against
the plain code in the same process, interleaved (A B A B ...), so that the load of a shared
machine falls on both alike.

    python bench/frozen_values.py [--rounds 15]

The route is ``POST /v1/step`` through the Flask application's test client (body reading,
parsing, the block, the answer), whole sessions of a custom 64-label table (four-decimal entries,
sent as compact JSON) with the answer's state sent back. Each shortcut is switched off by
replacing one function with the plain code (stated here, beside its name). Three more were
measured this way on the toy and sampling sessions and removed, as they saved under 5% of a step
(docs/bench-engine.md, "Shortcuts inside frozen values"): the next state set through its
``__dict__``, the memo of configs, the processed rows kept inside a frozen config.

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
import statistics
import time
from contextlib import contextmanager
from typing import Callable, ContextManager, Iterator

from specdec_service.engine import models
from step_sessions import CONFIGS, session

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


def _plain_key_init(self, spec: dict) -> None:
    self.spec, self.text = spec, repr(spec)
    self._hash = hash(self.text)


SHORTCUTS: dict[str, tuple[Callable[[], ContextManager[None]], tuple[str, ...]]] = {
    "_SpecKey": (lambda: replaced(models._SpecKey, "__init__", _plain_key_init), ("table",)),
    "model memo": (plain_models, ("table",)),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    for name, (plain, configs) in SHORTCUTS.items():
        for key in configs:
            config, sessions = CONFIGS[key], 1
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
