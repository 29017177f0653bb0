"""Which engine runs a matrix product or a batch of dot products.

* ``numpy``: the chain of blocks replayed by the NumPy interpretation
  (tcsmt.sim.replay), one array per instruction; no compilation.
* ``cpu``: the chain's programs compiled (LLVM, through llvmlite) into
  kernels once per model and block shape (tcsmt.sim.cpu), on every core.
* ``cuda``: the same programs as CUDA kernels, one thread per output.

All three run the same recorded programs and give the same bits (the
tests compare them). Without a choice (``backend=None``) the fastest
available for this call is taken: ``cuda`` where a CUDA device is present,
else ``cpu`` (llvmlite comes with tcsmt) for every product the NumPy
interpretation would not finish in a few tenths of a second
(AUTO_CACHED_PRODUCTS at its best rate; a D of few elements runs slower:
numpy_work), compiling its kernels the first time (1 to 4 CPU-seconds,
said on stderr; the on-disk cache keeps them for later processes), else
``numpy``.
"""

from __future__ import annotations

import numpy as np

from tcsmt.errors import UserError
from tcsmt.model.params import ModelParams
from tcsmt.sim import kernels

BACKENDS = ("numpy", "cpu", "cuda")

AUTO_CACHED_PRODUCTS = 1 << 24
"""Products the NumPy interpretation runs (at its best rate) in about the
time the kernels take to be looked up, and a fraction of what compiling
them takes the first time (1 to 4 CPU-seconds): past this, the kernels."""

NUMPY_RATE = 1e8
"""Products per second of the NumPy interpretation at best (tiles of
NUMPY_RATE / NUMPY_RATE_PER_OUTPUT outputs or more)."""

NUMPY_RATE_PER_OUTPUT = 1e4
"""Its products per second per element of D below that: its arrays are as
wide as D, so a 1 x K x 1 product runs at about 10^4 products/s."""


def numpy_work(products: int, outputs: int) -> float:
    """The NumPy interpretation's time for this product, in products at its
    best rate (what AUTO_CACHED_PRODUCTS counts)."""
    return products * NUMPY_RATE / min(NUMPY_RATE, NUMPY_RATE_PER_OUTPUT * max(1, outputs))


def check_backend(backend: str | None) -> None:
    if backend is not None and backend not in BACKENDS:
        raise UserError(f"unknown backend {backend!r}: choose one of {', '.join(BACKENDS)}")


def choose(p: ModelParams, k: int, products: int, backend: str | None, kind: str = "cpu") -> str:
    """The backend to run: ``backend`` when given (checked), else the fastest
    available (see the module doc)."""
    check_backend(backend)
    if backend in ("cpu", "cuda"):
        kernels.need_compiler(backend)
    if backend == "cuda" and not kernels.cuda_available():
        raise UserError("backend 'cuda': no CUDA device is available (numba.cuda finds none; a CUDA GPU "
                        "needs its driver and pip install 'tcsmt[cuda]')")
    if backend is not None:
        return backend
    if kernels.cuda_available() and kind == "cpu":
        return "cuda"
    work = numpy_work(products, products // max(1, k))
    if not kernels.have_compiler("cpu") or work < AUTO_CACHED_PRODUCTS:
        return "numpy"
    return "cpu"


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
