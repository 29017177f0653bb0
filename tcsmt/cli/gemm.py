"""``tcsmt gemm``: D = C + A @ B from .npy files, as a modelled GPU computes it.

Bad input ends in a UserError, which the CLI prints as one line with exit
code 2.
"""

from __future__ import annotations

import ast
import math
import os
from pathlib import Path

import click
import ml_dtypes
import numpy as np

from tcsmt.cli import options
from tcsmt.errors import UserError
from tcsmt.fileio import refuse_overwriting, write_atomic

EPILOG = (
    "Arrays are .npy files. NumPy saves ml_dtypes arrays without their type name: "
    "bfloat16 as '<V2', float8_e5m2 as '<f1' and every one-byte type (float8_e4m3fn, "
    "float6_e2m3fn, float6_e3m2fn, float4_e2m1fn, float8_e8m0fnu) as '<V1'; gemm reads "
    "'<V1' (and uint8 bit patterns) as the model's format for that operand, so name the "
    "model (or --formats) for fp6 and fp4. A float32 A and B feed a tf32 model when one is "
    "asked for (--formats tf32:fp32, or a tf32 model's name), which reads the top 19 bits of "
    "each value (the low 13 are dropped, as the hardware does); for any other model, "
    "--round-inputs rounds them into its formats. "
    "Block-scaled models (tcsmt models --scaled) take --scale-a and --scale-b.")

# How np.save writes the ml_dtypes types (their dtype.str without the byte
# order), read back as those types.
RAW_DTYPES = {"V2": ml_dtypes.bfloat16, "V1": ml_dtypes.float8_e4m3fn, "f1": ml_dtypes.float8_e5m2}


def load_npy(path: str, name: str) -> np.ndarray:
    """An array from a .npy file; UserError when it cannot be read, its
    header is not one of numbers, or the file does not hold the bytes its
    header promises (checked before anything is allocated)."""
    try:
        with open(path, "rb") as f:
            shape, fortran, dtype = _npy_header(f)
            have = os.fstat(f.fileno()).st_size - f.tell()
            count = math.prod(shape)
            if count * dtype.itemsize != have:
                raise UserError(f"{name}: {path} holds {have} bytes of data, its header says "
                                f"{'x'.join(map(str, shape)) or 'a scalar'} of {dtype} "
                                f"({count * dtype.itemsize} bytes)")
            data = np.fromfile(f, dtype=dtype, count=count)
    except OSError as e:
        raise UserError(f"{name}: cannot read {path}: {e.strerror or e}") from None
    except (ValueError, SyntaxError, KeyError, TypeError, RecursionError, MemoryError) as e:
        raise UserError(f"{name}: {path} is not a readable .npy file ({type(e).__name__}: "
                        f"{str(e)[:200]})") from None
    return data.reshape(shape, order="F" if fortran else "C")


def _npy_header(f) -> tuple[tuple[int, ...], bool, np.dtype]:
    """(shape, fortran_order, dtype) of a .npy file, with f at its data; the
    three ml_dtypes types NumPy saves without their names (RAW_DTYPES) are
    read as those types. ValueError for anything but an array of numbers."""
    version = np.lib.format.read_magic(f)
    hlen = int.from_bytes(f.read(2 if version == (1, 0) else 4), "little")
    if hlen > 1 << 16:
        raise ValueError(f"a header of {hlen} bytes")
    header = ast.literal_eval(f.read(hlen).decode("utf-8" if version >= (3, 0) else "latin1"))
    if not isinstance(header, dict) or set(header) != {"descr", "fortran_order", "shape"}:
        raise ValueError("the header is not a .npy header")
    shape, descr = header["shape"], header["descr"]
    if not isinstance(shape, tuple) or not all(type(n) is int and n >= 0 for n in shape):
        raise ValueError(f"shape {shape!r}")
    raw = RAW_DTYPES.get(descr[1:]) if isinstance(descr, str) else None
    dtype = np.dtype(raw) if raw is not None else np.dtype(descr)
    if dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None:
        raise ValueError(f"dtype {dtype} is not a number type")
    return shape, bool(header["fortran_order"]), dtype


def one_byte_as(x: np.ndarray, fmt) -> np.ndarray:
    """np.save writes every one-byte ml_dtypes type (float8_e4m3fn, fp6,
    fp4, float8_e8m0fnu) as '<V1', which load_npy reads as float8_e4m3fn:
    such an array is read as the model's format for it (fmt None: as is).
    A uint8 array of bit patterns is read the same way."""
    from tcsmt.sim.npio import dtype_of

    if fmt is None or x.dtype not in (np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(np.uint8)):
        return x
    try:
        want = dtype_of(fmt)
    except UserError:
        return x
    return x.view(want) if want.itemsize == 1 else x


