"""The PyTorch adapter of docs/grading.md, run (issue 20): a PyTorch-style exercise over token ids
and logits (tests/students/torch_exercise/student.py) graded through the adapter, verbatim in
adapter.py. CI does not install torch: the torch test runs where torch is importable (it was run
with torch 2.13.0+cpu, docs/grading.md), and the same logic (logits over ids -> probabilities,
seeded per session) runs in numpy everywhere (adapter_numpy.py, student_numpy.py). Fixed seeds,
stated N, alpha 0.001."""

import importlib.util
import random
import sys
from pathlib import Path

import pytest
from specdec_service.grading import grade_samples
from test_grading_samples import SAMPLER_MODULE

EXERCISE = Path(__file__).parent / "students" / "torch_exercise"
TOY = {"target": "toy", "draft": "biased", "mode": "speculative", "width": 3, "limit": 8, "eos": None}


def _load(name: str, alias: str):
    spec = importlib.util.spec_from_file_location(f"torch_exercise_{name}", EXERCISE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _modules(adapter: str, student: str):
    """The adapter and the student's module, loaded from their files (the adapter's ``from
    student import ...`` reads this student, whatever else is called ``student``)."""
    module = _load(student, "student")
    saved = sys.modules.get("student"), sys.modules.get("student_numpy")
    sys.modules["student"] = sys.modules["student_numpy"] = module
    try:
        return _load(adapter, "adapter"), module
    finally:
        for name, old in zip(("student", "student_numpy"), saved):
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old


def _grade(adapter, n: int, seed: int = 7) -> dict:
    target, draft = SAMPLER_MODULE.model_of("toy"), SAMPLER_MODULE.model_of("biased")
    rng = random.Random(seed)
    samples = [adapter.speculative_decode(target, draft, TOY["width"], TOY["limit"], TOY["eos"], rng) for _ in range(n)]
    return grade_samples({"config": TOY, "samples": samples})


def _check(adapter, student, n: int) -> None:
    student.MISTAKE = ""
    try:
        report = _grade(adapter, n)
        assert report["passed"], report["reason"]
        student.MISTAKE = "correction-from-p"
        report = _grade(adapter, n)
        assert not report["passed"] and report["mistake"]["named"]["id"] == "resample-from-p"
    finally:
        student.MISTAKE = ""


def test_the_adapters_logic_in_numpy():
    """N = 2000: the correct exercise passes, the correction sampled from p is named."""
    _check(*_modules("adapter_numpy", "student_numpy"), 2000)


def test_the_adapter_file_is_the_docs_block_verbatim():
    """docs/grading.md's adapter block is adapter.py line for line (its first line, a comment,
    aside): what the instructor copies is what the tests run."""
    doc = (Path(__file__).parents[1] / "docs" / "grading.md").read_text(encoding="utf-8")
    block = doc.split("1. **The adapter**", 1)[1].split("   ```python\n", 1)[1].split("   ```\n", 1)[0]
    lines = [line[3:] if line.startswith("   ") else line for line in block.splitlines()]
    assert lines == (EXERCISE / "adapter.py").read_text(encoding="utf-8").splitlines()[1:]


def test_the_docs_adapter_verbatim_over_numpy_torch():
    """adapter.py and student.py themselves (not their numpy twins), with ``torch`` standing for
    numpy_torch.py (the few calls they make) while they load; N = 2000, seed 7: the correct
    exercise passes, the correction from p is named resample-from-p. The real ``torch`` is put
    back (or left absent) afterwards."""
    sys.path.insert(0, str(EXERCISE))
    saved = sys.modules.get("torch")
    try:
        import numpy_torch
        sys.modules["torch"] = numpy_torch
        modules = _modules("adapter", "student")
    finally:
        sys.path.remove(str(EXERCISE))
        if saved is None:
            sys.modules.pop("torch", None)
        else:
            sys.modules["torch"] = saved
    _check(*modules, 2000)


def test_the_pytorch_adapter_of_the_docs():
    """N = 500 (torch's per-call overhead: about 10 s of CPU): the correct exercise passes, the
    correction sampled from p is named (resample-from-p is caught from N = 500, docs/grading.md)."""
    pytest.importorskip("torch")
    _check(*_modules("adapter", "student"), 500)
