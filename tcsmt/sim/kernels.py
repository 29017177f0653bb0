"""Compiled GEMM kernels: the recorded datapath program (tcsmt.interp.program)
turned into source by tcsmt.interp.kernel_source and compiled by Numba,
for every core of the CPU ("cpu") and for CUDA devices ("cuda").

Kernels are cached twice: in this process by their source, and on disk
(Numba's cache=True) next to the generated module, in
``$TCSMT_KERNEL_CACHE`` or ``~/.cache/tcsmt/kernels``: the module's file
name is the sha256 of its source, so a changed datapath gives a new file
and a new compilation, and an unchanged one is loaded, not compiled.

Memory: the CPU kernel holds, per thread, one tile's hoisted values
(HA, HB: (TM + TN) x K x a few uint32, or uint64 where one is wider than
32 bits) and its state arrays (a few x TM x TN uint64), beside A, B, C
and D's bits; the CUDA kernel holds nothing but A, B, C and D on the
device.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import os
import sys
import time
from pathlib import Path

import numpy as np

from tcsmt import environment
from tcsmt.errors import BadOption, UserError
from tcsmt.fileio import text_or_none, write_atomic
from tcsmt.interp.kernel_source import cpu_source, cuda_source, rows_source
from tcsmt.interp.program import record
from tcsmt.model.params import ModelParams

TILE = (32, 64)
"""Rows and columns of D per CPU tile: state arrays of a few x 16 KiB stay in
the L2 cache and each tile's rows are long enough for SIMD."""


def cache_dir() -> Path:
    """$TCSMT_KERNEL_CACHE, else ~/.cache/tcsmt/kernels."""
    env = environment.kernel_cache()
    return Path(env) if env else Path.home() / ".cache" / "tcsmt" / "kernels"


def _writable_cache() -> Path:
    """cache_dir(), made if missing; BadOption (naming TCSMT_KERNEL_CACHE
    when it is set) when it is not a folder this process can write."""
    folder = cache_dir()
    what = "TCSMT_KERNEL_CACHE" if environment.kernel_cache() else "the kernel cache"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise BadOption(f"{what} {folder}: not a folder tcsmt can make or write "
                        f"({e.strerror or e})") from None
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise BadOption(f"{what} {folder}: not a folder tcsmt can write")
    return folder


def have_numba() -> bool:
    try:
        return importlib.util.find_spec("numba") is not None
    except (ImportError, ValueError):
        return False


def need_numba(backend: str) -> None:
    """UserError naming the extra to install when Numba cannot be imported."""
    extra = "kernels" if backend == "cpu" else "cuda"
    try:
        import numba  # noqa: F401
    except ImportError as e:
        why = "is not installed" if not have_numba() else f"cannot be imported ({e})"
        raise UserError(f"the {backend} backend needs Numba, which {why}: pip install "
                        f"'tcsmt[{extra}]' (or use the numpy backend)") from None


