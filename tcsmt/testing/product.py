"""A matrix product as bits of a model's formats (``Product``), from NumPy
operands: A's rows and B's columns [M, K] and [N, K], c [M, N], the scales
of block-scaled models, NVFP4's alpha, and the model's D."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcsmt.errors import ShapeError
from tcsmt.model.params import ModelParams
from tcsmt.sim.npio import dtype_of, to_bits


@dataclass
class Product:
    """One matrix product as bits of the model's formats."""
    p: ModelParams
    a: np.ndarray              # [M, K] A's rows
    b: np.ndarray              # [N, K] B's columns
    c: np.ndarray              # [M, N] (zero where alpha is set: C is added after)
    model_d: np.ndarray        # [M, N] the model's D, out_format bits
    sa: np.ndarray | None = None     # [M, S]
    sb: np.ndarray | None = None     # [N, S]
    alpha: np.float32 | None = None


def numpy_product(A, B, C, model, scale_a=None, scale_b=None, alpha=None, recipe=None,
                  backend=None) -> Product:
    """The model's D and the bits of the operands, NumPy arrays as
    tcsmt.matmul takes them (alpha: a float32 that multiplies the unit's
    output before C is added)."""
    from tcsmt.sim.batch import matmul
    from tcsmt.sim.npio import model_for_arrays
    A, B = np.asarray(A), np.asarray(B)
    c0 = np.zeros((1, 1), np.float32) if C is None else np.asarray(C)
    p = model_for_arrays(model, None, None, A, c0, B)
    if A.ndim != 2 or B.ndim != 2:
        raise ShapeError(f"A and B must be 2-D; got {A.ndim}-D and {B.ndim}-D")
    m, n = A.shape[0], B.shape[1]
    C = np.zeros((m, n), dtype_of(p.fc)) if C is None else np.broadcast_to(np.asarray(C), (m, n))
    acc_c = np.zeros_like(C) if alpha is not None else C
    D = np.asarray(matmul(A, B, acc_c, p, scale_a=scale_a, scale_b=scale_b, backend=backend))
    if alpha is not None:
        D = (D * np.float32(alpha)).astype(np.float32) + C.astype(np.float32)
    sa = None if scale_a is None else to_bits(np.asarray(scale_a), p.scaling()[0], "scale_a")
    sb = None if scale_b is None else to_bits(np.asarray(scale_b), p.scaling()[0], "scale_b").T
    return Product(p, to_bits(A, p.fin, "A"), to_bits(B, p.fb, "B").T, to_bits(acc_c, p.fc, "C"),
                   to_bits(np.ascontiguousarray(D), p.fout, "D"), sa, sb,
                   None if alpha is None else np.float32(alpha))
