"""Recorded GPU outputs in the layout of the MATLAB tensor-core toolbox.

    DEVICE/FORMAT/a_DEVICE_FORMAT.txt   K hex binary32 words per line
    DEVICE/FORMAT/b_DEVICE_FORMAT.txt
    DEVICE/FORMAT/c_DEVICE_fp32.txt     32 binary digits per line
    DEVICE/FORMAT/d_DEVICE_fp32.txt     the GPU's d (fp32 output)
    DEVICE/FORMAT/d_DEVICE_fp16.txt     fp16 output widened to binary32

Each file may also be gzip-compressed (``.txt.gz``), as in the copy this
project ships under ``data/hwdata``. The known problems of the recordings
(see data/hwdata/README.md) are a table here, applied by rule, not by row.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tcsmt.errors import UserError
from tcsmt.fileio import read_bytes
from tcsmt.model.formats import Format, get_format

FOLDER_FORMATS = {"fp16": "float16", "bf16": "bfloat16", "tf32": "tf32",
                  "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2",
                  "fp32": "float32", "fp64": "float64"}
F32 = get_format("float32")
RECORDED_LIMIT = 64 << 20
"""Bytes of one recorded file, and of its text once unzipped (the largest
shipped one holds 1.4 MB of text)."""


@dataclass
class Recording:
    """One folder: inputs as bit patterns of their formats, and the outputs."""
    device: str
    folder: str
    in_format: Format
    a: np.ndarray                  # [N, K] object-free uint64 bits in in_format
    b: np.ndarray
    c32: np.ndarray                # [N] binary32 bits of c as recorded
    d: dict[str, np.ndarray] = field(default_factory=dict)   # "fp32"/"fp16" -> bits as recorded (binary32)
    path: Path | None = None

    @property
    def rows(self) -> int:
        return int(self.a.shape[0])

    @property
    def k(self) -> int:
        return int(self.a.shape[1])


def _find(folder: Path, stem: str) -> Path | None:
    for suffix in (".txt", ".txt.gz"):
        p = folder / (stem + suffix)
        if p.exists():
            return p
    return None


def _read_lines(path: Path) -> list[str]:
    """The non-blank lines of a recorded file (UserError naming it when it
    cannot be read, is not ASCII, is a truncated or broken gzip file, or is
    larger than RECORDED_LIMIT, zipped or not)."""
    data = read_bytes(path, UserError, RECORDED_LIMIT)
    if path.suffix == ".gz":
        data = _gunzip(data, path)
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError as e:
        raise UserError(f"{path}: not ASCII text (byte {e.start})") from None
    return [ln.strip() for ln in text.splitlines() if ln.strip()]


def _gunzip(data: bytes, path: Path) -> bytes:
    """Every gzip member of ``data`` unzipped, at most RECORDED_LIMIT bytes
    of text (a small file that unzips to gigabytes is refused as it grows)."""
    out: list[bytes] = []
    total = 0
    while data.strip(b"\0"):
        z = zlib.decompressobj(wbits=31)
        try:
            chunk = z.decompress(data, RECORDED_LIMIT + 1 - total)
        except zlib.error as e:
            raise UserError(f"{path}: not a readable gzip file ({e})") from None
        total += len(chunk)
        if total > RECORDED_LIMIT or z.unconsumed_tail:
            raise UserError(f"{path}: unzips to more than the {RECORDED_LIMIT >> 20} MiB of text "
                            "tcsmt reads from a recorded file")
        if not z.eof:
            raise UserError(f"{path}: the gzip file is truncated")
        out.append(chunk)
        data = z.unused_data
    return b"".join(out)


def _hex_matrix(path: Path) -> np.ndarray:
    rows = [ln.split() for ln in _read_lines(path)]
    if not rows:
        raise UserError(f"{path}: empty file")
    k = len(rows[0])
    for i, r in enumerate(rows):
        if len(r) != k:
            raise UserError(f"{path}: line {i + 1} has {len(r)} words, expected {k}")
    try:
        return np.array([[int(w, 16) for w in r] for r in rows], dtype=np.uint64)
    except ValueError as e:
        raise UserError(f"{path}: not hex words: {e}") from None
    except OverflowError:
        raise UserError(f"{path}: a hex word wider than 64 bits") from None


def _bin_vector(path: Path) -> np.ndarray:
    lines = _read_lines(path)
    for i, ln in enumerate(lines):
        if len(ln) != 32 or set(ln) - {"0", "1"}:
            raise UserError(f"{path}: line {i + 1} is not 32 binary digits")
    return np.array([int(ln, 2) for ln in lines], dtype=np.uint64)


def binary32_to_format(words: np.ndarray, fmt: Format, where: str) -> np.ndarray:
    """binary32 patterns of values exactly representable in ``fmt`` -> fmt's bits."""
    if fmt.name == "float32":
        return words.astype(np.uint64)
    out = np.empty(words.shape, dtype=np.uint64)
    flat_in, flat_out = words.reshape(-1), out.reshape(-1)
    cache: dict[int, int] = {}
    for i, w in enumerate(flat_in.tolist()):
        r = cache.get(w)
        if r is None:
            r = convert_exact(int(w), F32, fmt, where)
            cache[w] = r
        flat_out[i] = r
    return out


