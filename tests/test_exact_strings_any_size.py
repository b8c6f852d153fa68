"""Exact values are published as strings of any size (``engine.distributions.exact_string``).

The kind: ``str`` of an int over 4300 digits raises ``ValueError`` (Python's limit on decimal
conversion), and exact values reach that size under sampling parameters (SPEC 9: temperature
0.05 makes each entry p^20 exactly, 15-digit rows make that about 300 digits, and a block's
weight multiplies them over 16 proposals; an analysis sums such products over a session). Every
``*_exact`` field went through ``str``: a 500 on ``POST /v1/step`` in mode block and on
``POST /v1/analysis``."""

import json
import re
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from specdec_service.engine.distributions import exact_string

ROW_A, ROW_B = ["0.123456789012345", "0.876543210987655"], ["0.987654321098765", "0.012345678901235"]
TARGET = {"vocab": ["A", "B"], "start": ROW_A, "next": {"A": ROW_B, "B": ROW_A}}
DRAFT = {"vocab": ["A", "B"], "start": ROW_B, "next": {"A": ROW_A, "B": ROW_B}}


def _body(mode: str, analysis: bool, **more) -> str:
    config = {"target": TARGET, "draft": DRAFT, "mode": mode, "seed": 3, "sampling": {"temperature": 0.05}, **more}
    body = {"config": config, "depth": 2, "widths": [1]} if analysis else {"config": config}
    return re.sub(r'"(0\.\d+)"', r"\1", json.dumps(body))  # the rows as the decimals written


@given(st.integers(-(10**12000), 10**12000), st.integers(1, 10**9000))
def test_exact_string_is_str_of_the_fraction_in_lowest_terms(n, d):
    value = Fraction(n, d)
    text = exact_string(value)
    numerator, _, denominator = text.partition("/")
    assert re.fullmatch(r"-?[0-9]+(/[0-9]+)?", text)
    assert (denominator == "") is (value.denominator == 1)
    if len(text) < 4000:
        assert text == str(value)


def test_every_exact_field_of_a_block_step_is_written_whatever_its_size(client):
    response = client.post("/v1/step", data=_body("block", False, width=16, limit=16), content_type="application/json")
    assert response.status_code == 200, response.get_json()
    block = response.get_json()["block"]
    strings = [v[key] for v in block["verification"] for key in ("weight_exact", "threshold_exact")]
    assert max(map(len, strings)) > 4300  # over Python's limit for str(int)
    assert all(re.fullmatch(r"[0-9]+(/[0-9]+)?", s) for s in strings)


def test_every_exact_field_of_an_analysis_is_written_whatever_its_size(client):
    response = client.post("/v1/analysis", data=_body("speculative", True, width=4, limit=8), content_type="application/json")
    assert response.status_code == 200, response.get_json()
    exact = re.findall(r'_exact": ?"([0-9/]+)"', response.get_data(as_text=True))
    assert exact and max(map(len, exact)) > 4300
