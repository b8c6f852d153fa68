"""The few ``torch`` calls the adapters of docs/grading.md make, over numpy, so that CI (which
does not install torch) runs them **verbatim**: ``adapter.py`` and ``student.py`` here (the glue
of ids with an extra start id, row j after ids[:j + 1], ``out[0, 1:]``), and
``tests/students/hf_exercise`` (transformers' ``_speculative_sampling`` over
``TableModel.probs(..., return_tensors="pt")``).
Not torch: ``multinomial`` samples by numpy's inverse CDF, ``manual_seed`` seeds one numpy
generator. Used only by tests/test_grading_torch_adapter.py, never installed as ``torch``
outside that loading."""

import numpy as np

_gen = np.random.default_rng(0)


class Tensor(np.ndarray):
    """A numpy array with the tensor methods the two files call."""

    def __getitem__(self, index):  # an element is a 0-d tensor, as in torch
        if isinstance(index, Tensor):
            index = int(index)
        item = super().__getitem__(index)
        return item if isinstance(item, Tensor) else np.asarray(item).view(Tensor)

    def clamp_min(self, low):
        return np.maximum(self, low).view(Tensor)

    def log(self):
        return np.log(self).view(Tensor)

    def __int__(self):  # a one-element tensor of any shape, as torch allows
        assert self.size == 1, "only one-element tensors can be converted to Python scalars"
        return int(np.asarray(self).reshape(-1)[0])

    def softmax(self, dim=-1):
        return softmax(self, dim)

    def squeeze(self, *dims):  # torch takes several dimensions
        return np.squeeze(np.asarray(self), axis=dims or None).view(Tensor)

    def cumsum(self, dim):
        return np.cumsum(np.asarray(self), axis=dim).view(Tensor)

    def div_(self, other):
        self /= other
        return self

    def view(self, *shape):  # torch's view(1, 1) is a reshape; numpy's view(type) is kept
        if shape and all(isinstance(s, int) for s in shape):
            return self.reshape(shape)
        return super().view(*shape)


float64 = np.float64


def tensor(data, dtype=None):
    kind = dtype or (float if not _ints(data) else np.int64)
    return np.asarray(data, dtype=kind).view(Tensor)


def arange(count):
    return np.arange(count).view(Tensor)


def rand_like(t):
    return _gen.random(np.shape(t)).view(Tensor)


def _ints(data):
    flat = np.asarray(data).ravel()
    return flat.size > 0 and np.issubdtype(flat.dtype, np.integer)


def manual_seed(seed):
    global _gen
    _gen = np.random.default_rng(seed)


def softmax(logits, dim=-1):
    z = np.exp(logits - logits.max(axis=dim, keepdims=True))
    return (z / z.sum(axis=dim, keepdims=True)).view(Tensor)


def multinomial(weights, num_samples):
    assert num_samples == 1
    w = np.asarray(weights, dtype=float)
    if w.ndim == 2:  # one sample per row: [rows, 1]
        return np.stack([np.asarray(multinomial(row, 1)) for row in w]).view(Tensor)
    return np.array([int(_gen.choice(len(w), p=w / w.sum()))], dtype=np.int64).view(Tensor)


def rand(count):
    return _gen.random(count).view(Tensor)


def cat(tensors, dim=0):
    return np.concatenate([np.asarray(t) for t in tensors], axis=dim).astype(np.int64).view(Tensor)


def clamp(t, min=None):  # noqa: A002  (torch's keyword)
    return np.maximum(t, min).view(Tensor)
