"""Compiled kernels: the chain of blocks (tcsmt.interp.chain) compiled for
every core of the CPU ("cpu": LLVM IR through llvmlite, tcsmt.sim.cpu) and
for CUDA devices ("cuda": Python source through numba.cuda, this module).

Kernels are compiled once per model and block shape, never per K, M or
N, and cached twice: in this process, and on disk in
``$TCSMT_KERNEL_CACHE`` or ``~/.cache/tcsmt/kernels`` (the CPU's object
code as tcsmt_cpu_SHA.o; a CUDA module as tcsmt_cuda_SHA.py, where Numba
keeps its own cache beside it): SHA is the sha256 of the generated code,
so a changed datapath gives a new file and an unchanged one is loaded, not
compiled.

Memory: the CPU kernels hold, per task, its tiles' state and a stretch
of hoisted words (tcsmt.sim.cpu); the CUDA kernels hold A, B, C, D, the
tables of rows and a state of 7 words per element of D on the device.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import importlib.util
import sys
import time

import numpy as np

from tcsmt.errors import UserError
from tcsmt.fileio import text_or_none, write_atomic
from tcsmt.interp.chain import end_program, plan, start_program, step_program
from tcsmt.interp.kernel_source import STATE, ends_source, steps_source
from tcsmt.model.params import ModelParams
from tcsmt.sim import cpu
from tcsmt.sim.llvm import cache_dir, have_llvm, writable_cache

__all__ = ["cache_dir", "compiled_on_disk", "cuda_available", "cuda_ptx", "have_compiler", "need_compiler",
           "run_cpu", "run_cuda", "run_rows"]


def have_numba() -> bool:
    try:
        return importlib.util.find_spec("numba") is not None
    except (ImportError, ValueError):
        return False


def have_compiler(backend: str) -> bool:
    """Whether the backend's compiler is installed (llvmlite for cpu, Numba for cuda)."""
    return have_llvm() if backend == "cpu" else have_numba()


def need_compiler(backend: str) -> None:
    """UserError naming the extra to install when the backend's compiler
    (llvmlite for cpu, Numba for cuda) cannot be imported."""
    package, extra = ("llvmlite", "kernels") if backend == "cpu" else ("numba", "cuda")
    try:
        importlib.import_module(package)
    except ImportError as e:
        why = "is not installed" if not have_compiler(backend) else f"cannot be imported ({e})"
        raise UserError(f"the {backend} backend needs {package}, which {why}: pip install "
                        f"'tcsmt[{extra}]' (or use the numpy backend)") from None


def compiled_on_disk(kind: str, p: ModelParams, k: int) -> bool:
    """Whether the cache already holds every CPU module this call needs."""
    return cpu.compiled_on_disk(p, k, "rows" if kind == "rows" else "gemm")


_COMPILED: set[tuple] = set()
"""(kind, model, block shapes) of the kernels compiled or loaded in this process."""


@contextlib.contextmanager
def compiling(kind: str, p: ModelParams, k: int):
    """Around a call: where it compiles kernels (neither in this process
    nor, for the CPU, in the on-disk cache), say so on stderr, and how long
    the call took. Kernels are compiled once per model and block shape."""
    key = (kind, p, frozenset(run.key for run in plan(p, k).runs))
    fresh = key not in _COMPILED and (kind == "cuda" or not compiled_on_disk(kind, p, k))
    if fresh:
        print(f"tcsmt: compiling the {kind} kernels of {p.name} for K = {k} (once per model and "
              f"block shape: they are kept in {cache_dir()})...", file=sys.stderr, flush=True)
    start = time.monotonic()
    yield
    _COMPILED.add(key)
    if fresh:
        print(f"tcsmt: compiled and ran in {time.monotonic() - start:.1f} s", file=sys.stderr, flush=True)


def run_cpu(p: ModelParams, at: np.ndarray, bt: np.ndarray, ct: np.ndarray,
            threads: int | None = None, tile: tuple[int, int] = cpu.TILE,
            sa: np.ndarray | None = None, sb: np.ndarray | None = None) -> np.ndarray:
    """D's bits [M, N] (uint64) from A's bits transposed at [K, M], B's bits
    bt [K, N], C's bits ct [M, N] and, for a block-scaled model, the
    scales' bits sa [S, M] and sb [S, N], on ``threads`` cores (all by
    default)."""
    need_compiler("cpu")
    with compiling("cpu", p, at.shape[0]):
        return cpu.run_gemm(p, at, bt, ct, threads, tile, sa, sb)


def run_rows(p: ModelParams, a: np.ndarray, b: np.ndarray, c: np.ndarray,
             threads: int | None = None, sa: np.ndarray | None = None,
             sb: np.ndarray | None = None) -> np.ndarray:
    """d[r] bits (uint64) for rows of bits a [R, K], b [R, K] and c [R],
    and the scales' bits transposed sa [S, R], sb [S, R] of a block-scaled
    model."""
    need_compiler("cpu")
    with compiling("rows", p, a.shape[1]):
        return cpu.run_rows(p, a, b, c, threads, sa, sb)


