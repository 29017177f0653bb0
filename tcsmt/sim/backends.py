"""Which engine runs a matrix product or a batch of dot products.

* ``numpy``: the recorded program replayed by the NumPy interpretation
  (tcsmt.interp.program), one array per instruction; no compilation.
* ``cpu``: the program compiled by Numba into one fused kernel per model and
  K (tcsmt.sim.kernels), on every core.
* ``cuda``: the same program as a CUDA kernel, one thread per output.

All three run the same recorded program and give the same bits (the tests
compare them). Without a choice (``backend=None``) the fastest available
for this call is taken: ``cuda`` where a CUDA device is present, else
``cpu`` (Numba comes with tcsmt) for every product that is not small
(AUTO_CACHED_PRODUCTS), compiling its kernel the first time (said on
stderr, with the seconds it took; Numba's on-disk cache keeps it for later
processes), else ``numpy``.
"""

from __future__ import annotations

import numpy as np

from tcsmt.errors import UserError
from tcsmt.interp.kernel_source import KernelTooLarge
from tcsmt.model.params import ModelParams
from tcsmt.sim import kernels

BACKENDS = ("numpy", "cpu", "cuda")

AUTO_CACHED_PRODUCTS = 1 << 24
"""Products past which the compiled kernel runs (the look-up writes the
kernel's source, about as long as recording the program; below this the
NumPy interpretation is done sooner). The first time a kernel is needed it
is compiled (7 to 60 s, said on stderr); later processes load it in under
a second."""


def check_backend(backend: str | None) -> None:
    if backend is not None and backend not in BACKENDS:
        raise UserError(f"unknown backend {backend!r}: choose one of {', '.join(BACKENDS)}")


def choose(p: ModelParams, k: int, products: int, backend: str | None, kind: str = "cpu") -> str:
    """The backend to run: ``backend`` when given (checked), else the fastest
    available (see the module doc)."""
    check_backend(backend)
    if backend in ("cpu", "cuda"):
        kernels.need_numba(backend)
    if backend == "cuda" and not kernels.cuda_available():
        raise UserError("backend 'cuda': no CUDA device is available (numba.cuda finds none; a CUDA GPU "
                        "needs its driver and pip install 'tcsmt[cuda]')")
    if backend is not None:
        return backend
    if not kernels.have_numba():
        return "numpy"
    if kernels.cuda_available() and _compiles(p, k, "cuda"):
        return "cuda"
    if products < AUTO_CACHED_PRODUCTS or not _compiles(p, k, kind):
        return "numpy"
    return kind


def _compiles(p: ModelParams, k: int, kind: str) -> bool:
    try:
        kernels.kernel_source_text(kind, p, k)
    except KernelTooLarge:
        return False
    return True


def gemm_bits(p: ModelParams, backend: str, at: np.ndarray, bt: np.ndarray, ct: np.ndarray,
              threads: int | None = None, sa: np.ndarray | None = None,
              sb: np.ndarray | None = None) -> np.ndarray:
    """D's bits [M, N] with a compiled backend, from A's bits transposed
    at [K, M], B's bt [K, N], C's ct [M, N] and, for a block-scaled model,
    the scales' bits sa [S, M] and sb [S, N]."""
    if backend == "cpu":
        return kernels.run_cpu(p, at, bt, ct, threads=threads, sa=sa, sb=sb)
    if backend == "cuda":
        return kernels.run_cuda(p, np.ascontiguousarray(at.T), bt, ct, sa=sa, sb=sb)
    raise ValueError(f"gemm_bits runs cpu or cuda, not {backend!r}")


def dots_bits(p: ModelParams, backend: str, a: np.ndarray, b: np.ndarray, c: np.ndarray,
              threads: int | None = None, sa: np.ndarray | None = None,
              sb: np.ndarray | None = None) -> np.ndarray:
    """d bits [R] with a compiled backend for rows a [R, K], b [R, K], c [R]
    and the scales' bits transposed sa [S, R], sb [S, R]."""
    if backend == "cpu":
        return kernels.run_rows(p, a, b, c, threads=threads, sa=sa, sb=sb)
    if backend == "cuda":          # one column per row: D[r, r] is row r's dot product
        raise UserError("rows of dot products run on the numpy or cpu backend")
    raise ValueError(f"dots_bits runs cpu, not {backend!r}")
