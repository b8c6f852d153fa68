"""specdec_client: a thin Python client of the specdec service.

HTTP and types only, no decoding logic of its own; one runtime dependency
(requests). Quick start::

    from specdec_client import Client

    client = Client("http://localhost:8000")
    s = client.session(draft="biased", seed=1, width=3)
    proposal = s.draft()      # the uncommitted proposal
    block = s.verify()        # verify it, commit the block
    trace = s.run()           # on to the end
    report = client.replay(trace)
    assert report.ok

See ``docs/sdk.md`` for the guide and the ``specdec`` command line.
"""

__version__ = "0.1.0"

from .client import DEFAULT_URL, Client, make_retry
from .errors import (
    APIError, BadRequest, ConnectionFailed, FieldError, InvalidInput, InvalidRequestBody, InvalidResponse,
    InvalidSettings,
    MethodNotAllowed, NotFound, PayloadTooLarge, RequestTimedOut, ServerError, SessionDone, SpecdecError,
    TraceFormatError, UnsupportedMediaType,
)
from .traces import Divergence, MISSING, ReplayReport, diff, load_trace, replay, save_trace
from .reports import (
    Acceptance, Agreement, Cell, Check, Diagnosis, DistributionReport, Failure, FirstDivergence, GradeBatch,
    GradeReport, GradeSummary, ImpossiblePrefix, Reference, Suite, SuiteConfig, SuiteSummary,
)
from .transport import Transport
from .analysis import (
    Analysis, ContextAnalysis, Expected, Fitted, Leviathan, NaiveOutput, NodeAcceptance, OutputComparison, SweepPoint,
    TreeAnalysis,
)
from .session import Session
from .tables import TableModel
from .types import (
    Block, BlockCorrection, BlockVerificationStep, Bonus, Config, Correction, Counters, DraftStep, Draw, Health,
    ModelInfo, NodeStep, Proposal, ResidualTest, Sampling, State, StepResult, TargetOnlyTest, TargetSample, Trace,
    TRACE_FORMAT, Tree, TreeNode, TreeTest, VerificationStep,
)

__all__ = [
    "Analysis", "ContextAnalysis", "Expected", "Fitted", "Leviathan", "NaiveOutput", "NodeAcceptance",
    "OutputComparison", "SweepPoint", "TreeAnalysis",
    "Acceptance", "Agreement", "Cell", "Check", "Diagnosis", "DistributionReport", "Failure", "FirstDivergence",
    "GradeBatch", "GradeReport", "GradeSummary", "ImpossiblePrefix", "Reference", "Suite", "SuiteConfig",
    "SuiteSummary", "Transport",
    "APIError", "BadRequest", "Block", "BlockCorrection", "BlockVerificationStep", "Bonus", "Client", "Config", "ConnectionFailed", "Correction", "Counters",
    "DEFAULT_URL", "Divergence", "DraftStep", "Draw", "FieldError", "Health", "InvalidInput", "InvalidRequestBody", "InvalidResponse",
    "InvalidSettings", "MISSING", "MethodNotAllowed", "ModelInfo", "NodeStep", "NotFound", "PayloadTooLarge", "Proposal",
    "ReplayReport", "ResidualTest", "TargetOnlyTest", "Tree", "TreeNode", "RequestTimedOut", "Sampling", "ServerError", "Session", "SessionDone", "SpecdecError", "State", "StepResult",
    "TableModel",
    "TRACE_FORMAT", "TargetSample", "Trace", "TraceFormatError", "TreeTest", "UnsupportedMediaType", "VerificationStep",
    "diff", "load_trace", "make_retry", "replay", "save_trace",
]
