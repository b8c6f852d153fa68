"""A bigram table as the model object HF-style code expects: token ids in, probability rows out.

Public implementations of speculative sampling (transformers' ``_speculative_sampling``,
course code, engines' verifiers) are written over token ids and batched probability tensors,
not over labels and one row at a time. :class:`TableModel` gives a specdec model (SPEC
section 1: a ``start`` row and one row per token) that shape, so wrapping such code for
``specdec grade --python`` takes a few lines of glue (docs/grading.md, "Wrapping real code")::

    from specdec_client import TableModel

    target = TableModel.from_config(config, "target")      # or "draft"
    rows = target.probs([0, 2])                            # 3 rows: after (), after (A,), after (A, C)
    rows = target.probs([[0, 2]], return_tensors="pt")     # a torch tensor [1, 3, V]

The rows are the model's **raw** rows (SPEC 9's sampling parameters are not applied), each
divided by its sum, as floats. Pure SDK code: numpy and torch are imported only when asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

BUILTIN_TABLES: dict[str, dict[str, Any]] = {
    "toy": {"vocab": ["A", "B", "C"], "start": [0.50, 0.30, 0.20],
            "next": {"A": [0.20, 0.60, 0.20], "B": [0.55, 0.15, 0.30], "C": [0.25, 0.25, 0.50]}},
    "aligned": {"vocab": ["A", "B", "C"], "start": [0.50, 0.30, 0.20],
                "next": {"A": [0.20, 0.60, 0.20], "B": [0.55, 0.15, 0.30], "C": [0.25, 0.25, 0.50]}},
    "biased": {"vocab": ["A", "B", "C"], "start": [0.80, 0.15, 0.05],
               "next": {"A": [0.80, 0.15, 0.05], "B": [0.80, 0.15, 0.05], "C": [0.80, 0.15, 0.05]}},
}
"""The built-in models of SPEC section 1 (the same tables ``GET /v1/models`` serves), so that a
config naming them needs no service; pass ``client=`` to read them from the service instead."""

RETURN_TENSORS = (None, "np", "pt")
"""What :meth:`TableModel.probs` returns: nested lists (``None``), a numpy array (``"np"``) or a
torch tensor (``"pt"``), as HF tokenizers' ``return_tensors``."""


def _normalised(row: Sequence[Any]) -> tuple[float, ...]:
    total = float(sum(float(w) for w in row))
    return tuple(float(w) / total for w in row)


