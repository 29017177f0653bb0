"""The matrix instructions a hardware probe can run, and how to pick one.

An ``Instruction`` says what one warp, warpgroup or wavefront computes
(D = A*B + C with its shape and formats), which program interface runs it
and where a probe puts the vector's terms:

* ``placement = "single"``: a in row 0 of A, b in column 0 of B, c in
  C[0][0], every other element zero; D[0][0] is read back and every other
  element of D must come out zero or NaN. Used where the register layout of
  every fragment is documented lane by lane (mma.sync, MFMA) and where the
  library loads fragments (wmma).
* ``placement = "broadcast"``: every row of A holds a, every column of B
  holds b, every element of C holds c, so every element of D is the same
  dot product; every element of D must come out equal. Used by wgmma and
  tcgen05, whose operands are read from shared memory and tensor memory
  through descriptors: only the order along K then matters, and the probe's
  calibration vectors (``tcsmt.hardware.calibration``) check it on the device.

The tables of instructions are in ``tcsmt.hardware.nvidia`` (mma.sync,
wmma, wgmma, tcgen05) and ``tcsmt.hardware.mfma`` (AMD); the fragment
layouts in ``tcsmt.hardware.layouts``.
"""

from __future__ import annotations

from dataclasses import dataclass

from tcsmt.errors import UserError
from tcsmt.hardware.layouts import Layout
from tcsmt.model.formats import get_format


@dataclass(frozen=True)
class Instruction:
    """One matrix instruction: D (m x n) = A (m x k) * B (k x n) + C.

    The fragment fields (layouts, elements per lane) are set where the
    probe places the terms in registers itself (mma.sync, MFMA, and A of
    wgmma); ``layout_sizes`` gives the matrix each layout covers (four
    products side by side for m8n8k4).
    """
    name: str
    api: str                      # mma, wmma, wgmma, tcgen05 (NVIDIA) or mfma (AMD)
    m: int
    n: int
    k: int
    in_format: str                # the format of A (and of B unless b_format is set)
    c_format: str
    out_format: str
    min_sm: int                   # NVIDIA compute capability x 10; 0 for AMD
    arch: str                     # what the program is built for: sm_80, sm_90a, gfx90a...
    a_layout: Layout | None = None
    b_layout: Layout | None = None
    c_layout: Layout | None = None
    a_elems: int = 0              # elements of A, B, C/D held by one lane
    b_elems: int = 0
    c_elems: int = 0
    quad_pairs: int = 1           # separate products one warp runs (4 for m8n8k4)
    b_format: str = ""            # B's format where it differs from A's
    kind: str = ""                # tcgen05 / sm_120 kind: f16, tf32, f8f6f4, mxf8f6f4, mxf4, mxf4nvf4
    scale_format: str = ""        # block-scaled kinds: the scale factors' format
    scale_block: int = 0          # block-scaled kinds: elements of K per scale factor
    placement: str = "single"     # "single" or "broadcast" (see the module docstring)
    threads: int = 32             # threads per vector: a warp, a warpgroup (128), a wavefront (64)
    archs: tuple[str, ...] = ()   # AMD: every gfx target that has the instruction

    @property
    def shape(self) -> str:
        return f"m{self.m}n{self.n}k{self.k}"

    @property
    def a_format(self) -> str:
        return self.in_format

    @property
    def b_fmt(self) -> str:
        return self.b_format or self.in_format

    @property
    def a_rows(self) -> int:
        return self.m * self.quad_pairs

    @property
    def b_cols(self) -> int:
        return self.n * self.quad_pairs

    @property
    def scale_blocks(self) -> int:
        """Scale factors per row of A (and per column of B) along K."""
        return self.k // self.scale_block if self.scale_block else 0

    def layout_sizes(self) -> dict[str, tuple[int, int]]:
        """Rows and columns each fragment layout covers: quad pair q of
        m8n8k4 owns rows 8q.. of A and C/D and columns 8q.. of B."""
        return {"a": (self.a_rows, self.k), "b": (self.k, self.b_cols), "c": (self.a_rows, self.n)}

    def formats(self) -> dict[str, str]:
        """The formats as in vectors and observation files."""
        out = ({"in": self.in_format} if not self.b_format else
               {"a": self.in_format, "b": self.b_format})
        out.update({"c": self.c_format, "out": self.out_format})
        if self.scale_format:
            out["scale"] = self.scale_format
        return out

    def key(self) -> tuple:
        """What the instruction computes: (a, b, c, out, scale, scale block)."""
        return (self.in_format, self.b_fmt, self.c_format, self.out_format,
                self.scale_format, self.scale_block)


