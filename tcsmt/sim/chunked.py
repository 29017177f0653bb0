"""D = C + A @ B on dask arrays: tiles of D as tasks, chained along K.

``matmul_dask`` builds (and does not compute) a dask array: D is cut into
tiles of ``tile`` = (rows, columns) and K into parts of ``k_part``
products; a task computes one tile for one part with
``tcsmt.sim.batch.matmul_bits`` (the recorded datapath, or the compiled
kernel ``backend`` names) and hands its bits to the task of the next part
as that part's c. That is the unit's own chaining: the datapath says where
a dot product may be cut (``tcsmt.datapath.split_step``: at block and scale
block boundaries, for recursive chaining through one format); K parts are
rounded to a multiple of that step, and a model whose dot products cannot
be cut (c added after the blocks, terms reordered across K, e8m13 block
results) runs each tile over the whole K in one task. The bits are those
of ``tcsmt.matmul`` on the whole arrays.

Memory per task, at most: the tile's A part and B part and its C and D
(8 bytes per element each: rows x k_part + k_part x columns + 2 x rows x
columns) and the batch simulator's working arrays (``max_memory``, see
tcsmt.sim.batch), about 8 MiB + 64 MiB with the defaults; a worker holds
that once per thread it runs. The compiled kernel runs one thread per task
(the worker's threads are the parallelism).
"""

from __future__ import annotations

import numpy as np

from tcsmt.datapath import split_step
from tcsmt.errors import UserError
from tcsmt.model.params import ModelParams
from tcsmt.sim.batch import check_shapes, check_supported, matmul_bits, scale_bits
from tcsmt.sim.npio import from_bits, to_bits

TILE = (512, 512)
K_PART = 512
TASK_MEMORY = 64 << 20
"""Working bytes of the batch simulator per task (its tiles inside a task)."""


def is_dask(x) -> bool:
    return type(x).__module__.split(".")[0] == "dask"


def _dask_array():
    try:
        import dask.array as da
    except ImportError:
        raise UserError("dask arrays need dask: pip install 'tcsmt[cluster]'") from None
    return da


def k_parts(p: ModelParams, k: int, k_part: int = K_PART) -> list[tuple[int, int]]:
    """Ranges of K, each a multiple of the datapath's split step (the last
    one the rest); one range when the model's dot products cannot be cut."""
    step = split_step(p)
    if step is None or k <= k_part:
        return [(0, k)]
    size = max(step, k_part // step * step)
    return [(k0, min(k, k0 + size)) for k0 in range(0, k, size)]


def _tile(a, b, c, *scales, p: ModelParams, backend, max_memory: int):
    """One task: a [rows, part] and b [part, columns] bits, c [rows, columns]
    bits (C's, or the part before's D) -> D's bits."""
    sa = np.ascontiguousarray(scales[0].T) if scales else None
    sb = np.ascontiguousarray(scales[1]) if scales else None
    return matmul_bits(p, np.ascontiguousarray(a.T), np.ascontiguousarray(b), c, max_memory,
                       backend=backend, threads=1, sa=sa, sb=sb)


def matmul_dask(A, B, C, p: ModelParams, backend: str | None = None, scale_a=None, scale_b=None,
                tile: tuple[int, int] = TILE, k_part: int = K_PART, max_memory: int = TASK_MEMORY):
    """D = C + A @ B as a dask array (see the module doc); A, B, C (and the
    scales of a block-scaled model) dask or NumPy arrays of the model's
    dtypes. Computing it gives the bits ``tcsmt.matmul`` gives."""
    da = _dask_array()
    A, B, C = (x if is_dask(x) else da.from_array(np.asarray(x)) for x in (A, B, C))
    for x, fmt, name in ((A, p.fin, "A"), (B, p.fb, "B"), (C, p.fc, "C")):
        to_bits(np.zeros(0, x.dtype), fmt, name)        # the dtype's check, now rather than in a task
    (m, k), n = A.shape, B.shape[1]
    tm, tn = min(m, tile[0]), min(n, tile[1])
    ab = A.map_blocks(to_bits, p.fin, "A", dtype=np.uint64)
    bb = B.map_blocks(to_bits, p.fb, "B", dtype=np.uint64)
    d = C.map_blocks(to_bits, p.fc, "C", dtype=np.uint64).rechunk((tm, tn))
    scales = _scales(da, p, k, scale_a, scale_b)
    for k0, k1 in k_parts(p, k, k_part):
        args = [ab[:, k0:k1].rechunk((tm, k1 - k0)), "ik", bb[k0:k1].rechunk((k1 - k0, tn)), "kj", d, "ij"]
        if scales:
            block = p.scaling()[1]
            s0, s1 = k0 // block, -(-k1 // block)
            args += [scales[0][:, s0:s1].rechunk((tm, s1 - s0)), "il",
                     scales[1][s0:s1].rechunk((s1 - s0, tn)), "lj"]
        d = da.blockwise(_tile, "ij", *args, p=p, backend=backend, max_memory=max_memory,
                         concatenate=True, dtype=np.uint64)
    return d.map_blocks(from_bits, p.fout, dtype=from_bits(np.zeros(1, np.uint64), p.fout).dtype)


def _scales(da, p: ModelParams, k: int, scale_a, scale_b):
    """The scales' bits as dask arrays, [M, S] and [S, N] (none without a scale format)."""
    if not p.scale_count(k):
        return ()
    sa, sb = (x.compute() if is_dask(x) else x for x in (scale_a, scale_b))
    m, n = (sa.shape[0] if sa is not None else 0), (sb.shape[1] if sb is not None else 0)
    at, bt = scale_bits(p, k, m, n, sa, sb)
    return da.from_array(np.ascontiguousarray(at.T)), da.from_array(bt)


def matmul_on_cluster(address: str, A, B, C, p: ModelParams, backend: str | None = None,
                      scale_a=None, scale_b=None) -> np.ndarray:
    """D (a NumPy array) computed as tiles on the Dask cluster at ``address``
    (tcsmt.matmul on dask arrays of A, B and C, chunked as its tasks read them)."""
    from tcsmt.runner.cluster import compute
    da = _dask_array()
    check_shapes(A, B, C)
    tm, tn, kp = (max(1, min(x, t)) for x, t in ((A.shape[0], TILE[0]), (B.shape[-1], TILE[1]),
                                                 (A.shape[-1], K_PART)))
    A, B, C = (x if is_dask(x) else da.from_array(np.asarray(x), chunks=ch)
               for x, ch in ((A, (tm, kp)), (B, (kp, tn)), (C, (tm, tn))))
    check_supported(p, A.shape[1])
    return compute(address, matmul_dask(A, B, C, p, backend, scale_a, scale_b))