def _as_ids(value: Any) -> list[Any]:
    """``value`` (a list, a tuple, a numpy array or a torch tensor of ids) as nested lists."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, int):
        raise TypeError("probs() takes a sequence of token ids (shape [n] or [batch, n]), not one id")
    return list(value)


@dataclass(frozen=True)
class TableModel:
    """A bigram model (SPEC section 1) over token ids.

    ``vocab`` (the labels, in order: id ``i`` is ``vocab[i]``), ``start`` (the row after the
    empty prefix), ``next`` (label -> the row after a prefix ending in that label), ``eos`` (the
    end-of-sequence label of the config, or ``None``). Rows are floats summing to 1.
    """

    vocab: tuple[str, ...]
    start: tuple[float, ...]
    next: Mapping[str, tuple[float, ...]]
    eos: Optional[str] = None

    @classmethod
    def from_table(cls, table: Mapping[str, Any], eos: Optional[str] = None) -> "TableModel":
        """A model from a table ``{"vocab": [...], "start": [...], "next": {label: row}}`` (the
        custom model of SPEC section 1, as a config or ``GET /v1/models`` holds it); each row is
        divided by its sum. Raises ``ValueError`` when ``eos`` is not in the vocabulary."""
        vocab = tuple(table["vocab"])
        if eos is not None and eos not in vocab:
            raise ValueError(f"eos {eos!r} is not in the vocabulary {list(vocab)}")
        rows = {label: _normalised(table["next"][label]) for label in vocab}
        return cls(vocab, _normalised(table["start"]), rows, eos)

    @classmethod
    def from_config(cls, config: Mapping[str, Any], role: str = "target", client: Any = None) -> "TableModel":
        """The ``role`` model (``"target"`` or ``"draft"``) of a session config (the body's
        ``config``; its target defaults to ``toy``, its draft is required, as the service
        says), with the config's ``eos``. A built-in name (``toy``, ``aligned``, ``biased``) is
        read from ``client.models()`` when a :class:`~specdec_client.Client` is given, else from
        :data:`BUILTIN_TABLES`. Raises ``ValueError`` for another role, a config without a draft
        asked for its draft, or an unknown name."""
        if role not in ("target", "draft"):
            raise ValueError(f"role must be 'target' or 'draft', not {role!r}")
        if role == "draft" and "draft" not in config:
            raise ValueError("the config has no draft (a session config names one: 'aligned', 'biased' or a table)")
        value = config["draft"] if role == "draft" else config.get("target", "toy")
        if isinstance(value, str):
            value = _builtin(value, client)
        return cls.from_table(value, config.get("eos"))

    @property
    def eos_id(self) -> Optional[int]:
        """The id of the EOS label, or ``None`` when the config has none (the toy has none)."""
        return None if self.eos is None else self.vocab.index(self.eos)

    def ids(self, labels: Sequence[str]) -> list[int]:
        """The ids of ``labels``. Raises ``ValueError`` naming a label not in the vocabulary."""
        index = {label: i for i, label in enumerate(self.vocab)}
        unknown = [label for label in labels if label not in index]
        if unknown:
            raise ValueError(f"labels not in the vocabulary {list(self.vocab)}: {unknown[:5]}")
        return [index[label] for label in labels]

    def labels(self, ids: Any) -> list[str]:
        """The labels of ``ids`` (a sequence, a numpy array or a torch tensor of one dimension).
        Raises ``ValueError`` for an id outside ``0..len(vocab) - 1``."""
        flat = [int(i) for i in _as_ids(ids)]
        bad = [i for i in flat if not 0 <= i < len(self.vocab)]
        if bad:
            raise ValueError(f"ids outside 0..{len(self.vocab) - 1}: {bad[:5]}")
        return [self.vocab[i] for i in flat]

    def row(self, prefix_ids: Sequence[int]) -> list[float]:
        """The next-token distribution after ``prefix_ids`` (the start row for an empty prefix;
        only the last id matters: SPEC section 1)."""
        prefix = _as_ids(prefix_ids)
        return list(self.next[self.labels(prefix[-1:])[0]] if prefix else self.start)

    def probs(self, prefix_ids: Any, return_tensors: Optional[str] = None) -> Any:
        """The rows along a prefix, in the shape ``model(ids).logits.softmax(-1)`` has when a
        start token is prepended: for ``n`` ids, ``n + 1`` rows, row ``i`` the distribution after
        the first ``i`` ids (row 0 the start row, row ``n`` the next token's). ``prefix_ids`` of
        shape ``[n]`` gives ``[n + 1, V]``; of shape ``[batch, n]`` gives ``[batch, n + 1, V]``.
        ``return_tensors``: ``None`` (lists of lists of floats), ``"np"`` (a float64 numpy
        array) or ``"pt"`` (a float64 torch tensor). Raises ``ValueError`` for an unknown id or
        ``return_tensors``, ``ImportError`` when numpy or torch is asked for and missing."""
        if return_tensors not in RETURN_TENSORS:
            raise ValueError(f"return_tensors must be one of {RETURN_TENSORS}, not {return_tensors!r}")
        ids = _as_ids(prefix_ids)
        batched = bool(ids) and not isinstance(ids[0], (int, float)) and hasattr(ids[0], "__len__")
        rows = [self._along(one) for one in ids] if batched else self._along(ids)
        return _tensor(rows, return_tensors)

    def _along(self, ids: Sequence[Any]) -> list[list[float]]:
        labels = self.labels(ids)
        return [list(self.start)] + [list(self.next[label]) for label in labels]


def _builtin(name: str, client: Any) -> Mapping[str, Any]:
    if client is not None:
        for model in client.models():
            if model.name == name:
                return {"vocab": model.vocab, "start": model.start, "next": model.next}
    elif name in BUILTIN_TABLES:
        return BUILTIN_TABLES[name]
    raise ValueError(f"no built-in model named {name!r} (built-in: {sorted(BUILTIN_TABLES)})")


def _tensor(rows: Any, return_tensors: Optional[str]) -> Any:
    if return_tensors == "np":
        import numpy
        return numpy.asarray(rows, dtype=numpy.float64)
    if return_tensors == "pt":
        import torch  # type: ignore[import-not-found, unused-ignore]
        return torch.tensor(rows, dtype=torch.float64)
    return rows
