"""The service's numbers do not depend on the CPU's BLAS kernel (issue 18).

OpenBLAS picks a kernel for the CPU at start-up (``OPENBLAS_CORETYPE`` forces one); its matrix
products block their sums and fuse multiply-adds differently per kernel, so the last bits of
``u @ M`` differ between, say, Haswell and SkylakeX. ``POST /v1/grade/distribution`` once computed
its expected acceptance rate that way and answered 0.7999999999999999 on one replica and 0.8 on
another. This test runs the route in two fresh interpreters, each with another kernel forced, on
every non-greedy golden config (``tests/golden/index.json``; m = 1 to 4, samples and counts, with
counters) and on custom configs up to the bounds (64 tokens, limit 256, width 16), and requires
the same bytes from both.

A probe (a chain of BLAS products) shows that the two kernels really differ on this machine; where
they do not (numpy without OpenBLAS, or a CPU that runs one kernel for both), the comparison proves
nothing and the test is skipped, saying so.
"""

from __future__ import annotations

import json
import os
import platform
import random
import subprocess
import sys
from pathlib import Path

import pytest

from specdec_service.engine import parse_config, run

HERE = Path(__file__).resolve().parent
INDEX = json.loads((HERE / "golden" / "index.json").read_text(encoding="utf-8"))


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return set()
    return {flag for line in text.splitlines() if line.startswith("flags") for flag in line.split(":", 1)[1].split()}


FLAGS = _cpu_flags()
KERNELS = ("Haswell", "SkylakeX" if "avx512f" in FLAGS else "Sandybridge")
"""Two OpenBLAS x86-64 kernels this CPU can run (Haswell needs AVX2 and FMA, SkylakeX AVX-512,
Sandybridge AVX): the issue's pair, Haswell against SkylakeX, where the CPU has AVX-512."""

CHILD = r"""
import json, sys
import numpy as np
from specdec_service import create_app

client = create_app({"TESTING": True}).test_client()
bodies = {}
for name, body in json.load(sys.stdin):
    response = client.post("/v1/grade/distribution", data=json.dumps(body),
                           headers={"Content-Type": "application/json"})
    bodies[name] = [response.status_code, response.get_data().decode()]
# the probe: BLAS products whose last bits depend on the kernel
rng = np.random.default_rng(0)
M = rng.random((65, 64))
v = rng.random(65)
for _ in range(20):
    v = np.concatenate([v @ M, [1.0]])
    v = v / v[0]
bodies["#probe"] = v.tobytes().hex()
json.dump(bodies, sys.stdout)
"""


def _random_config(rng: random.Random, vocab: int, limit: int, width: int, eos: bool) -> dict:
    labels = [f"t{i}" for i in range(vocab)]

    def row():
        weights = [rng.random() for _ in labels]
        return [w / sum(weights) for w in weights]

    def model():
        return {"vocab": labels, "start": row(), "next": {label: row() for label in labels}}

    config = {"target": model(), "draft": model(), "limit": limit, "width": width, "seed": 0}
    if eos:
        config["eos"] = labels[-1]
    return config


def cases() -> list[tuple[str, dict]]:
    """(name, body of POST /v1/grade/distribution): every non-greedy golden config with the
    outputs and summed counters of 12 seeded sessions (m cycling 1-4, as samples, and as counts
    for the first m), then custom configs up to the bounds with counts over every first token."""
    out = []
    for number, name in enumerate(sorted(INDEX)):
        config = INDEX[name]
        if config.get("mode") == "greedy":
            continue
        traces = [run(parse_config({**config, "seed": seed})) for seed in range(12)]
        samples = [t["output"] for t in traces]
        counters = {"accepted": sum(t["counters"]["accepted"] for t in traces),
                    "draft_steps": sum(t["counters"]["draft_steps"] for t in traces)}
        m = 1 + number % 4
        out.append((f"{name} samples m={m}", {"config": config, "m": m, "samples": samples, "counters": counters}))
        length = min(m, config.get("limit", 64))
        counts: dict = {}
        vocab = set(config["target"]["vocab"]) if isinstance(config.get("target"), dict) else None
        eos = config.get("eos")
        for sample in samples:
            prefix = sample[:length]
            if eos in prefix:
                prefix = prefix[:prefix.index(eos) + 1]
            counts[tuple(prefix)] = counts.get(tuple(prefix), 0) + 50
        assert vocab is None or all(set(p) <= vocab for p in counts)
        out.append((f"{name} counts m={m}", {"config": config, "m": m, "counters": counters,
                                              "counts": [{"prefix": list(p), "count": c} for p, c in counts.items()]}))
    rng = random.Random(18)
    for vocab, limit, width, eos in ((64, 256, 16, True), (64, 256, 16, False), (17, 40, 5, True), (5, 9, 3, False)):
        config = _random_config(rng, vocab, limit, width, eos)
        counts = [{"prefix": [label], "count": rng.randrange(1, 400)} for label in config["target"]["vocab"]]
        counters = {"accepted": 300, "draft_steps": 1000}
        out.append((f"custom V={vocab} limit={limit} width={width} eos={eos}",
                     {"config": config, "m": 1, "counts": counts, "counters": counters}))
    return out


def answers(kernel: str, payload: bytes) -> dict:
    """The route's answers to every case in a fresh interpreter with ``OPENBLAS_CORETYPE=kernel``."""
    env = {**os.environ, "OPENBLAS_CORETYPE": kernel, "OPENBLAS_VERBOSE": "0"}
    done = subprocess.run([sys.executable, "-c", CHILD], input=payload, env=env, capture_output=True,
                          timeout=600, check=False)  # the timeout only keeps a hang from stalling the suite
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    return json.loads(done.stdout)


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64") or not {"avx2", "fma"} <= FLAGS,
                    reason="the OpenBLAS kernels compared (Haswell and another) run on x86-64 with AVX2 only")
def test_grade_distribution_bytes_are_the_same_under_two_blas_kernels():
    payload = json.dumps(cases()).encode()
    first, second = (answers(kernel, payload) for kernel in KERNELS)
    if first.pop("#probe") == second.pop("#probe"):
        pytest.skip(f"BLAS products give the same bits under {KERNELS[0]} and {KERNELS[1]} here: "
                    "nothing to compare (numpy without OpenBLAS, or one kernel for both)")
    assert set(first) == set(second) and len(first) >= 100
    assert all(status == 200 for status, _ in first.values()), [k for k, (s, _) in first.items() if s != 200]
    differ = [name for name in first if first[name] != second[name]]
    assert not differ, (f"under OPENBLAS_CORETYPE={KERNELS[0]} and {KERNELS[1]} the bytes of "
                        f"{len(differ)} answers differ, first {differ[0]}:\n{first[differ[0]][1]}\n"
                        f"{second[differ[0]][1]}")