# ---------------------------------------------------------------------------
# CUDA
# ---------------------------------------------------------------------------

def _digest(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()[:24]


@functools.lru_cache(maxsize=64)
def _load(source: str):
    """The module of this source, written under cache_dir() and imported."""
    digest = _digest(source)
    path = writable_cache() / f"tcsmt_cuda_{digest}.py"
    if text_or_none(path) != source:
        write_atomic(path, lambda f: f.write(source))
    name = f"tcsmt_kernel_cuda_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@functools.lru_cache(maxsize=128)
def cuda_module(kind: str, p: ModelParams, key=None, ordered: bool = False):
    """A model's CUDA module, named by what it is (not by the model): models
    of one arithmetic share one source file in the cache. ``ordered``: the
    steps read the products at the rows of the plan's ORDER."""
    if kind == "ends":
        return _load(ends_source(start_program(p), end_program(p), "ends"))
    return _load(steps_source(step_program(p, key), f"steps {key.n}", ordered))


def cuda_available() -> bool:
    if not have_numba():
        return False
    try:
        from numba import cuda
        return bool(cuda.is_available())
    except Exception:              # a driver that cannot be loaded: no device
        return False


def cuda_ptx(p: ModelParams, k: int, cc: tuple[int, int] = (9, 0)) -> dict[str, str]:
    """The PTX of every CUDA kernel a call of length k runs ("start", "end",
    "steps I (N products)" per block shape), compiled by Numba and NVVM
    for compute capability cc with the argument types run_cuda passes:
    no GPU needed (NVVM, from the CUDA toolkit, is)."""
    need_compiler("cuda")
    from numba import cuda
    from numba import types as nt
    u2, u3 = nt.Array(nt.uint64, 2, "C"), nt.Array(nt.uint64, 3, "C")
    i1, i2 = nt.Array(nt.int64, 1, "C"), nt.Array(nt.int64, 2, "C")
    ends = cuda_module("ends", p)
    out = {"start": cuda.compile_ptx(ends.start.py_func, (u2, u3), cc=cc)[0],
           "end": cuda.compile_ptx(ends.end.py_func, (u2, u2, u3), cc=cc)[0]}
    pl = plan(p, k)
    keys = list(dict.fromkeys(run.key for run in pl.runs))
    for i, key in enumerate(keys):
        fn = cuda_module("steps", p, key, pl.order is not None).steps.py_func
        args = (u2, u2, u2, u2, i1, i2, u3) + (nt.int64,) * 4
        out[f"steps {i} ({key.n} products)"] = cuda.compile_ptx(fn, args, cc=cc)[0]
    return out


def run_cuda(p: ModelParams, a, b, c, block: tuple[int, int] = (16, 16), sa=None, sb=None):
    """D's bits [M, N] from A's bits a [M, K], B's b [K, N], C's c [M, N]
    and, for a block-scaled model, the scales' bits sa [S, M], sb [S, N]:
    NumPy arrays (copied to the device and back) or device arrays (any
    object with the CUDA array interface; the result stays on the device)."""
    need_compiler("cuda")
    from numba import cuda
    m, k = a.shape
    n = b.shape[1]
    pl = plan(p, k)
    on_host = isinstance(a, np.ndarray)
    if sa is None or isinstance(sa, np.ndarray):
        sa, sb = (cuda.to_device(_scales(x, w)) for x, w in ((sa, m), (sb, n)))
    if on_host:
        a, b, c = (cuda.to_device(np.ascontiguousarray(x, dtype=np.uint64)) for x in (a, b, c))
    order, srows, _, size, ident = cpu.tables(pl)
    order, srows = cuda.to_device(order), cuda.to_device(srows)
    st = cuda.device_array((len(STATE), m, n), dtype=np.uint64)
    d = cuda.device_array((m, n), dtype=np.uint64)
    grid = (-(-n // block[0]), -(-m // block[1]))      # x along the columns of D
    ends = cuda_module("ends", p)
    with compiling("cuda", p, k):
        ends.start[grid, block](c, st)
        for run in pl.runs:
            steps = cuda_module("steps", p, run.key, pl.order is not None).steps
            steps[grid, block](a, b, sa, sb, order, srows, st, run.j0, run.j1, size, ident)
        ends.end[grid, block](c, d, st)
    return d.copy_to_host() if on_host else d


def _scales(x: np.ndarray | None, n: int) -> np.ndarray:
    """A model's scales as uint64 [S, n]; [1, n] zeros for a model without them."""
    return np.zeros((1, n), dtype=np.uint64) if x is None else np.ascontiguousarray(x, dtype=np.uint64)
