"""Observations: the bits a matrix unit returned for given inputs.

A probe written by ``tcsmt harness`` prints one JSON object of this schema;
recorded data (``tcsmt.observed.recorded``) and a model run (``simulated_observations``)
are turned into the same shape, so ``tcsmt identify`` reads all three alike.

Schema ``tcsmt-observations/1``::

    {
      "schema": "tcsmt-observations/1",
      "source": "device" | "simulated" | "hwdata",   (optional)
      "device": "NVIDIA H100 80GB HBM3",       cudaGetDeviceProperties name,
                                                or the model / recording
      "compute_capability": "9.0",             "major.minor" (an AMD GPU's
                                                gcnArchName); free text off a device
      "instruction": "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
      "formats": {"in": "float16", "c": "float32", "out": "float32"},
                                                or {"a": ..., "b": ..., "c", "out"}
                                                where A and B differ; "scale":
                                                the scale factors' format of a
                                                block-scaled instruction
      "scale_block": 32,                       (with "scale") terms per scale factor
      "sparsity": "2:4",                       (optional; "dense" when absent) the
                                                metadata's pattern of a sparse
                                                instruction (mma.sp)
      "k": 16,                                 terms of every observation
      "layout_check": "ok",                    (optional) a probe's check that
                                                its operands reached the right
                                                places (calibration vectors, and
                                                no stray element of D)
      "known_problems": [{"rule": ..., "why": ...}],   (optional, recorded data)
      "launches": [{"launch": 1, "instruction": ..., "k": 16, "rows": [0, 40], ...}],
                                               (optional, a device run) what each launch
                                                ran: its instruction and k (a launch
                                                without them ran the file's instruction)
      "observations": [
        {"index": 0,
         "k": 8,                               (optional) the row's k where it is not
                                                the file's: a row run by an instruction
                                                of another k (its launch names it)
         "a": ["0x3c00", ...],                 k hex patterns in A's format
         "b": ["0x3c00", ...],                 k hex patterns in B's format
         "c": "0x3f800000",                    in formats.c
         "scale_a": ["0x7f", ...],             (with "scale") k / scale_block
         "scale_b": ["0x7f", ...],               scale factors of a and of b
         "mask": [1, 1, 0, 0, ...],            (sparse) k bits: the terms the
                                                metadata selected (a lists every
                                                logical term, zeros where unselected)
         "d": "0x40000000",                    the returned D[0][0], in formats.out
         "matches": ["A"]},                    (optional) the hypotheses whose
                                                expected d the device returned
        ...
      ]
    }

Hex patterns are bit patterns in the format's storage width (tf32 as a
32-bit word whose low 13 bits are zero), never decimal values. Inputs
shorter than the instruction's k were padded with zero terms (and scale
factors of 1) before they ran, and are written padded: an observation is
what the hardware computed. Other keys (``generator``, ``vectors_sha256``,
``cuda_runtime``, ``hypotheses``...) are kept for the record and not
interpreted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tcsmt.datapath.sparse import PATTERNS
from tcsmt.errors import UserError
from tcsmt.fileio import read_json
from tcsmt.model.formats import Format, get_format, parse_bits

SCHEMA = "tcsmt-observations/1"


@dataclass(frozen=True)
class Observation:
    index: int
    a: tuple[int, ...]      # bit patterns in A's format (not storage words)
    b: tuple[int, ...]      # in B's format
    c: int
    d: int
    scale_a: tuple[int, ...] = ()    # scale factors of a block-scaled instruction
    scale_b: tuple[int, ...] = ()
    mask: tuple[int, ...] = ()       # the selected terms of a sparse instruction


@dataclass(frozen=True)
class FormatSet:
    """The formats of one matrix instruction's operands."""
    a: Format
    b: Format
    c: Format
    out: Format
    scale: Format | None = None

    def record(self) -> dict[str, str]:
        out = {"in": self.a.name} if self.a == self.b else {"a": self.a.name, "b": self.b.name}
        out.update({"c": self.c.name, "out": self.out.name})
        if self.scale is not None:
            out["scale"] = self.scale.name
        return out


