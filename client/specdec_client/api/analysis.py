"""``POST /v1/analysis``: the exact analysis of a configuration over all sessions."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any, Mapping, Optional, Sequence, Union

from ..analysis import Analysis
from ..types import Config, Sampling, merge_settings
from . import ApiGroup

Number = Union[int, float, str, Decimal, Fraction]
"""A draft cost: a number, or a decimal string such as ``"0.05"``."""


def analysis_config(config: Union[Config, Mapping[str, Any], None] = None, **settings: Any) -> dict[str, Any]:
    """The ``config`` of an analysis request from a :class:`Config`, a mapping and/or
    keyword settings (keywords win). ``draft`` is required; ``seed`` may be left out
    (an analysis covers every seed). Raises :class:`~specdec_client.errors.InvalidSettings`."""
    if isinstance(config, Config):
        config = config.to_dict()
    values = merge_settings(config, required=("draft",), **settings)
    sampling = values.get("sampling")
    if isinstance(sampling, Sampling):  # sent as its JSON object
        values["sampling"] = sampling.to_dict()
    return values


def json_number(value: Number) -> Union[int, float]:
    """A draft cost as a JSON number. The service reads a number as the decimal it is
    written as (the shortest repr of a float), so ``0.05`` and ``"0.05"`` are exactly 1/20.
    A :class:`Fraction` such as 1/3 that no decimal writes is sent as its nearest float.
    Raises ``TypeError``/``ValueError`` for anything that is not a finite number."""
    if isinstance(value, bool):
        raise TypeError("draft_cost must be a number, not a bool")
    if isinstance(value, int):
        return value
    if isinstance(value, (str, Decimal)):
        value = float(Decimal(value))
    result = float(value)
    if result != result or result in (float("inf"), float("-inf")):
        raise ValueError(f"draft_cost must be finite, got {value}")
    return result


class AnalysisApi(ApiGroup):
    """The analysis route."""

    def analyze(self, config: Union[Config, Mapping[str, Any], None] = None, *, depth: Optional[int] = None,
                widths: Optional[Sequence[int]] = None, draft_cost: Optional[Number] = None,
                **settings: Any) -> Analysis:
        """``POST /v1/analysis``: exact expectations over all sessions of the settings
        (a :class:`Config`, a mapping and/or keywords; ``draft`` required, ``seed``
        ignored), the output distribution of the first ``depth`` tokens (1-8, default
        min(limit, 3)) against the target's, a sweep over ``widths`` (each 1-16, default
        1-8) at ``draft_cost`` (target passes per draft step, default 0).

        Returns an :class:`~specdec_client.analysis.Analysis` whose values are exact
        :class:`fractions.Fraction`; when only the defaults (``widths`` not given, mode tree's
        sweep over D = 1..8) are over the route's work budget, the service analyses the longest
        that fit and ``Analysis.fitted`` names them. Raises
        :class:`~specdec_client.errors.InvalidInput` for bad fields, also for a request over the
        budget whatever the defaults (the problem's ``cost`` and ``budget`` say by how much)."""
        body: dict[str, Any] = {"config": analysis_config(config, **settings)}
        if depth is not None:
            body["depth"] = depth
        if widths is not None:
            body["widths"] = list(widths)
        if draft_cost is not None:
            body["draft_cost"] = json_number(draft_cost)
        return self.transport.call("POST", "/v1/analysis", Analysis.from_dict, json=body)