def save_npy_atomic(path: str, array: np.ndarray) -> None:
    """np.save to a temporary file beside ``path``, then os.replace over it:
    a reader sees the old file or the whole new one."""
    target = Path(path)
    if target.suffix != ".npy":
        raise UserError(f"-o {path}: the output must be a .npy file")
    folder = target.parent
    if not folder.is_dir():
        raise UserError(f"-o {path}: folder {folder} does not exist")
    write_atomic(target, lambda f: np.save(f, array, allow_pickle=False), binary=True)


@click.command("gemm", epilog=EPILOG)
@click.argument("a_path", metavar="A.npy")
@click.argument("b_path", metavar="B.npy")
@click.argument("c_path", metavar="[C.npy]", required=False)
@click.option("-o", "--output", "out_path", required=True, metavar="D.npy",
              help="Where to write D (written whole or not at all).")
@click.option("--arch", required=True, metavar="ARCH",
              help="Architecture (volta, ampere, hopper...), model name or model file.")
@click.option("--formats", metavar="IN:OUT",
              help="Choose the architecture's model by formats, e.g. e4m3:fp32 "
                   "(default: by the dtypes of A and C).")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override a model parameter (repeatable), e.g. --set align_bits=0.")
@click.option("--round-inputs", type=click.Choice(["rne", "rz", "ru", "rd"]), default=None,
              help="Round float32/float64 A, B and C into the model's formats with this mode "
                   "(default: refuse them unless the model reads them).")
@click.option("--backend", type=click.Choice(["numpy", "cpu", "cuda"]), default=None,
              help="numpy (no compilation), cpu (the compiled kernel, every core) or cuda; "
                   "default: the fastest available (cpu once its kernel is compiled).")
@click.option("--scale-a", "sa_path", default=None, metavar="SA.npy",
              help="Block-scaled models: the scales of A, M x ceil(K / scale_block), one per row "
                   "of A and block along K (ue8m0: float8_e8m0fnu; ue4m3: float8_e4m3fn).")
@click.option("--scale-b", "sb_path", default=None, metavar="SB.npy",
              help="The scales of B, ceil(K / scale_block) x N, one per column of B and block.")
@options.scheduler
def gemm(a_path, b_path, c_path, out_path, arch, formats, overrides, round_inputs, backend,
         sa_path, sb_path):
    """D = C + A @ B (A: M x K, B: K x N, C: M x N, zeros when left out)
    bit for bit as the modelled matrix unit computes it, blocks chained
    along K as the architecture does. A bar on stderr shows the tiles done
    and the time left. With a scheduler, tiles of D (512 x 512, K in parts
    of 512 products cut at block boundaries) are tasks on the cluster."""
    from tcsmt import api, runner
    from tcsmt.cli.progress import progress_bar
    from tcsmt.sim.npio import dtype_of

    refuse_overwriting(out_path, {"A": a_path, "B": b_path, "C": c_path, "--scale-a": sa_path,
                                  "--scale-b": sb_path}, "-o")
    A, B = load_npy(a_path, "A"), load_npy(b_path, "B")
    C = load_npy(c_path, "C") if c_path else None
    SA, SB = (None if p is None else load_npy(p, n) for p, n in ((sa_path, "--scale-a"),
                                                                   (sb_path, "--scale-b")))
    p = api.matmul_model(arch, formats, list(overrides), A, B, C, round_inputs)
    A, B = one_byte_as(A, p.fin), one_byte_as(B, p.fb)
    if p.scale_format is not None:
        SA, SB = (None if x is None else one_byte_as(x, p.fscale) for x in (SA, SB))
    address = runner.scheduler_address()
    if address:
        from tcsmt.sim.chunked import matmul_on_cluster
        if round_inputs:
            raise UserError("--round-inputs is not taken with --scheduler: round A and B first")
        if C is None:
            C = np.zeros((A.shape[0], B.shape[1]), dtype=dtype_of(p.fc))
        D = matmul_on_cluster(address, A, B, C, p, backend, scale_a=SA, scale_b=SB)
    else:
        with progress_bar("gemm") as progress:
            D = api.matmul(A, B, C, arch=p, round_inputs=round_inputs, backend=backend,
                           progress=progress, scale_a=SA, scale_b=SB)
    save_npy_atomic(out_path, np.asarray(D))
    click.echo(f"{p.name}: D is {D.shape[0]}x{D.shape[1]} {D.dtype}, written to {out_path}")
