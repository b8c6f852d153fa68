"""Where a block reads its rows (SPEC section 1; the seat of section 9's row processing).

Every rule of a block reads the target's and the draft's next-token rows through one
:class:`Rows`, made once per block by the decoder's row reader (:class:`ModelRows`): the
proposal rule reads ``rows.draft``, the verifier ``rows.target`` (and the draft rows the
proposals were drawn from, which the drafted block carries). No proposal rule and no verifier
knows how a row was made.

SPEC section 9 (sampling parameters) plugs in here and nowhere else: a reader that returns the
*processed* rows p' and q' (temperature, top-k, top-p, min-p, in that order, exact) when the
config sets ``sampling``, and the model's rows unchanged when it does not. A catalogued mistake
of row processing (the target left raw while the draft is processed) is such a reader with one
thing changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Optional, Protocol

from .distributions import Dist


class Rows(NamedTuple):
    """The rows one block reads: ``target(token)`` and ``draft(token)`` give the next-token
    distribution after a prefix whose last token is ``token`` (an index; ``None``: the empty
    prefix). SPEC section 1: only the last token of the prefix matters."""

    target: Callable[[Optional[int]], Dist]
    draft: Callable[[Optional[int]], Dist]


class RowReader(Protocol):
    """What a decoder reads its rows with: ``read(config)`` gives the block's :class:`Rows`."""

    def read(self, config: Any) -> "Rows":
        """The rows every rule of a block of ``config`` reads."""


@dataclass(frozen=True)
class ModelRows:
    """SPEC section 1: the models' own rows, exact (``Model.after``). With no sampling
    parameters (every config today) these are the rows every rule reads."""

    name: str = "model"

    def read(self, config) -> Rows:
        """SPEC section 1: the :class:`Rows` of ``config`` (a :class:`~.state.Config`; made once
        per config), the models' rows unprocessed."""
        return config.model_rows


@dataclass(frozen=True)
class ConfigRows:
    """The row reader of every mode's decoder: the config's own rows (``Config.rows``, made once
    per config): the models' rows (:class:`ModelRows`) without sampling parameters, the
    processed rows p' and q' of SPEC section 9 (``sampling.ProcessedRows``) with them."""

    name: str = "config"

    def read(self, config) -> Rows:
        """SPEC sections 1 and 9: the :class:`Rows` every rule of ``config`` reads."""
        return config.rows
