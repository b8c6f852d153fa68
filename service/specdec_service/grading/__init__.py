"""Grading student implementations of speculative sampling. Pure Python, no Flask.

- :func:`grade` / :func:`grade_many`: trace-exact grading of ``specdec-trace/1`` traces against
  the reference recomputed from each trace's own settings, with the first divergence, named
  checks for partial credit (:data:`CHECKS`) and a diagnosis from the :data:`CATALOGUE` of
  classic mistakes (:mod:`.grader`, :mod:`.checks`, :mod:`.compare`, :mod:`.check_names`);
- :data:`CATALOGUE`: the mistakes, each a mode's correct decoder with one rule changed (a
  proposal rule, a verifier or a part of it), decoded by the engine's one block function
  (:mod:`.catalogue`, :mod:`.faulty`);
- :func:`grade_distribution`: distribution-level grading of sampled outputs or prefix counts
  against the exact target distribution (:mod:`.distribution`), its body stated once as JSON
  Schema (:data:`DISTRIBUTION_REQUEST`, :mod:`.submissions`), which the parser checks and the
  contract publishes;
- :func:`grade_samples`: whole sampled sessions against the target's law, every position
  tested with one family-wise error rate, the catalogued mistake named from exact laws
  (:mod:`.samples`).

Errors: :class:`~specdec_service.engine.InvalidInput` (HTTP 422) for malformed input.
"""

from .catalogue import BY_ID, CATALOGUE, Mistake
from .compare import TOLERANCE, first_difference
from .distribution import (
    DEFAULT_ALPHA, MAX_CELLS, MAX_M, MAX_SAMPLES, grade_distribution, prefix_distribution,
)
from .faulty import CORRECT, faulty_run, faulty_step, swapped
from .grader import MAX_TRACES, diagnose_trace, grade, grade_many
from .submissions import DISTRIBUTION_REQUEST, GRADE_BATCH, SAMPLES_REQUEST, check_batch
from .samples import grade_samples
from .check_names import CHECKS, RULES
from .validate import grading_schema, validate_trace

__all__ = [
    "BY_ID", "CATALOGUE", "CHECKS", "CORRECT", "DEFAULT_ALPHA", "DISTRIBUTION_REQUEST", "GRADE_BATCH", "MAX_CELLS", "MAX_M", "MAX_SAMPLES",
    "MAX_TRACES", "Mistake", "RULES", "TOLERANCE", "check_batch", "diagnose_trace", "faulty_run", "faulty_step", "first_difference",
    "SAMPLES_REQUEST", "grade", "grade_distribution", "grade_samples", "grade_many", "grading_schema", "prefix_distribution", "swapped", "validate_trace",
]
