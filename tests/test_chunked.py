"""GEMMs on dask arrays (tcsmt.sim.chunked): tiles of D as tasks, K cut
where the datapath allows (tcsmt.datapath.split_step), the bits of
tcsmt.matmul on the whole arrays. Computed here with dask's synchronous
scheduler; on a real cluster in test_cluster.py."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

from model_sample import distinct  # noqa: E402

from tcsmt import matmul  # noqa: E402
from tcsmt.datapath import split_step  # noqa: E402
from tcsmt.errors import UserError  # noqa: E402
from tcsmt.model.catalogue import all_models  # noqa: E402
from tcsmt.model.choose import choose  # noqa: E402
from tcsmt.sim import chunked  # noqa: E402
from tcsmt.sim.batch import supported  # noqa: E402
from tcsmt.sim.dot import dot_bits  # noqa: E402
from tcsmt.sim.npio import from_bits  # noqa: E402

# one model per way of chaining: recursive through binary32 and binary16, late c,
# e8m13 block results (no cut), c after the blocks with pairs_mod4 (no cut), tf32
SAMPLE = ["ampere-fp16-fp32", "volta-fp16-fp16", "cdna3-fp16-fp32", "hopper-e4m3-fp32",
          "hopper-e4m3-fp32-mma", "hopper-tf32-fp32"]
MODELS = [m for m in all_models() if m.scale_format is None and m.sparsity == "dense" and supported(m)]
CUT = [m.name for m in MODELS if split_step(m) is not None]


def random_bits(fmt, shape, rng) -> np.ndarray:
    """Any bit patterns (NaN, infinities, subnormals, zeros of both signs)."""
    return rng.integers(0, 1 << fmt.bits, size=shape, dtype=np.uint64)


def operands(p, m, k, n, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(from_bits(random_bits(f, shape, rng), f)
                 for f, shape in ((p.fin, (m, k)), (p.fb, (k, n)), (p.fc, (m, n))))


def same_bits(x: np.ndarray, y: np.ndarray) -> bool:
    return x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()


@pytest.mark.parametrize("name", CUT)
def test_a_cut_dot_product_chains_through_its_result(name):
    """The datapath's own claim, scalar: a dot product cut at split_step
    multiples, each part's d the next part's c, gives the bits of the whole."""
    p = choose(name)
    step = split_step(p)
    rng = np.random.default_rng(3)
    k = 3 * step + step // 2
    for _ in range(12 if name in SAMPLE else 3):
        a = [int(x) for x in random_bits(p.fin, k, rng)]
        b = [int(x) for x in random_bits(p.fb, k, rng)]
        c = int(random_bits(p.fc, 1, rng)[0])
        d = c
        for k0 in range(0, k, 2 * step):
            d = dot_bits(p, a[k0:k0 + 2 * step], b[k0:k0 + 2 * step], d)
        assert d == dot_bits(p, a, b, c)


def test_k_parts_cut_at_the_step():
    p = choose("ampere-fp16-fp32")                 # blocks of 8
    assert chunked.k_parts(p, 100, 20) == [(0, 16), (16, 32), (32, 48), (48, 64), (64, 80), (80, 96),
                                          (96, 100)]
    assert chunked.k_parts(p, 100, 3) == [(k0, min(100, k0 + 8)) for k0 in range(0, 100, 8)]
    assert chunked.k_parts(choose("hopper-e4m3-fp32"), 100, 20) == [(0, 100)]


@pytest.mark.parametrize("name", SAMPLE)
def test_dask_arrays_give_the_bits_of_numpy_arrays(name):
    p = choose(name)
    A, B, C = operands(p, 37, 90, 29)
    want = matmul(A, B, C, arch=p, backend="numpy")
    D = matmul(da.from_array(A, chunks=(16, 40)), da.from_array(B, chunks=(40, 7)), C, arch=p,
               backend="numpy")
    assert isinstance(D, da.Array) and D.shape == want.shape
    assert same_bits(D.compute(scheduler="sync"), want)
    tiled = chunked.matmul_dask(A, B, C, p, "numpy", tile=(10, 8), k_part=24)
    assert tiled.numblocks == (4, 4)
    assert same_bits(tiled.compute(scheduler="threads"), want)


def test_dask_input_errors_are_one_line():
    p = choose("ampere-fp16-fp32")
    A, B, C = operands(p, 4, 8, 3)
    with pytest.raises(UserError, match="A's columns must equal B's rows"):
        matmul(da.from_array(A), da.from_array(B[:5]), C, arch=p)
    with pytest.raises(UserError, match="float16"):
        matmul(da.from_array(A.astype(np.float32)), B, C, arch="ampere-fp16-fp32")


@pytest.mark.parametrize("name", [m.name for m in distinct(MODELS)])
def test_every_model_on_dask_arrays(name):
    """One model of each distinct arithmetic (tests/model_sample.py: the
    others run the same datapath)."""
    p = choose(name)
    A, B, C = operands(p, 33, 150, 17, seed=5)
    got = chunked.matmul_dask(A, B, C, p, "numpy", tile=(16, 16), k_part=40).compute(scheduler="sync")
    assert same_bits(got, matmul(A, B, C, arch=p, backend="numpy"))
