"""The SDK's model adapter, ``TableModel``: ids in, rows out, in the shape HF-style code expects
(docs/grading.md, "Wrapping real code"); and transformers' ``_speculative_sampling`` graded
through the docs' wrapper of at most 30 lines, verbatim (tests/students/hf_exercise/hf_adapter.py),
with ``torch`` stood in by numpy (tests/students/torch_exercise/numpy_torch.py). Fixed seeds,
stated N, alpha 0.001 (the grader's)."""

import importlib.util
import random
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st
from specdec_client import Client, TableModel
from specdec_client.sampler_grading import ModelView, models_of
from specdec_service.grading import grade_samples

STUDENTS = Path(__file__).parent / "students"
HF = STUDENTS / "hf_exercise"
CUSTOM = {"vocab": ["A", "B", "$"], "start": [0.5, 0.3, 0.2],
          "next": {"A": [0.2, 0.5, 0.3], "B": [0.6, 0.1, 0.3], "$": [0.3, 0.3, 0.4]}}


def test_rows_along_a_prefix_are_the_spec_tables():
    """SPEC 1's toy: row 0 the start row, row i the row after the i-th id (only the last id
    matters), n + 1 rows for n ids."""
    toy = TableModel.from_config({"target": "toy", "draft": "biased"}, "target")
    assert toy.vocab == ("A", "B", "C") and toy.eos_id is None
    assert toy.probs([]) == [[0.5, 0.3, 0.2]]
    assert toy.probs([0, 2]) == [[0.5, 0.3, 0.2], [0.2, 0.6, 0.2], [0.25, 0.25, 0.5]]
    assert toy.probs([[0], [1]]) == [[[0.5, 0.3, 0.2], [0.2, 0.6, 0.2]], [[0.5, 0.3, 0.2], [0.55, 0.15, 0.3]]]
    biased = TableModel.from_config({"target": "toy", "draft": "biased"}, "draft")
    assert biased.row([1]) == [0.8, 0.15, 0.05] and biased.row([]) == [0.8, 0.15, 0.05]
    with pytest.raises(ValueError, match="the config has no draft"):   # as the service: a draft is required
        TableModel.from_config({"target": "toy"}, "draft")


def test_ids_labels_and_eos_of_a_custom_config():
    model = TableModel.from_config({"target": CUSTOM, "draft": CUSTOM, "eos": "$"}, "draft")
    assert model.eos_id == 2 and model.ids(["B", "$"]) == [1, 2] and model.labels([2, 0]) == ["$", "A"]
    assert model.labels(np.array([1, 1])) == ["B", "B"]
    with pytest.raises(ValueError, match=r"labels not in the vocabulary .*'Z'"):
        model.ids(["Z"])
    with pytest.raises(ValueError, match=r"ids outside 0..2: \[3\]"):
        model.probs([3])
    with pytest.raises(ValueError, match="eos 'Z' is not in the vocabulary"):
        TableModel.from_table(CUSTOM, eos="Z")
    with pytest.raises(ValueError, match="role must be 'target' or 'draft'"):
        TableModel.from_config({"target": CUSTOM}, "assistant")
    with pytest.raises(ValueError, match="no built-in model named 'gpt'"):
        TableModel.from_config({"target": "gpt"})
    with pytest.raises(ValueError, match="return_tensors must be one of"):
        model.probs([0], return_tensors="tf")


def test_numpy_rows_have_hf_shapes():
    """``[n]`` ids give ``[n + 1, V]``, ``[batch, n]`` give ``[batch, n + 1, V]``, float64; a numpy
    array of ids is read as well as a list."""
    toy = TableModel.from_config({"target": "toy"})
    assert toy.probs(np.array([0, 1, 2]), return_tensors="np").shape == (4, 3)
    rows = toy.probs(np.array([[0, 1], [2, 2]]), return_tensors="np")
    assert rows.shape == (2, 3, 3) and rows.dtype == np.float64
    assert rows[1, 2].tolist() == [0.25, 0.25, 0.5]


@given(st.lists(st.lists(st.integers(1, 10**6), min_size=3, max_size=3), min_size=4, max_size=4),
       st.lists(st.integers(0, 2), max_size=12))
