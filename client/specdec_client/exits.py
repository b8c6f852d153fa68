"""The exit statuses of the ``specdec`` command, one per kind of outcome a script may act on.

====  =====================================================================================
0     success (``replay``: the trace matches; ``grade``: every file or config passed)
1     the check ran and failed: ``replay`` found a divergence, ``grade`` a failed or malformed
      file or config
2     usage: a bad command line (argparse's own status), or an input the command cannot use
      (a missing or unreadable file, a file that is not a trace, settings not sent)
3     the service cannot be reached: refused, unresolvable or reset

4     the service refused the request: an HTTP 4xx answer (e.g. 422 invalid input, 404 an
      unknown suite, 413 too large)
5     the service failed: an HTTP 5xx answer (after the retries), or an answer that is not the
      specdec API's (wrong server or version)
6     no answer within ``--timeout``: the service was reached but did not answer in time (it
      may still be working; a longer ``--timeout`` may do)
70    an internal error of the command (a bug; ``SPECDEC_DEBUG=1`` shows the traceback),
      ``EX_SOFTWARE`` of sysexits.h
130   interrupted (Ctrl-C: 128 + SIGINT, as shells report it)
====  =====================================================================================

The table follows the conventions users know: 0/1 as pytest (tests passed / failed), 2 as
argparse and the Unix tools (usage), 4/5 as httpie's ``--check-status`` (4xx / 5xx). It is
documented in ``docs/sdk.md``; tests/client/test_exit_codes.py checks every row.
"""

from __future__ import annotations

from .errors import (
    APIError, ConnectionFailed, InvalidResponse, RequestTimedOut, SpecdecError,
)

OK = 0
FAILED = 1
USAGE = 2
UNREACHABLE = 3
REFUSED = 4
SERVICE_ERROR = 5
TIMED_OUT = 6
INTERNAL = 70
INTERRUPTED = 130


def status_of(error: SpecdecError) -> int:
    """The exit status for an SDK error: :data:`UNREACHABLE` for a connection failure,
    :data:`TIMED_OUT` for no answer within the timeout, :data:`REFUSED` for an HTTP 4xx, :data:`SERVICE_ERROR` for an HTTP 5xx or an
    answer that is not the API's, :data:`USAGE` for the rest (a trace file that is not a
    trace, settings or a body the SDK would not send)."""
    if isinstance(error, RequestTimedOut):
        return TIMED_OUT
    if isinstance(error, ConnectionFailed):
        return UNREACHABLE
    if isinstance(error, APIError):
        return SERVICE_ERROR if error.status >= 500 else REFUSED
    if isinstance(error, InvalidResponse):
        return SERVICE_ERROR
    return USAGE