@dataclass
class ObservationSet:
    device: str
    compute_capability: str
    instruction: str
    fin: Format             # A's format
    fc: Format
    fout: Format
    k: int
    rows: list[Observation]
    meta: dict = field(default_factory=dict)    # every other top-level key
    fb: Format | None = None                    # B's format where it differs from A's
    fscale: Format | None = None
    scale_block: int = 0
    sparsity: str = "dense"
    other: dict[int, list[Observation]] = field(default_factory=dict)   # k -> rows of another k

    def formats(self) -> dict[str, str]:
        return FormatSet(self.fin, self.fb or self.fin, self.fc, self.fout, self.fscale).record()

    def at(self, k: int) -> ObservationSet:
        """The rows of another k as a set of their own, with the instruction
        their launches name (a device run's "launches")."""
        from dataclasses import replace
        names = {x.get("instruction") for x in self.meta.get("launches") or []
                 if isinstance(x, dict) and x.get("k") == k}
        ins = names.pop() if len(names) == 1 else self.instruction
        return replace(self, instruction=str(ins), k=k, rows=self.other[k], other={})


def hex_bits(text, fmt: Format, where: str) -> int:
    if not isinstance(text, str):
        raise UserError(f"{where}: expected a hex string such as \"0x3c00\", got {text!r}")
    try:
        return parse_bits(text, fmt)
    except UserError as e:
        raise UserError(f"{where}: {e}") from None


def parse_format_set(obj, where: str) -> FormatSet:
    """{"in" (or "a" and "b"), "c", "out", "scale"?} -> FormatSet (aliases allowed)."""
    ab = ("in",) if isinstance(obj, dict) and "in" in obj else ("a", "b")
    keys = (*ab, "c", "out")
    if not isinstance(obj, dict) or not all(isinstance(obj.get(x), str) for x in keys):
        raise UserError(f"{where}: \"formats\" must be an object with string keys in (or a "
                        "and b), c and out")
    if "scale" in obj and not isinstance(obj["scale"], str):
        raise UserError(f"{where}: formats: \"scale\" must be a format name")
    try:
        a = get_format(obj[ab[0]])
        b = get_format(obj[ab[-1]])
        scale = get_format(obj["scale"]) if "scale" in obj else None
        return FormatSet(a, b, get_format(obj["c"]), get_format(obj["out"]), scale)
    except UserError as e:
        raise UserError(f"{where}: formats: {e}") from None


def parse_formats(obj, where: str) -> tuple[Format, Format, Format]:
    """{"in": ..., "c": ..., "out": ...} -> three Formats (aliases allowed)."""
    fs = parse_format_set(obj, where)
    if fs.a != fs.b or fs.scale is not None:
        raise UserError(f"{where}: formats: expected one input format (\"in\") and no scale")
    return fs.a, fs.c, fs.out


def parse_scale_block(data: dict, fs: FormatSet, k: int | None, where: str) -> int:
    """The "scale_block" key: terms per scale factor; 0 without a scale format."""
    block = data.get("scale_block")
    if fs.scale is None:
        if block is not None:
            raise UserError(f"{where}: \"scale_block\" without a scale format in \"formats\"")
        return 0
    if not isinstance(block, int) or isinstance(block, bool) or block < 1 or (k and k % block):
        raise UserError(f"{where}: \"scale_block\" must be a positive integer dividing k")
    return block


