""".npy files of operands and results: reading them safely (the header
checked against the bytes before anything is allocated), the one-byte
ml_dtypes types NumPy saves without their names, and writing D whole or
not at all."""

from __future__ import annotations

import ast
import math
import os
from pathlib import Path

import ml_dtypes
import numpy as np

from tcsmt.errors import BadFile, UserError
from tcsmt.fileio import open_regular, write_atomic
from tcsmt.sim.npio import dtype_of

# How np.save writes the ml_dtypes types (their dtype.str without the byte
# order), read back as those types.
RAW_DTYPES = {"V2": ml_dtypes.bfloat16, "V1": ml_dtypes.float8_e4m3fn, "f1": ml_dtypes.float8_e5m2}


def load_npy(path: str | Path, name: str) -> np.ndarray:
    """An array from a regular .npy file, mapped read-only rather than read
    (so that work too large for memory is refused before its operands are
    read); UserError when it cannot be read, its header is not one of
    numbers, or the file does not hold the bytes its header promises
    (checked before anything is mapped)."""
    try:
        with open_regular(path, name) as f:
            shape, fortran, dtype = _npy_header(f)
            offset = f.tell()
            have = os.fstat(f.fileno()).st_size - offset
            count = math.prod(shape)
            if count * dtype.itemsize != have:
                raise BadFile(f"{name}: {path} holds {have} bytes of data, its header says "
                              f"{'x'.join(map(str, shape)) or 'a scalar'} of {dtype} "
                              f"({count * dtype.itemsize} bytes)")
            if count == 0:
                return np.zeros(shape, dtype=dtype)
            return np.memmap(f, dtype=dtype, mode="r", offset=offset, shape=shape,
                             order="F" if fortran else "C")
    except OSError as e:
        raise UserError(f"{name}: cannot read {path}: {e.strerror or e}") from None
    except (ValueError, SyntaxError, KeyError, TypeError, RecursionError, MemoryError) as e:
        raise BadFile(f"{name}: {path} is not a readable .npy file ({type(e).__name__}: "
                      f"{str(e)[:200]})") from None


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
    if fmt is None or x.dtype not in (np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(np.uint8)):
        return x
    try:
        want = dtype_of(fmt)
    except UserError:
        return x
    return x.view(want) if want.itemsize == 1 else x


def save_npy_atomic(path: str | Path, array: np.ndarray) -> None:
    """np.save to a temporary file beside ``path``, then os.replace over it:
    a reader sees the old file or the whole new one."""
    target = Path(path)
    if target.suffix != ".npy":
        raise UserError(f"-o {path}: the output must be a .npy file")
    folder = target.parent
    if not folder.is_dir():
        raise UserError(f"-o {path}: folder {folder} does not exist")
    write_atomic(target, lambda f: np.save(f, array, allow_pickle=False), binary=True)
