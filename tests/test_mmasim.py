"""tcsmt's matmul against MMA-Sim (Xie et al., arXiv 2511.10909), an
independent bit-accurate simulator, on random GEMMs under every
architecture and format both tools model.

Install MMA-Sim with (torch first, or pip pulls a CUDA build of several GB):

    pip install torch==2.13.0 && pip install mmasim

Run: pytest -m mmasim tests/test_mmasim.py
"""

from __future__ import annotations

import numpy as np
import pytest

from tcsmt import matmul
from tcsmt.hardware.mmasim import PAIRS, operation
from tcsmt.model.catalogue import find_model

pytestmark = pytest.mark.mmasim

try:
    import torch
    from mmasim import amd, nv_ptx  # noqa: F401  (builds a small C++ extension on first import)
except Exception as e:                # pragma: no cover - depends on the environment
    pytest.skip(f"MMA-Sim cannot be imported ({type(e).__name__}: {e}); "
                "install it with: pip install torch==2.13.0 && pip install mmasim",
                allow_module_level=True)

def to_torch(x: np.ndarray, dtype) -> torch.Tensor:
    raw = np.ascontiguousarray(x).view(f"i{x.itemsize}" if x.itemsize > 1 else "u1")
    return torch.from_numpy(raw).view(dtype)


def operands(p, m: int, k: int, n: int, seed: int):
    """Random A, B, C in the model's dtypes: normal values at several
    scales, with exact zeros, products that cancel and tiny values mixed in."""
    from tcsmt.sim.npio import dtype_of

    rng = np.random.default_rng(seed)
    scale = 2.0 ** rng.integers(-6, 7, (m, 1))
    a = rng.standard_normal((m, k)) * scale
    b = rng.standard_normal((k, n)) * 2.0 ** rng.integers(-6, 7, (1, n))
    a[rng.random((m, k)) < 0.1] = 0.0
    a[:, 1], b[1, :] = a[:, 0], -b[0, :]          # products 0 and 1 cancel
    a[0, :] *= 2.0 ** (p.fin.emin - 2)            # a row of tiny values (subnormal products)
    c = rng.standard_normal((m, n)) * 2.0 ** rng.integers(-8, 9, (m, n))
    fin, fc = dtype_of(p.fin), dtype_of(p.fc)
    return (a.astype(np.float32).astype(fin), b.astype(np.float32).astype(fin),
            c.astype(np.float32).astype(fc))


@pytest.mark.parametrize("row", PAIRS, ids=lambda r: f"{r[0]}:{r[3]}")
@pytest.mark.parametrize("seed", [0, 1])
def test_matmul_equals_mmasim(row, seed):
    check_against_mmasim(row, seed, "numpy")


HOPPER = [r for r in PAIRS if r[0] == "hopper-fp16-fp32"][:1]


@pytest.mark.parametrize("row", HOPPER, ids=lambda r: f"{r[0]}:{r[3]}")
def test_compiled_cpu_kernel_equals_mmasim(row):
    pytest.importorskip("numba")
    check_against_mmasim(row, 0, "cpu")


@pytest.mark.slow
@pytest.mark.parametrize("row", PAIRS, ids=lambda r: f"{r[0]}:{r[3]}")
def test_compiled_cpu_kernel_equals_mmasim_on_every_pair(row):
    pytest.importorskip("numba")
    check_against_mmasim(row, 1, "cpu")


def check_against_mmasim(row, seed: int, backend: str):
    name, cls, arch, shape = row
    p = find_model(name)
    op = operation(cls, arch, shape)
    m, n, k = 12, 10, 2 * p.block_size + 5
    A, B, C = operands(p, m, k, n, seed)
    D = matmul(A, B, C, arch=p, backend=backend)
    ref = op(to_torch(A, op.a_type), to_torch(B, op.b_type), to_torch(C, op.c_type)).numpy()
    bits = {2: np.uint16, 4: np.uint32}[D.itemsize]
    got, want = D.view(bits), np.ascontiguousarray(ref).view(bits)
    bad = np.argwhere(got != want)
    assert bad.size == 0, f"{name}: {len(bad)} of {D.size} differ, first at {bad[0].tolist()}: " \
                          f"tcsmt {got[tuple(bad[0])]:#x}, MMA-Sim {want[tuple(bad[0])]:#x}"


def test_every_pair_names_a_shipped_model():
    for name, *_ in PAIRS:
        assert find_model(name).name == name
