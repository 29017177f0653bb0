"""A kernel's D against a model's, bit for bit, with the report a kernel
author needs when they differ.

The operands are brought to bits of the model's formats (``Product``): A's
rows and B's columns [M, K] and [N, K], c [M, N], the scales of
block-scaled models, and NVFP4's alpha (the product of the per-tensor
scales, which multiplies the unit's output before C is added). The model's
D comes from tcsmt.matmul (NumPy) or tcsmt.torch.matmul (torch), and each
differing output is explained as ``tcsmt check`` explains a row
(tcsmt.judge.check.explain_row: the model's stages of that dot product).
"""

from __future__ import annotations

import numpy as np

from tcsmt.errors import FormatMismatch, ShapeError
from tcsmt.judge.check import Rows, explain_row, ulps_apart
from tcsmt.judge.check_text import mismatch_lines
from tcsmt.observed.observations import FormatSet
from tcsmt.sim.npio import dtype_of, to_bits
from tcsmt.testing.product import Product, numpy_product


def _is_torch(x) -> bool:
    return type(x).__module__.split(".")[0] in ("torch", "torchao") or type(x).__name__ == "QuantizedTensor"


def product(A, B, C, model, scale_a=None, scale_b=None, alpha=None, recipe=None,
            backend=None) -> Product:
    """The model's D and the bits of the operands (NumPy arrays as
    tcsmt.matmul takes them, or torch tensors as tcsmt.torch.matmul does)."""
    if _is_torch(A) or _is_torch(B):
        from tcsmt.testing.tensors import torch_product
        return torch_product(A, B, C, model, recipe, backend)
    return numpy_product(A, B, C, model, scale_a, scale_b, alpha, recipe, backend)


def kernel_bits(D, pr: Product) -> np.ndarray:
    """The kernel's D as out_format bits (a NumPy array or a tensor, of the
    model's output dtype)."""
    if _is_torch(D):
        from tcsmt.testing.tensors import tensor_bits
        return tensor_bits(D, pr.p)
    D = np.asarray(D)
    if D.dtype != dtype_of(pr.p.fout):
        raise FormatMismatch(f"D has dtype {D.dtype}; {pr.p.name} writes {pr.p.fout.name}: "
                             f"pass the kernel's D as {dtype_of(pr.p.fout).name}")
    return to_bits(np.ascontiguousarray(D), pr.p.fout, "D")


def compare(D, A, B, C=None, model="hopper", *, scale_a=None, scale_b=None, alpha=None,
            recipe=None, show: int = 3, backend=None) -> dict:
    """How a kernel's D differs from the model's on the same operands: a
    document with ``differ`` (how many outputs), ``outputs``, ``max_ulps``
    (the largest distance in units in the last place, None where only NaNs
    differ), ``at`` (its [row, column]), ``first`` (up to ``show`` differing
    outputs in row order, each explained) and ``text``."""
    pr = product(A, B, C, model, scale_a, scale_b, alpha, recipe, backend)
    got = kernel_bits(D, pr)
    if got.shape != pr.model_d.shape:
        raise ShapeError(f"D is {'x'.join(map(str, got.shape))}; A @ B is "
                         f"{'x'.join(map(str, pr.model_d.shape))}")
    bad = np.argwhere(got != pr.model_d)
    doc = {"model": pr.p.name, "outputs": int(got.size), "differ": int(len(bad)), "max_ulps": None,
           "at": None, "first": []}
    if len(bad):
        dist = [ulps_apart(int(got[i, j]), int(pr.model_d[i, j]), pr.p.fout) for i, j in bad]
        finite = [(u, (int(i), int(j))) for u, (i, j) in zip(dist, bad) if u is not None]
        if finite:
            doc["max_ulps"], doc["at"] = max(finite)
        doc["first"] = [_explained(pr, int(i), int(j), int(got[i, j])) for i, j in bad[:show]]
    doc["text"] = "\n".join(report_lines(doc, pr))
    return doc


def _explained(pr: Product, i: int, j: int, kernel: int) -> dict:
    p = pr.p
    rows = Rows("kernel", "observations", FormatSet(p.fin, p.fb, p.fc, p.fout, p.fscale),
                pr.a[i:i + 1], pr.b[j:j + 1], pr.c[i, j:j + 1], [i * pr.c.shape[1] + j],
                sa=None if pr.sa is None else pr.sa[i:i + 1],
                sb=None if pr.sb is None else pr.sb[j:j + 1], scale_block=p.scale_block or 0)
    rec = explain_row(p, rows, 0, int(pr.model_d[i, j]), kernel, "kernel")
    rec["position"] = [i, j]
    return rec


def report_lines(doc: dict, pr: Product) -> list[str]:
    p = pr.p
    m, n = pr.model_d.shape
    if not doc["differ"]:
        return [f"D equals {p.name}'s in every one of {doc['outputs']} outputs "
                f"({m} x {n}, K = {pr.a.shape[1]})"]
    far = ("only NaNs differ" if doc["max_ulps"] is None else
           f"largest distance {doc['max_ulps']} ulp{'s' if doc['max_ulps'] != 1 else ''}, "
           f"at D[{doc['at'][0]}, {doc['at'][1]}]")
    lines = [f"D differs from {p.name}'s in {doc['differ']} of {doc['outputs']} outputs "
             f"({m} x {n}, K = {pr.a.shape[1]}); {far}"]
    if pr.alpha is not None:
        lines.append(f"  the model's D is the unit's result below x {float(pr.alpha)!r} (the "
                     "per-tensor scales, in float32), then + C")
    lines.append(f"  first differing outputs ({len(doc['first'])} of {doc['differ']}), "
                 "each with the model's stages:")
    fs = FormatSet(p.fin, p.fb, p.fc, p.fout, p.fscale)
    for r in doc["first"]:
        i, j = r["position"]
        text = mismatch_lines(r, fs, "kernel")
        text[0] = f"  D[{i}, {j}]: " + text[0].split(": ", 1)[1]
        lines += _shortened(text)
    return lines


HEAD_LINES, TAIL_LINES = 24, 12
"""Lines kept of each differing output's text: its first (the outputs,
the first inputs and stages) and its last (the last block's sum, its
result and the rounding); a long K has more in between than anyone reads."""


def _shortened(text: list[str]) -> list[str]:
    if len(text) <= HEAD_LINES + TAIL_LINES + 1:
        return text
    gap = len(text) - HEAD_LINES - TAIL_LINES
    return text[:HEAD_LINES] + [f"      ... ({gap} lines of inputs and stages left out)"] + text[-TAIL_LINES:]


def assert_matches_model(D, A, B, C=None, model="hopper", *, scale_a=None, scale_b=None,
                         alpha=None, recipe=None, show: int = 3, backend=None) -> None:
    """Raise AssertionError, with compare()'s report, unless the kernel's D
    equals the model's bit for bit on the same operands."""
    doc = compare(D, A, B, C, model, scale_a=scale_a, scale_b=scale_b, alpha=alpha,
                  recipe=recipe, show=show, backend=backend)
    if doc["differ"]:
        raise AssertionError(doc["text"])
