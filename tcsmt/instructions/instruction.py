"""One matrix instruction: what a warp, warpgroup or wavefront computes.

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
  calibration vectors (``tcsmt.probes.calibration``) check it on the device.

The tables of instructions are in ``tcsmt.instructions.nvidia`` (mma.sync,
wmma, wgmma, tcgen05) and ``tcsmt.instructions.mfma`` (AMD); the fragment
layouts in ``tcsmt.instructions.layouts``.
"""

from __future__ import annotations

from dataclasses import dataclass

from tcsmt.instructions.layouts import Layout
from tcsmt.model.formats import get_format

AMD_APIS = ("mfma", "amd_wmma")
"""The program interfaces a HIP probe runs: CDNA's MFMA, RDNA's WMMA."""


@dataclass(frozen=True)
class Instruction:
    """One matrix instruction: D (m x n) = A (m x k) * B (k x n) + C.

    The fragment fields (layouts, elements per lane) are set where the
    probe places the terms in registers itself (mma.sync, MFMA, and A of
    wgmma); ``layout_sizes`` gives the matrix each layout covers (four
    products side by side for m8n8k4).
    """
    name: str
    api: str                      # mma, wmma, wgmma, tcgen05 (NVIDIA); mfma, amd_wmma (AMD)
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
    satfinite: bool = False       # integer: .satfinite (the s32 result saturates)
    sparsity: str = ""            # mma.sp: the metadata's pattern ("2:4"); A is stored compressed

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
        return {"a": (self.a_rows, self.stored_k), "b": (self.k, self.b_cols),
                "c": (self.a_rows, self.n)}

    def formats(self) -> dict[str, str]:
        """The formats as in vectors and observation files."""
        out = ({"in": self.in_format} if not self.b_format else
               {"a": self.in_format, "b": self.b_format})
        out.update({"c": self.c_format, "out": self.out_format})
        if self.scale_format:
            out["scale"] = self.scale_format
        return out

    @property
    def stored_k(self) -> int:
        """Elements of a row of A the instruction holds (half of k for 2:4)."""
        return self.k // 2 if self.sparsity else self.k

    def key(self) -> tuple:
        """What the instruction computes: (a, b, c, out, scale, scale block,
        sparsity)."""
        return (self.in_format, self.b_fmt, self.c_format, self.out_format,
                self.scale_format, self.scale_block, self.sparsity)


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
