"""tcsmt.testing: a kernel's D against the model's, NumPy and torch, the
report's counts, distance and stages; the package doc's example runs."""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))

import tcsmt  # noqa: E402
import tcsmt.testing  # noqa: E402
import tcsmt.torch as tt  # noqa: E402
from tcsmt.errors import FormatMismatch, ShapeError  # noqa: E402
from tcsmt.testing import assert_matches_model, compare  # noqa: E402


def float32_sum_kernel(A, B, C):
    """A kernel that adds each product to a float32 sum in turn."""
    D = C.copy()
    for k in range(A.shape[1]):
        D = (D + A[:, k:k + 1].astype(np.float32) * B[k:k + 1, :].astype(np.float32)).astype(np.float32)
    return D


def doc_example() -> str:
    doc = tcsmt.testing.__doc__
    block = doc.split("In a pytest::", 1)[1].split("A kernel that", 1)[0]
    return textwrap.dedent(block)


def test_the_documented_example_runs_and_fails_a_float32_sum_with_the_documented_report():
    space = {"my_kernel": float32_sum_kernel}
    exec(doc_example(), space)
    with pytest.raises(AssertionError) as e:
        space["test_my_kernel"]()
    text = str(e.value)
    assert text.startswith("D differs from hopper-fp16-fp32's in 103 of 128 outputs (16 x 8, K = 64); "
                           "largest distance 56 ulps, at D[12, 4]")
    for line in ("D[0, 0]: kernel 0x4119df83", "block 3 result       0x4119df81",
                 "rounded              0x4119df81 = 9.61706638336181640625 (rz to float32)",
                 "lines of inputs and stages left out"):
        assert line in text
    # the model's own product passes
    space["my_kernel"] = lambda A, B, C: np.asarray(tcsmt.matmul(A, B, C, model="hopper-fp16-fp32"))
    space["test_my_kernel"]()


def test_the_report_counts_the_outputs_and_measures_the_distance():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((5, 8)).astype(np.float16)
    B = rng.standard_normal((8, 4)).astype(np.float16)
    C = rng.standard_normal((5, 4)).astype(np.float32)
    D = np.asarray(tcsmt.matmul(A, B, C, model="ampere-fp16-fp32")).copy()
    bits = D.view(np.uint32)
    bits[1, 2] += 3
    bits[4, 0] -= 1
    doc = compare(D, A, B, C, model="ampere-fp16-fp32", show=5)
    assert doc["differ"] == 2 and doc["outputs"] == 20 and doc["max_ulps"] == 3
    assert doc["at"] == (1, 2) and [r["position"] for r in doc["first"]] == [[1, 2], [4, 0]]
    assert "3 ulps apart" in doc["text"] and "D[4, 0]" in doc["text"]
    D[3, 3] = np.nan
    assert compare(D, A, B, C, model="ampere-fp16-fp32")["differ"] == 3


def test_block_scaled_numpy_operands_with_scales_and_alpha():
    p = tt.model_of("blackwell-nvfp4")
    A, B = torch.randn(4, 64), torch.randn(64, 3)
    qa, qb = tt.quantize(A, "nvfp4", "e2m1").numpy(), tt.quantize(B, "nvfp4", "e2m1", axis=0).numpy()
    alpha = np.float32(qa.per_tensor_scale) * np.float32(qb.per_tensor_scale)
    D = tt.matmul(A, B, model=p).numpy()
    assert_matches_model(D, qa.elements, qb.elements, None, p, scale_a=qa.scales, scale_b=qb.scales,
                         alpha=alpha)
    D[0, 0] = np.nextafter(D[0, 0], np.float32(np.inf))
    scaled = r"1 of 12 outputs.*\n.*result below x [0-9.e-]+ \(the per-tensor scales"
    with pytest.raises(AssertionError, match=scaled):
        assert_matches_model(D, qa.elements, qb.elements, None, p, scale_a=qa.scales,
                             scale_b=qb.scales, alpha=alpha)


def test_torch_tensors_unscaled_and_block_scaled():
    g = torch.Generator().manual_seed(2)
    A, B, C = torch.randn(6, 32, generator=g), torch.randn(32, 4, generator=g), torch.randn(6, 4, generator=g)
    for model in ("hopper-fp16-fp32", "blackwell-nvfp4", "blackwell-mxf8f6f4-e4m3"):
        D = tt.matmul(A, B, C, model=model)
        assert_matches_model(D, A, B, C, model)
        bad = D.clone()
        bad[5, 3] = -bad[5, 3]
        with pytest.raises(AssertionError, match=re.escape("D[5, 3]")):
            assert_matches_model(bad, A, B, C, model)


def test_what_cannot_be_compared_is_a_one_line_error():
    A = np.ones((2, 4), np.float16)
    B = np.ones((4, 3), np.float16)
    with pytest.raises(FormatMismatch, match="pass the kernel's D as float32"):
        assert_matches_model(np.zeros((2, 3), np.float64), A, B, None, "hopper-fp16-fp32")
    with pytest.raises(ShapeError, match="D is 3x2"):
        assert_matches_model(np.zeros((3, 2), np.float32), A, B, None, "hopper-fp16-fp32")
    with pytest.raises(FormatMismatch, match="torch.float32"):
        assert_matches_model(torch.zeros(2, 3, dtype=torch.float16), torch.ones(2, 4), torch.ones(4, 3),
                             None, "hopper-fp16-fp32")