def parse_observations(data, where: str = "observations") -> ObservationSet:
    """Validate a decoded JSON object of the schema; one-line UserErrors."""
    if not isinstance(data, dict):
        raise UserError(f"{where}: expected a JSON object")
    if data.get("schema") != SCHEMA:
        raise UserError(f"{where}: schema is {data.get('schema')!r}, expected {SCHEMA!r}")
    for key in ("device", "compute_capability", "instruction"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise UserError(f"{where}: \"{key}\" must be a non-empty string")
    check = data.get("layout_check", "ok")
    if check != "ok":
        raise UserError(f"{where}: the probe's layout check failed ({check}): "
                        "its d values are not trustworthy")
    fs = parse_format_set(data.get("formats"), where)
    k = data.get("k")
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise UserError(f"{where}: \"k\" must be a positive integer")
    block = parse_scale_block(data, fs, k, where)
    sparsity = parse_sparsity(data, where)
    obs = data.get("observations")
    if not isinstance(obs, list) or not obs:
        raise UserError(f"{where}: \"observations\" must be a non-empty list")
    parsed = [_parse_row(o, n, fs, _row_k(o, n, k, block, where), block, where, sparsity)
              for n, o in enumerate(obs)]
    rows = [r for r in parsed if len(r.a) == k]
    other: dict[int, list[Observation]] = {}
    for r in parsed:
        if len(r.a) != k:
            other.setdefault(len(r.a), []).append(r)
    if not rows:
        raise UserError(f"{where}: no observation has the file's k = {k}")
    first: dict[int, int] = {}
    for n, r in enumerate(parsed):
        if r.index in first:
            raise UserError(f"{where}: observations[{n}]: index {r.index} is already the index of "
                            f"observations[{first[r.index]}]: every observation needs its own")
        first[r.index] = n
    meta = {key: v for key, v in data.items() if key not in (
        "device", "compute_capability", "instruction", "formats", "k", "observations", "sparsity")}
    return ObservationSet(data["device"], data["compute_capability"], data["instruction"],
                          fs.a, fs.c, fs.out, k, rows, meta, fs.b if fs.b != fs.a else None,
                          fs.scale, block, sparsity, other)


def _row_k(o, n: int, k: int, block: int, where: str) -> int:
    """A row's k: its own "k" (a row run by an instruction of another k),
    else the file's."""
    kk = o.get("k", k) if isinstance(o, dict) else k
    if not isinstance(kk, int) or isinstance(kk, bool) or kk < 1 or (block and kk % block):
        raise UserError(f"{where}: observations[{n}].k must be a positive integer"
                        + (f" dividing into blocks of {block}" if block else ""))
    return kk


def parse_sparsity(data: dict, where: str) -> str:
    """The "sparsity" key ("dense" when absent)."""
    sp = data.get("sparsity", "dense")
    if sp != "dense" and sp not in PATTERNS:
        raise UserError(f"{where}: \"sparsity\" must be one of dense, {', '.join(PATTERNS)}")
    return sp


def parse_mask(o: dict, sparsity: str, k: int, at: str) -> tuple[int, ...]:
    """A row's or vector's "mask": k bits, a legal selection (two of every four)."""
    m = o.get("mask")
    want, group = PATTERNS[sparsity]
    if not isinstance(m, list) or len(m) != k or any(x not in (0, 1) or isinstance(x, bool) for x in m):
        raise UserError(f"{at}.mask: expected {k} bits (0 or 1), one per term")
    if k % group or any(sum(m[g:g + group]) != want for g in range(0, k, group)):
        raise UserError(f"{at}.mask: a {sparsity} mask selects {want} of every {group} terms "
                        f"(k = {k} a multiple of {group})")
    return tuple(m)


def _hex_list(o: dict, name: str, fmt: Format, count: int, at: str,
              label: str = "") -> tuple[int, ...]:
    xs = o.get(name)
    if not isinstance(xs, list) or len(xs) != count:
        got = len(xs) if isinstance(xs, list) else type(xs).__name__
        raise UserError(f"{at}.{name}: expected a list of {label or count} hex patterns, got {got}")
    return tuple(hex_bits(x, fmt, f"{at}.{name}[{i}]") for i, x in enumerate(xs))


def _parse_row(o, n: int, fs: FormatSet, k: int, block: int, where: str,
               sparsity: str = "dense") -> Observation:
    at = f"{where}: observations[{n}]"
    if not isinstance(o, dict):
        raise UserError(f"{at}: expected an object with index, a, b, c, d")
    index = o.get("index", n)
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise UserError(f"{at}: \"index\" must be an integer of at least 0")
    a = _hex_list(o, "a", fs.a, k, at, f"k = {k}")
    b = _hex_list(o, "b", fs.b, k, at, f"k = {k}")
    scales: list[tuple[int, ...]] = [(), ()]
    if fs.scale is not None:
        scales = [_hex_list(o, name, fs.scale, k // block, at) for name in ("scale_a", "scale_b")]
    c = hex_bits(o.get("c"), fs.c, f"{at}.c")
    d = hex_bits(o.get("d"), fs.out, f"{at}.d")
    mask = parse_mask(o, sparsity, k, at) if sparsity != "dense" else ()
    return Observation(index, a, b, c, d, scales[0], scales[1], mask)


def read_observations(path: str | Path) -> ObservationSet:
    """Read and validate an observations file (see the module docstring)."""
    return parse_observations(read_json(path), str(path))


def observations_document(source: str, device: str, compute_capability: str, instruction: str,
                          formats: dict, k: int, rows: list[dict], scale_block: int = 0,
                          sparsity: str = "dense", **extra) -> dict:
    """The tcsmt-observations/1 document of ``rows`` (observation_dict's);
    ``sparsity`` is named when it is not dense; ``extra``: the keys kept for
    the record (generator, layout_check...), in their order, before the rows."""
    return {"schema": SCHEMA, "source": source, "device": device,
            "compute_capability": compute_capability, "instruction": instruction, "formats": formats,
            **({"scale_block": scale_block} if scale_block else {}),
            **({"sparsity": sparsity} if sparsity != "dense" else {}), "k": k, **extra,
            "observations": rows}


def observation_dict(index: int, fin: Format, fc: Format, fout: Format,
                     a, b, c: int, d: int, fb: Format | None = None,
                     scales: tuple | None = None, fscale: Format | None = None,
                     mask=None) -> dict:
    """One row of the schema from bit patterns (in the formats, not storage);
    ``scales`` = (scale_a, scale_b) for a block-scaled instruction, ``mask``
    the selected terms of a sparse one."""
    fb = fb or fin
    row = {"index": index, "a": [fin.hex(x) for x in a], "b": [fb.hex(x) for x in b],
           "c": fc.hex(c)}
    if scales is not None:
        if fscale is None:
            raise ValueError("scales need their format (fscale)")
        row["scale_a"] = [fscale.hex(x) for x in scales[0]]
        row["scale_b"] = [fscale.hex(x) for x in scales[1]]
    if mask is not None:
        row["mask"] = list(mask)
    row["d"] = fout.hex(d)
    return row


# ---------------------------------------------------------------------------
# Comparing observations with a model
# ---------------------------------------------------------------------------

@dataclass
class Comparison:
    model: str
    matched: int
    total: int
    mismatches: list[tuple[Observation, int]]     # (row, the model's d)

    @property
    def line(self) -> str:
        return f"{self.model}: {self.matched}/{self.total} rows match"


def _formats_line(fa: Format, fb: Format, fc: Format, fout: Format) -> str:
    return f"{fa.name} x {fb.name} + {fc.name} -> {fout.name}"


def check_scales(p, fscale: Format | None, block: int, what: str) -> None:
    """One-line error unless the model's scales are those of the observations."""
    want = (p.fscale.name if p.fscale else None, p.scale_block if p.fscale else 0)
    have = (fscale.name if fscale else None, block if fscale else 0)
    if want != have:
        def label(x):
            return f"{x[0]} per {x[1]} terms" if x[0] else "no scale factors"
        raise UserError(f"model {p.name} has {label(want)}; the {what} have {label(have)}")


def check_sparsity(p, sparsity: str, what: str) -> None:
    """One-line error unless the model takes the masks the rows have (a
    sparse model for sparse rows, a dense one for dense rows)."""
    if p.sparsity != sparsity:
        raise UserError(f"model {p.name} is {p.sparsity if p.sparsity != 'dense' else 'dense'}"
                        f"{' sparse' if p.sparsity != 'dense' else ''}; the {what} are "
                        f"{sparsity}{' sparse' if sparsity != 'dense' else ''}")


def compare(obs: ObservationSet, model) -> Comparison:
    """Run every observed input through ``model`` (a name or ModelParams)
    and count the rows whose d bits the model reproduces."""
    from tcsmt.sim.dot import dot_bits
    from tcsmt.sim.dot import model as get_model
    p = get_model(model)
    want = (p.fin, p.fb, p.fc, p.fout)
    have = (obs.fin, obs.fb or obs.fin, obs.fc, obs.fout)
    if [f.name for f in want] != [f.name for f in have]:
        raise UserError(f"model {p.name} computes {_formats_line(*want)}; the observations are "
                        f"{_formats_line(*have)}")
    check_scales(p, obs.fscale, obs.scale_block, "observations")
    check_sparsity(p, obs.sparsity, "observations")
    bad = []
    for row in obs.rows:
        scaled = obs.fscale is not None
        d = dot_bits(p, list(row.a), list(row.b), row.c, list(row.scale_a) if scaled else None,
                     list(row.scale_b) if scaled else None, mask=list(row.mask) or None)
        if d != row.d:
            bad.append((row, d))
    return Comparison(p.name, len(obs.rows) - len(bad), len(obs.rows), bad)