def test_rows_are_the_tables_rows_divided_by_their_sums(weights, ids):
    """Any custom table: row i of ``probs(ids)`` is the table's row after ids[i - 1] divided by its
    exact sum (within float rounding), and sums to 1."""
    table = {"vocab": ["A", "B", "C"], "start": weights[0], "next": dict(zip("ABC", weights[1:]))}
    rows = TableModel.from_table(table).probs(ids)
    assert len(rows) == len(ids) + 1
    for i, row in enumerate(rows):
        raw = weights[0] if i == 0 else weights[1 + ids[i - 1]]
        assert row == pytest.approx([float(Fraction(w, sum(raw))) for w in raw], rel=1e-15)
        assert sum(row) == pytest.approx(1.0, abs=1e-15)


def test_builtins_are_the_services_models(live_url):
    """The SDK's copy of SPEC 1's built-in tables equals ``GET /v1/models``; ``client=`` reads them
    from the service."""
    client = Client(live_url)
    for name in ("toy", "aligned", "biased"):
        assert TableModel.from_config({"target": name}) == TableModel.from_config({"target": name}, client=client)


def test_a_functions_model_objects_offer_the_table():
    """The model objects a ``--python`` function receives give the same model over ids, with the
    config's EOS."""
    class Models:
        def models(self):
            return []
    target, draft = models_of(Models(), {"target": CUSTOM, "draft": CUSTOM, "eos": "$"})
    assert isinstance(target, ModelView) and target.table() == TableModel.from_table(CUSTOM, "$")
    assert draft.table().eos_id == 2


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def hf_over_numpy():
    """hf_adapter.py and hf_speculative.py, verbatim, with ``torch`` standing for numpy_torch.py
    while the test runs (the adapter's TableModel asks ``torch`` for tensors at call time)."""
    saved = {name: sys.modules.get(name) for name in ("torch", "hf_speculative")}
    sys.modules["torch"] = _load(STUDENTS / "torch_exercise" / "numpy_torch.py", "numpy_torch")
    sys.modules["hf_speculative"] = _load(HF / "hf_speculative.py", "hf_speculative")
    try:
        yield _load(HF / "hf_adapter.py", "hf_adapter"), sys.modules["hf_speculative"], sys.modules["torch"]
    finally:
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old


def _grade(adapter, config: dict, n: int, seed: int = 11) -> dict:
    class Models:
        def models(self):
            return []
    tables = {**config, "target": _table(config["target"]), "draft": _table(config["draft"])}
    target, draft = models_of(Models(), tables)
    rng = random.Random(seed)
    samples = [adapter.speculative_decode(target, draft, config["width"], config["limit"], config["eos"], rng)
               for _ in range(n)]
    return grade_samples({"config": config, "samples": samples})


def _table(value):
    from specdec_client.tables import BUILTIN_TABLES
    return BUILTIN_TABLES[value] if isinstance(value, str) else value


TOY = {"target": "toy", "draft": "biased", "mode": "speculative", "width": 3, "limit": 8, "eos": None}
EOS = {"target": CUSTOM, "draft": {**CUSTOM, "start": [0.4, 0.2, 0.4]}, "mode": "speculative", "width": 3,
       "limit": 8, "eos": "$"}


@pytest.mark.parametrize("config", [TOY, EOS], ids=["toy-biased", "custom-eos"])
def test_transformers_speculative_sampling_through_the_docs_wrapper(hf_over_numpy, config):
    """N = 2000: HF's rule (its own schedule: at most limit - L - 1 candidates, the last token the
    target's; an accepted EOS ends the block) has the target's law, so it passes; with the
    replacement sampled from p it fails. The wrapper never overshoots the limit or passes an EOS
    (the grader checks the lengths)."""
    adapter, hf, _ = hf_over_numpy
    hf.MISTAKE = ""
    report = _grade(adapter, config, 2000)
    assert report["passed"], report["reason"]
    hf.MISTAKE = "correction-from-p"
    try:
        report = _grade(adapter, config, 2000)
    finally:
        hf.MISTAKE = ""
    assert not report["passed"]


def test_the_wrapper_is_the_docs_block_and_at_most_30_lines():
    doc = (Path(__file__).parents[1] / "docs" / "grading.md").read_text(encoding="utf-8")
    block = doc.split("### Wrapping real code", 1)[1].split("```python\n", 1)[1].split("```\n", 1)[0]
    source = (HF / "hf_adapter.py").read_text(encoding="utf-8").splitlines()
    assert block.splitlines() == source[1:]
    assert len(source) - 1 <= 30