def register_element(ins: Instruction, fmt_name: str) -> tuple[int, int]:
    """(bits one element takes in a fragment register, left shift of its
    encoding there). tf32 sits in 32 bits; kind::f8f6f4 and kind::mxf8f6f4
    hold fp6 in bits 5:0 and fp4 in bits 5:2 of an 8-bit container (PTX ISA,
    mma with .kind::f8f6f4)."""
    fmt = get_format(fmt_name)
    if ins.kind in ("f8f6f4", "mxf8f6f4") and fmt.bits < 8:
        return 8, 2 if fmt.bits == 4 else 0
    return fmt.storage_bits, 0


def element_bits(fmt_name: str) -> int:
    """Bits one element takes in a fragment register (tf32 sits in 32 bits)."""
    return get_format(fmt_name).storage_bits


# ---------------------------------------------------------------------------
# Looking instructions up
# ---------------------------------------------------------------------------

def _all() -> tuple[list[Instruction], dict[tuple, str]]:
    from tcsmt.hardware.mfma import MFMA
    from tcsmt.hardware.nvidia import DEFAULTS, NVIDIA
    return NVIDIA + MFMA, DEFAULTS


def _label(key: tuple) -> str:
    a, b, c, out, scale, block = key
    ab = f"in {a}" if a == b else f"a {a}, b {b}"
    sc = f", scale {scale} per {block}" if scale else ""
    return f"{ab}, c {c}, out {out}{sc}"


API_ALIASES = {"mma.sync": "mma", "mma": "mma", "wmma": "wmma", "wgmma": "wgmma",
               "wgmma.mma_async": "wgmma", "tcgen05": "tcgen05", "tcgen05.mma": "tcgen05",
               "mfma": "mfma", "hip": "mfma"}


def choose_instruction(fin: str, fc: str, fout: str, name: str | None = None, *,
                       fb: str | None = None, scale: str = "", scale_block: int = 0,
                       target: str | None = None) -> Instruction:
    """The instruction for these formats (canonical format names).

    ``name`` may be a full name (``mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32``),
    an API (``mma``/``mma.sync``/``wmma``/``wgmma``/``tcgen05``/``mfma``:
    that API's instruction for the formats, the largest k first), a shape
    (``m16n8k8``, ``wmma.m16n16k8``), or an architecture (``sm_90a``,
    ``sm_100a``, ``sm_120a``, ``gfx942``). ``target`` ("cuda" or "hip")
    limits the choice to that vendor's instructions.
    """
    instructions, defaults = _all()
    key = (fin, fb or fin, fc, fout, scale, scale_block)
    fits = [i for i in instructions if i.key() == key and _on_target(i, target)]
    if not fits:
        have = "; ".join(sorted({_label(i.key()) for i in instructions if _on_target(i, target)}))
        raise UserError(f"no supported instruction for {_label(key)} (supported: {have})")
    if name is None or not str(name).strip():
        if key in defaults and target != "hip":
            return next(i for i in instructions if i.name == defaults[key])
        return max(fits, key=_preference)
    want = str(name).strip().lower()
    by_name = {i.name.lower(): i for i in instructions}
    if want in by_name:
        ins = by_name[want]
        if ins not in fits:
            raise UserError(f"instruction {ins.name} computes {_label(ins.key())}, not {_label(key)}")
        return ins
    match = _match(fits, want)
    if not match:
        known = ", ".join(i.name for i in fits)
        raise UserError(f"unknown instruction {name!r} for {_label(key)} (known: {known})")
    return max(match, key=_preference)


def _on_target(ins: Instruction, target: str | None) -> bool:
    return target is None or (ins.api == "mfma") == (target == "hip")


def _preference(ins: Instruction) -> tuple:
    """mma.sync first (it runs on most GPUs); of MFMA the 32x32 forms; then the largest k."""
    return (ins.api == "mma", ins.m if ins.api == "mfma" else 0, ins.k, -ins.min_sm)


def _match(fits: list[Instruction], want: str) -> list[Instruction]:
    if want in API_ALIASES:
        return [i for i in fits if i.api == API_ALIASES[want]]
    if want.startswith(("sm_", "gfx")):
        return [i for i in fits if i.arch == want or want in i.archs]
    api, _, shape = want.rpartition(".")
    api = API_ALIASES.get(api, api)
    return [i for i in fits if i.shape == shape and api in ("", i.api)]


def instruction_by_name(name: str) -> Instruction:
    instructions, _ = _all()
    for ins in instructions:
        if ins.name.lower() == str(name).strip().lower():
            return ins
    raise UserError(f"unknown instruction {name!r} (see tcsmt harness --list-instructions)")


def all_instructions() -> list[Instruction]:
    return _all()[0]


def default_names() -> set[str]:
    return set(_all()[1].values())
