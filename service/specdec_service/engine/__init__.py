"""The speculative decoding engine: pure Python, no Flask, no I/O.

It follows ``SPEC.md`` to the letter (models and exact rationals, the
SplitMix64 draw stream, the order of draws, speculative / greedy /
autoregressive blocks, EOS, counters) and records every row, draw and
decision, so that any trace it produces can be reproduced from the rules
alone. The public names:

- models: :data:`TOY`, :data:`ALIGNED`, :data:`BIASED`, :func:`parse_model`,
  :func:`builtin_models`;
- draws: :func:`draw`, :func:`draw_slice`;
- sessions: :func:`parse_config`, :func:`parse_state`, :class:`Config`,
  :class:`State`, :class:`Counters`;
- blocks: :func:`draft`, :func:`verify`, :func:`step`; the one block function
  :func:`play` (draft -> verify -> commit) over a mode's decoder (:mod:`.decoders`:
  :data:`MODE_RULES`, :class:`Decoder`: a proposal rule of :mod:`.proposals`, a
  verifier of :mod:`.verifiers`, the row reader of :mod:`.rows`);
- whole runs: :func:`run`, :func:`run_json`, :data:`TRACE_FORMAT`.

Errors: :class:`InvalidInput` (bad input, with the path of each fault) and
:class:`SessionDone` (a block asked of an ended session).
"""

from .block_loop import StepResult, commit, draft, draft_room, play, step, verify
from .distributions import Dist, accepts, argmax, residual, sample
from .bounds import MAX_DRAWS_SLICE, MAX_LIMIT, MAX_POSITION, MAX_SEED, MAX_WIDTH
from .draws import Draw, draw, draw_slice
from .errors import Fault, InvalidInput, SessionDone, SpecdecError, pointer
from .models import ALIGNED, BIASED, TOY, Model, builtin_models, parse_model
from .decoders import AUTOREGRESSIVE, GREEDY, MODE_RULES, SPECULATIVE, Decoder, RuleSet
from .state import (
    COUNTER_NAMES, MODES, Config, Counters, State, parse_config, parse_state,
)
from .trace import TRACE_FORMAT, TRACE_SCHEMA_PATH, run, run_json, trace_of, trace_schema

__all__ = [
    "ALIGNED", "AUTOREGRESSIVE", "BIASED", "COUNTER_NAMES", "Config", "Counters", "Decoder", "Dist", "Draw", "Fault", "GREEDY", "InvalidInput",
    "MAX_DRAWS_SLICE", "MAX_LIMIT", "MODE_RULES", "MAX_POSITION", "MAX_SEED", "MAX_WIDTH", "MODES", "Model",
    "RuleSet", "SPECULATIVE", "SessionDone", "SpecdecError", "State", "StepResult", "TOY", "TRACE_FORMAT", "TRACE_SCHEMA_PATH",
    "accepts", "argmax", "builtin_models", "commit", "draft", "draft_room", "draw", "draw_slice", "parse_config",
    "parse_model", "parse_state", "play", "pointer", "residual", "run", "run_json", "sample", "step",
    "trace_of", "trace_schema", "verify",
]
