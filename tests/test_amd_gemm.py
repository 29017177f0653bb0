"""Issue 14, as judged: a random 128x128x256 GEMM through tcsmt.matmul
equals MMA-Sim (Xie et al., arXiv 2511.10909) bit for bit on AMD CDNA3
fp8 x bf8, CDNA3 xf32, CDNA2 bf16_1k and CDNA1 fp16.

The operands are random bit patterns of their formats: values around a
scale that differs by row and column, zeros of both signs, subnormals, and
a share of any encoding at all (NaN, infinity, the largest numbers).
Where MMA-Sim computes in the host's float arithmetic (CDNA1's exact sums
in binary64, CDNA2's binary32 additions) its NaN is the host's, so a NaN
matches any NaN there; CDNA3's NaN is canonical and compared bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from tcsmt import matmul
from tcsmt.model.choose import choose
from tcsmt.model.formats import Format
from tcsmt.peer.mmasim import operation
from tcsmt.sim.npio import from_bits

pytestmark = pytest.mark.mmasim

try:
    import torch  # noqa: F401
    from mmasim import amd  # noqa: F401  (builds a small C++ extension on first import)
except Exception as e:                # pragma: no cover - depends on the environment
    pytest.skip(f"MMA-Sim cannot be imported ({type(e).__name__}: {e}); "
                "install it with: pip install torch==2.13.0 && pip install mmasim",
                allow_module_level=True)

M, N, K = 128, 128, 256
JUDGED = [  # model, MMA-Sim architecture and instruction, NaN compared as a class
    ("cdna3-e4m3fnuz-e5m2fnuz-fp32", "CDNA3", "f32_32x32x16_fp8_bf8", False),
    ("cdna3-xf32-fp32", "CDNA3", "f32_32x32x4_xf32", False),
    ("cdna2-bf16-fp32-1k", "CDNA2", "f32_32x32x8bf16_1k", True),
    ("cdna1-fp16-fp32", "CDNA1", "f32_32x32x8f16", True),
]


def random_bits(rng, fmt: Format, shape, scale) -> np.ndarray:
    """Bit patterns of fmt (storage width): normal values with exponents
    near ``scale`` (broadcast to shape), zeros, subnormals, any encoding."""
    n = int(np.prod(shape))
    kind = rng.random(n)
    sign = rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(fmt.bits - 1)
    frac = rng.integers(0, 1 << fmt.frac_bits, n, dtype=np.uint64)
    e = np.broadcast_to(scale, shape).reshape(-1) + rng.integers(-3, 4, n) + fmt.bias
    e = np.clip(e, 1, fmt.max_exp_field).astype(np.uint64)
    out = sign | (e << np.uint64(fmt.frac_bits)) | frac
    zero = (kind >= 0.80) & (kind < 0.88)
    out[zero] = sign[zero] if fmt.has_negative_zero else 0
    sub = (kind >= 0.88) & (kind < 0.95)
    out[sub] = sign[sub] | frac[sub] | np.uint64(1)          # never -0 (fnuz: NaN)
    anything = kind >= 0.98
    out[anything] = rng.integers(0, 1 << fmt.bits, int(anything.sum()), dtype=np.uint64)
    return (out << np.uint64(fmt.storage_shift)).reshape(shape)


def operands(p, seed: int):
    rng = np.random.default_rng(seed)
    rows = rng.integers(-4, 5, (M, 1))
    cols = rng.integers(-4, 5, (1, N))
    A = random_bits(rng, p.fin, (M, K), rows)
    B = random_bits(rng, p.fb, (K, N), cols)
    C = random_bits(rng, p.fc, (M, N), rows + cols)
    return (from_bits(A >> np.uint64(p.fin.storage_shift), p.fin),
            from_bits(B >> np.uint64(p.fb.storage_shift), p.fb),
            from_bits(C, p.fc))


def torch_view(x: np.ndarray, dtype):
    raw = np.ascontiguousarray(x).view(f"i{x.itemsize}" if x.itemsize > 1 else "u1")
    return torch.from_numpy(raw).view(dtype)


def is_nan(bits: np.ndarray) -> np.ndarray:
    return (bits & 0x7FFFFFFF) > 0x7F800000


@pytest.mark.parametrize("name,arch,shape,nan_class", JUDGED, ids=[j[0] for j in JUDGED])
def test_gemm_128x128x256_equals_mmasim(name, arch, shape, nan_class):
    p = choose(name)
    op = operation("MFMA", arch, shape)
    A, B, C = operands(p, seed=14)
    D = matmul(A, B, C, model=p)
    ref = op(torch_view(A, op.a_type), torch_view(B, op.b_type), torch_view(C, op.c_type))
    got, want = D.view(np.uint32), ref.numpy().view(np.uint32)
    bad = got != want
    if nan_class:
        bad &= ~(is_nan(got) & is_nan(want))
    assert got.shape == (M, N) and 0 < is_nan(got).sum() < got.size // 4
    where = np.argwhere(bad)
    assert not where.size, (f"{name}: {len(where)} of {got.size} differ, first at "
                            f"{where[0].tolist()}: tcsmt {got[tuple(where[0])]:#x}, "
                            f"MMA-Sim {want[tuple(where[0])]:#x}")