def convert_exact(bits: int, src: Format, dst: Format, where: str) -> int:
    """Re-encode a value from src to dst, refusing values dst cannot hold."""
    cls = src.classify(bits)
    sign = bits >> (src.bits - 1)
    if cls == "nan":
        return dst.nan_bits()
    if cls == "inf":
        if not dst.has_inf:
            raise UserError(f"{where}: infinity is not a {dst.name} value")
        return dst.inf_bits(sign)
    v = src.finite_value(bits)
    r = dst.round_value(v, "rne", sign_of_zero=sign)
    if dst.value(r) != v:
        raise UserError(f"{where}: {src.hex(bits)} is not exactly a {dst.name} value")
    return r


def rounded_c(c32: np.ndarray, fmt: Format, where: str = "c") -> np.ndarray:
    """binary32 patterns of c rounded to nearest even into fmt, as the
    recordings did for a narrower c; NaN and infinities stay what they are
    (UserError where fmt has no infinity)."""
    if fmt.name == F32.name:
        return c32.copy()
    cache: dict[int, int] = {}
    out = np.empty(c32.shape, dtype=np.uint64)
    for i, w in enumerate(c32.tolist()):
        if w not in cache:
            v = F32.value(w)
            cache[w] = (convert_exact(w, F32, fmt, where) if isinstance(v, float)
                        else fmt.round_value(v, "rne", sign_of_zero=w >> 31))
        out[i] = cache[w]
    return out


def read_folder(folder: str | Path, device: str | None = None) -> Recording:
    folder = Path(folder)
    device = device or folder.parent.name
    fname = folder.name
    key = fname.lower()
    if key not in FOLDER_FORMATS:
        raise UserError(f"{folder}: unknown format folder {fname!r} "
                        f"(expected one of {', '.join(sorted(FOLDER_FORMATS))})")
    fmt = get_format(FOLDER_FORMATS[key])
    pa = _find(folder, f"a_{device}_{fname}")
    pb = _find(folder, f"b_{device}_{fname}")
    pc = _find(folder, f"c_{device}_fp32")
    if not (pa and pb and pc):
        missing = [n for n, p in (("a", pa), ("b", pb), ("c", pc)) if p is None]
        raise UserError(f"{folder}: missing {', '.join(missing)} file(s) "
                        f"(expected a_{device}_{fname}.txt and so on)")
    a32, b32, c32 = _hex_matrix(pa), _hex_matrix(pb), _bin_vector(pc)
    if a32.shape != b32.shape or a32.shape[0] != c32.shape[0]:
        raise UserError(f"{folder}: a, b and c have different numbers of rows")
    rec = Recording(device, fname, fmt,
                    binary32_to_format(a32, fmt, str(pa)),
                    binary32_to_format(b32, fmt, str(pb)), c32, path=folder)
    for out in ("fp32", "fp16"):
        pd = _find(folder, f"d_{device}_{out}")
        if pd is not None:
            d = _bin_vector(pd)
            if d.shape[0] != rec.rows:
                raise UserError(f"{pd}: {d.shape[0]} rows, expected {rec.rows}")
            rec.d[out] = d
    if not rec.d:
        raise UserError(f"{folder}: no d_{device}_fp32.txt or d_{device}_fp16.txt")
    return rec


def discover(root: str | Path) -> list[tuple[str, Path]]:
    """(device, folder) for every DEVICE/FORMAT folder under root (root may
    itself be a DEVICE folder)."""
    root = Path(root)
    if not root.is_dir():
        raise UserError(f"{root}: not a folder")
    found = []
    for dev_dir in sorted([root, *root.iterdir()] if root.is_dir() else []):
        if not dev_dir.is_dir():
            continue
        for fdir in sorted(dev_dir.iterdir()):
            if fdir.is_dir() and fdir.name.lower() in FOLDER_FORMATS and any(
                    fdir.glob(f"a_{dev_dir.name}_*")):
                found.append((dev_dir.name, fdir))
    if not found:
        raise UserError(f"{root}: no DEVICE/FORMAT folders with a_*.txt files")
    return found


# ---------------------------------------------------------------------------
# Known problems of the recordings (data/hwdata/README.md), by rule
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class KnownProblem:
    arch: str | None        # None: any architecture
    folder: str | None      # lower-case format folder, or None for any fp8 folder
    output: str
    rule: str               # what we do
    why: str
    hypothesis: str | None = None   # a model that claims the rows under a named reading


KNOWN_PROBLEMS = [
    KnownProblem("hopper", None, "fp32", "c_zero",
                 "Hopper fp8 rows were recorded with wgmma and an accumulator starting at zero: "
                 "c is read as +0"),
    KnownProblem(None, None, "fp16", "unreliable",
                 "fp16 outputs of the fp8 folders: no published model reproduces them; "
                 "reported, never judged"),
    KnownProblem("blackwell", "e4m3", "fp32", "open",
                 "B200 fp8 with fp32 output: recorded with an instruction "
                 "the tcgen05 model does not describe; "
                 "an open question, reported with the hypothesis used, not judged",
                 hypothesis="blackwell-e4m3-fp32-mma"),
    KnownProblem("blackwell", "e5m2", "fp32", "open",
                 "B200 fp8 with fp32 output (see e4m3): reported with the hypothesis used, not judged",
                 hypothesis="blackwell-e5m2-fp32-mma"),
]


def known_problems(arch: str, folder: str, output: str) -> list[KnownProblem]:
    fp8 = folder.lower() in ("e4m3", "e5m2")
    out = []
    for kp in KNOWN_PROBLEMS:
        if kp.arch not in (None, arch) or kp.output != output:
            continue
        if kp.folder is None and not fp8:
            continue
        if kp.folder is not None and kp.folder != folder.lower():
            continue
        out.append(kp)
    return out