def _digest(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()[:24]


@functools.lru_cache(maxsize=128)
def kernel_source_text(kind: str, p: ModelParams, k: int) -> str:
    make = {"cpu": cpu_source, "rows": rows_source, "cuda": cuda_source}[kind]
    return make(record(p, k), p.block_size)


def compiled_on_disk(kind: str, p: ModelParams, k: int) -> bool:
    """Whether Numba's cache already holds this kernel (no compilation)."""
    stem = f"tcsmt_{kind}_{_digest(kernel_source_text(kind, p, k))}"
    return any((cache_dir() / "__pycache__").glob(f"{stem}.*.nbi"))


@functools.lru_cache(maxsize=64)
def _load(source: str, kind: str):
    """The module of this source, written under cache_dir() and imported."""
    digest = _digest(source)
    folder = _writable_cache()
    path = folder / f"tcsmt_{kind}_{digest}.py"
    if text_or_none(path) != source:
        write_atomic(path, lambda f: f.write(source))
    name = f"tcsmt_kernel_{kind}_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_COMPILED: set[tuple[str, str]] = set()
"""(kind, source digest) of the kernels compiled or loaded in this process."""


@contextlib.contextmanager
def compiling(kind: str, p: ModelParams, k: int):
    """Around a kernel's call: where this call compiles it (the kernel is
    neither in this process nor in the on-disk cache), say so on stderr,
    and how long the call took. Later processes load it from the cache."""
    key = (kind, _digest(kernel_source_text(kind, p, k)))
    fresh = key not in _COMPILED and not compiled_on_disk(kind, p, k)
    if fresh:
        print(f"tcsmt: compiling the {kind} kernel of {p.name} for K = {k} (once: it is kept in "
              f"{cache_dir()})...", file=sys.stderr, flush=True)
    start = time.monotonic()
    yield
    _COMPILED.add(key)
    if fresh:
        print(f"tcsmt: compiled and ran in {time.monotonic() - start:.1f} s", file=sys.stderr, flush=True)


def cpu_kernel(p: ModelParams, k: int):
    """The compiled CPU GEMM kernel of p for dot products of length k."""
    need_numba("cpu")
    return _load(kernel_source_text("cpu", p, k), "cpu").gemm


def rows_kernel(p: ModelParams, k: int):
    """The compiled CPU kernel of p for rows of dot products of length k."""
    need_numba("cpu")
    return _load(kernel_source_text("rows", p, k), "rows").dots


def cuda_kernel(p: ModelParams, k: int):
    """The CUDA kernel of p for dot products of length k (a numba.cuda kernel)."""
    need_numba("cuda")
    return _load(kernel_source_text("cuda", p, k), "cuda").gemm


def cuda_available() -> bool:
    if not have_numba():
        return False
    try:
        from numba import cuda
        return bool(cuda.is_available())
    except Exception:              # a driver that cannot be loaded: no device
        return False


def run_cpu(p: ModelParams, at: np.ndarray, bt: np.ndarray, ct: np.ndarray,
            threads: int | None = None, tile: tuple[int, int] = TILE,
            sa: np.ndarray | None = None, sb: np.ndarray | None = None) -> np.ndarray:
    """D's bits [M, N] (uint64) from A's bits transposed at [K, M], B's bits
    bt [K, N], C's bits ct [M, N] and, for a block-scaled model, the
    scales' bits sa [S, M] and sb [S, N], on ``threads`` cores (all by
    default)."""
    need_numba("cpu")
    from numba import get_num_threads, set_num_threads
    gemm = cpu_kernel(p, at.shape[0])
    d = np.empty((at.shape[1], bt.shape[1]), dtype=np.uint64)
    before = get_num_threads()
    if threads is not None:
        set_num_threads(threads)
    try:
        with compiling("cpu", p, at.shape[0]):
            gemm(_u64(at), _u64(bt), _u64(ct), d, _scales(sa, at.shape[1]), _scales(sb, bt.shape[1]),
                 tile[0], tile[1], _group(d.shape, tile, get_num_threads()))
    finally:
        set_num_threads(before)
    return d


TASKS_PER_THREAD = 8
"""Tasks of the CPU GEMM per thread, at least (where D has that many
tiles): enough for the threads to share the work evenly."""


def _group(shape: tuple, tile: tuple, threads: int) -> int:
    """Tiles of a column of tiles per task: a whole column where there are
    columns enough for every thread, else columns cut into as many tasks as
    the threads need (B's part runs once per task)."""
    ntm, ntn = (-(-x // t) for x, t in zip(shape, tile))
    tasks = min(ntm, max(1, -(-TASKS_PER_THREAD * threads // ntn)))
    return -(-ntm // tasks)


def run_rows(p: ModelParams, a: np.ndarray, b: np.ndarray, c: np.ndarray,
             threads: int | None = None, rows: int = 256,
             sa: np.ndarray | None = None, sb: np.ndarray | None = None) -> np.ndarray:
    """d[r] bits (uint64) for rows of bits a [R, K], b [R, K] and c [R],
    and the scales' bits transposed sa [S, R], sb [S, R] of a block-scaled
    model."""
    need_numba("cpu")
    from numba import get_num_threads, set_num_threads
    dots = rows_kernel(p, a.shape[1])
    d = np.empty(a.shape[0], dtype=np.uint64)
    before = get_num_threads()
    if threads is not None:
        set_num_threads(threads)
    try:
        with compiling("rows", p, a.shape[1]):
            dots(_u64(a.T), _u64(b.T), _u64(c), d, _scales(sa, len(c)), _scales(sb, len(c)), rows)
    finally:
        set_num_threads(before)
    return d


def run_cuda(p: ModelParams, a, b, c, block: tuple[int, int] = (16, 16), sa=None, sb=None):
    """D's bits [M, N] from A's bits a [M, K], B's b [K, N], C's c [M, N]
    and, for a block-scaled model, the scales' bits sa [S, M], sb [S, N]:
    NumPy arrays (copied to the device and back) or device arrays (any
    object with the CUDA array interface; the result stays on the device)."""
    need_numba("cuda")
    from numba import cuda
    gemm = cuda_kernel(p, a.shape[1])
    on_host = isinstance(a, np.ndarray)
    if sa is None or isinstance(sa, np.ndarray):
        sa, sb = (cuda.to_device(_scales(x, n)) for x, n in ((sa, a.shape[0]), (sb, b.shape[1])))
    if on_host:
        a, b, c = (cuda.to_device(_u64(x)) for x in (a, b, c))
    d = cuda.device_array((a.shape[0], b.shape[1]), dtype=np.uint64)
    grid = (-(-a.shape[0] // block[0]), -(-b.shape[1] // block[1]))
    with compiling("cuda", p, a.shape[1]):
        gemm[grid, block](a, b, c, d, sa, sb)
    return d.copy_to_host() if on_host else d


def _scales(x: np.ndarray | None, n: int) -> np.ndarray:
    """A model's scales as uint64 [S, n]; [0, n] for a model without them."""
    return np.zeros((0, n), dtype=np.uint64) if x is None else _u64(x)


def _u64(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.uint64)
