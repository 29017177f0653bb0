"""The model's parameters: one record (``ModelParams``) per architecture and
format pair, every choice the block-FMA datapath makes.

Model files in ``models/`` are TOML whose keys are exactly its field names
(read by ``tcsmt.model.load``, checked by ``tcsmt.model.validate``); the
values each choice takes are in ``tcsmt.model.choices``; ``--set`` changes
are ``tcsmt.model.overrides``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, fields

from tcsmt.model.formats import Format, get_format
from tcsmt.model.names import short_format
from tcsmt.model.validate import validate


@dataclass(frozen=True)
class ModelParams:
    """Every choice the block-FMA datapath makes.

    Formats
      in_format, c_format, out_format: the formats of a (and of b), of c,
        and of d.
      b_format: the format of b when it differs from a's (AMD CDNA3 fp8 x bf8
        MFMA); None for in_format.
      acc_format: the format whose fraction width the accumulator extends
      (float32 for tensor cores, float64 for an fp64 FMA chain).

    Block scaling (MX, NVFP4)
      scale_format: the format of the scale factors of a and b (ue8m0,
        ue4m3), or None for a product without scales.
      scale_block: products along K that share one scale of a (per row of
        A) and one of b (per column of B). A scaled product is exact: the
        scales' significands multiply its significand and their exponents
        add to its exponent; a NaN scale makes the dot product NaN.
      group_size: products summed exactly before they enter the block as
        one term (1: every product is its own term). A group's value is a
        fixed-point sum whose exponent is that of the smallest possible
        product (emin of a plus emin of b) plus its scales' exponents; it
        takes part in the alignment whenever one of its products is
        non-zero, even if the sum is zero. The scales of a group are
        shared by its products (scale_block is a multiple of group_size).
      scale_nan: what a NaN scale (ue8m0 0xff, ue4m3 0x7f) does: "nan" (the
        dot product is NaN, as MMA-Sim reads it) or "value" (the encoding
        is read as the number its fields spell: 2^128 for ue8m0, 480 for
        ue4m3).
      scale_zero: what a term whose scale is zero (ue4m3 0x00) does: "dead"
        (it is zero and takes no part in the alignment, as MMA-Sim reads
        it) or "aligned" (its value is zero but it takes part in the
        alignment at its product's exponent plus its scales' exponents,
        as a group that cancels to zero does).

    Raw-exponent window (a second reading of B200's block-scaled e2m1
    arithmetic; tcsmt.datapath.window says it step by step)
      scale_window_bits: None (the block's window is set by its largest
        term, as everywhere else) or the bits the window keeps below the
        largest pair of scale exponents S: the quantum is then
        q = max(R - F, S - scale_window_bits, C - F), R the largest raw
        product exponent (inputs' plus scales' unbiased exponents), C the
        exponent of a non-zero c; every group and c truncated to 2^q, the
        integers added exactly.
      c_window_bits: with a non-zero c and C >= R, the quantum is
        2^(C - c_window_bits) instead (needed with scale_window_bits).
      c_group_size: the exact groups in that c-dominant case, when they
        differ from group_size (None: group_size).
      c_group_window: a group whose largest product is not above c is
        truncated to 2^max(q, C - c_window_bits) (false: to 2^q).
      group_floor: when the sum rounds to a subnormal, the groups whose
        scale pair is below S and whose truncated value is below
        2^group_floor are left out of it (None: no such floor).

    Inside one block
      block_size: products summed before one normalisation.
      align_bits: fraction bits kept below acc_format's last bit when terms
        are aligned, so terms keep F = acc_format.frac_bits + align_bits
        fraction bits below the alignment point.
      carry_bits: integer bits of the accumulator above the largest term's
        integer part, counted from the raw product (significand in [1, 4):
        2 integer bits), as VLPG counts them; None for an accumulator wide
        enough never to overflow. F21 counts above a 1-bit significand in
        [1, 2), so its "3 carry bits" is carry_bits = 2 here, while VLPG's
        "3 needed and sufficient for 5 terms" is carry_bits = 3 (tcsmt prove
        carry-bits gives 3 for Volta: 2 refuted by a witness, 3 proved).
      align_rounding: what happens to the bits shifted out: "truncate" (toward
        zero, no sticky bit) or an IEEE mode (rz, rne, ru, rd) applied to the
        sum with guard bits and a sticky bit; or "exact": none is lost, the
        block's terms are summed exactly and the sum is rounded once with
        final_rounding (AMD CDNA1, and the exact reference; align_bits and
        carry_bits do not apply); "floor": each term rounded toward minus
        infinity onto the last kept place (AMD RDNA4's adder, ROCm's
        rocjitsu after rocm-systems#12056); "ones": each term truncated
        toward zero, and every term whose sign differs from c's counts one
        unit of the last kept place more, zero terms included (an adder in
        c's sign that negates the other terms by flipping their bits with
        no increment: AMD RDNA3, rocm-systems#12056).
      c_lead_bits: c aligns as if its significand had this many more
        integer bits: when c is the largest term the window keeps F +
        c_lead_bits fraction bits below c's exponent (AMD RDNA3 and RDNA4:
        24 bits below the products' raw exponents, 26 below c's). 0: c
        aligns like a product.
      pair_sums: the products are first summed in adjacent pairs, each pair
        aligned to its own largest raw exponent with F fraction bits and
        align_rounding; the pair sums are then aligned with c (AMD RDNA4
        fp16 and bf16 WMMA). With align_rounding = "floor", a negative c of
        which nothing is kept counts as zero, not as minus one unit, when
        the last kept place lies above c_format's smallest normal.
      normalisation: "block" (once per block) or "every_add" (each addition
        rounded to the accumulator format, as a chain of IEEE additions).
      add_order: order of additions when normalisation is every_add.
      product_alignment: exponent a product is aligned by: "raw" (ea + eb,
        significand in [0, 4)) or "normalised" (its leading one). Not read
        where it cannot change a sum: alignment rounded to nearest, and
        rounded products whose block sums are exact either way
        (tcsmt.datapath.products.lead_is_moot).
      min_exponent: floor of the alignment exponent, or None.
      c_placement: "global" (c aligned with the products); "late" (the
        products are summed first, c is added to that unrounded sum, both
        rounded down, as AMD CDNA3); or "after" (the blocks sum the products
        from zero, chained as usual, and c is added to their rounded result
        at the end with one IEEE addition rounded with c_rounding).
      late_frac_bits: with late placement, the fraction bits the sum of the
        product sum and c is rounded down to before the final rounding.
      product_groups: with late placement, the products are summed in this
        many interleaved groups (product k in group k mod product_groups),
        each truncated to F fraction bits below its own largest exponent;
        the group sums are then added, each rounded down to F fraction bits
        below the largest group exponent (2 on AMD CDNA3 fp8: the even and
        the odd products). 1: one sum.
      late_sum_exponent: with late placement, where the product sum stands
        when c is aligned with it: "value" (at its alignment point, but a
        sum that cancels to zero takes no part) or "products" (at the
        largest exponent of its non-zero products even when it cancels to
        zero, as MMA-Sim's CDNA3 sums).
      late_c_window: with late placement, c counts as +0 when its exponent
        lies more than this many below the alignment point of the product
        sum and c (25 on AMD CDNA3 fp8); None: c always counts.
      c_rounding: rounding of the IEEE additions of c with "after"
        placement, and of block results with "separate" chaining.
      term_order: the order blocks take the products in: "sequential"
        (k = 1..K) or "pairs_mod4" (the terms with k mod 4 in {0, 1}
        first, then those in {2, 3}: Hopper's mma.sync fp8, run as two fp16
        instructions).

    Result
      final_rounding: rounding of the block result (rz, rne, ru, rd).
      final_frac_bits: fraction bits of the block result when narrower than
        out_format's (13 for the e8m13 results of fp8 on Ada and Hopper).
      chaining: how blocks of a longer dot product combine: "recursive" (each
        block's rounded result is the next block's c) or "separate" (every
        block is summed from zero and the rounded block results are added to
        c one after another, each addition rounded with c_rounding).
      subnormals: keep, flush (inputs and outputs), flush_inputs,
        flush_outputs, flush_every_step (every zero or subnormal input
        reads as +0, and every product and every rounded sum below
        acc_format's normal range becomes a zero of its sign: AMD CDNA2),
        or flush_c (a subnormal c reads as a zero of its sign, a and b keep
        theirs, and a result is rounded to the output's precision first
        and is +0 when it then lies below the smallest normal: AMD RDNA3
        fp16 WMMA, rocm-systems#12056), or flush_rounded (a, b and c read
        as zeros of their signs, results as with flush_c: AMD RDNA3 bf16
        WMMA).
      overflow: "inf" (any overflow gives infinity) or "ieee" (toward-zero
        modes give the largest finite number); for an integer out_format,
        "wrap" (the result modulo 2^32, two's complement) or "saturate"
        (PTX .satfinite: a result past the s32 range becomes its nearest
        end, -2^31 or 2^31 - 1).
      zero_sign: "positive" (an exact zero sum is +0; a sum that rounds to
        zero keeps its sign), "all_positive" (every zero result is +0, as
        MMA-Sim adds +0.0 to d), "keep_c" (every zero result is +0, but a
        block without a non-zero product returns c as it is, -0 included)
        or "ieee".
      product_overflow: "keep" (products are exact beyond acc_format's
        range) or "inf" (a product beyond it is an infinity).
      product_rounding: "exact" (products kept exactly), or each product
        rounded to nearest even into "in_format" or "out_format" first.
      nan_bits: the NaN d holds, as a hex pattern in out_format, or None for
        out_format's positive NaN with every fraction bit set.

    Integer formats (s8, u8, s4, u4 inputs; s32 c and d)
      With integer in_format (and b_format), c_format and out_format the
      datapath is tcsmt.datapath.integer: every product is exact, c (the
      s32 word as the instruction takes it, two's complement) and the
      block's products are summed exactly, and overflow says what happens
      past the s32 range (wrap or saturate); a longer dot product runs
      block after block, each block's s32 result the next block's c. The
      float choices (align_bits, carry_bits, rounding, subnormals, the
      exponent floor) do not apply: an integer model names align_rounding
      = "exact" and the neutral values (tcsmt.model.validate says which).
      saturation: with overflow = "saturate", when the clamp acts: "final"
        (once, on the exact sum of c and the block's products: sf-tensor's
        reading of B200 tcgen05 kind::i8, validated on hardware) or
        "every_add" (c first, then each product added in index order, every
        partial sum clamped: a reading of PTX's "the accumulated value is
        limited to the range" that the PTX text does not rule out).

    Structured sparsity (mma.sp, tcgen05.mma.sp; tcsmt.datapath.sparse)
      sparsity: "dense", or the pattern of a sparse instruction: "2:4" (two
        of every four positions along K selected: f16, bf16, fp8, integer
        inputs) or "1:2" (one of every two: tf32). A sparse model takes a
        mask beside a and b (one bit per position of the logical K, set
        where the metadata selects it); a mask with every bit set is the
        dense instruction.
      sparse_order: how the selected products enter the blocks: "logical"
        (a disabled position reads as +0 in place: blocks of block_size
        logical positions; sf-tensor/tcgen05's reading of B200) or
        "compressed" (the selected products packed in order, as a dense
        instruction of half the K: blocks of block_size selected products).
    """

    name: str
    arch: str
    in_format: str
    c_format: str
    out_format: str
    block_size: int
    align_bits: int
    carry_bits: int | None
    align_rounding: str
    normalisation: str
    product_alignment: str
    final_rounding: str
    chaining: str
    c_placement: str
    subnormals: str
    min_exponent: int | None
    acc_format: str = "float32"
    b_format: str | None = None
    product_groups: int = 1
    late_sum_exponent: str = "value"
    late_c_window: int | None = None
    add_order: str = "sequential"
    final_frac_bits: int | None = None
    late_frac_bits: int | None = None
    c_rounding: str = "rne"
    term_order: str = "sequential"
    overflow: str = "inf"
    zero_sign: str = "positive"
    product_overflow: str = "keep"
    product_rounding: str = "exact"
    nan_bits: str | None = None
    scale_format: str | None = None
    scale_block: int | None = None
    group_size: int = 1
    scale_nan: str = "nan"
    scale_zero: str = "dead"
    scale_window_bits: int | None = None
    c_window_bits: int | None = None
    c_group_size: int | None = None
    c_group_window: bool = False
    group_floor: int | None = None
    c_lead_bits: int = 0
    pair_sums: bool = False
    saturation: str = "final"
    sparsity: str = "dense"
    sparse_order: str = "logical"
    devices: tuple[str, ...] = ()
    instruction: str = ""
    description: str = ""
    default: bool = False
    source_file: str = field(default="", compare=False)

    # -- derived -------------------------------------------------------------

    @property
    def fin(self) -> Format:
        return get_format(self.in_format)

    @property
    def fb(self) -> Format:
        """The format of b (in_format unless b_format names another)."""
        return get_format(self.b_format or self.in_format)

    @property
    def fscale(self) -> Format | None:
        """The format of the scales (None without block scaling)."""
        return get_format(self.scale_format) if self.scale_format else None

    def scaling(self) -> tuple[Format, int]:
        """The scale format and scale_block of a block-scaled model (validate
        gives every scale_format its scale_block); ValueError on a model
        without scales."""
        if self.scale_format is None or self.scale_block is None:
            raise ValueError(f"{self.name} has no block scales")
        return get_format(self.scale_format), self.scale_block

    @property
    def fc(self) -> Format:
        return get_format(self.c_format)

    @property
    def fout(self) -> Format:
        return get_format(self.out_format)

    @property
    def facc(self) -> Format:
        return get_format(self.acc_format)

    # What the subnormal setting means, one flag per stage that reads it: a
    # stage reads the flag it needs, so the interpretations that share stage
    # results (tcsmt.interp.memo) share them between settings that agree on
    # it (keep and flush_outputs unpack and multiply alike).

    @property
    def flushes_c(self) -> bool:
        """Whether a subnormal c (and a block result read as the next c) reads as zero."""
        return self.subnormals in ("flush", "flush_inputs", "flush_every_step", "flush_c", "flush_rounded")

    @property
    def flushes_ab(self) -> bool:
        """Whether subnormal a and b read as zero."""
        return self.flushes_c and self.subnormals != "flush_c"

    @property
    def flushes_out(self) -> bool | str:
        """Whether subnormal results are flushed: True (rounded on the
        subnormal grid, then flushed), "rounded" (rounded to the format's full
        precision first, +0 when that lies below the smallest normal) or False."""
        if self.subnormals in ("flush_c", "flush_rounded"):
            return "rounded"
        return self.subnormals in ("flush", "flush_outputs", "flush_every_step")

    @property
    def flushes_steps(self) -> bool:
        """Whether every product and every rounded sum is flushed too."""
        return self.subnormals == "flush_every_step"

    @property
    def F(self) -> int:
        """Fraction bits kept below the alignment point."""
        return self.facc.frac_bits + self.align_bits

    @property
    def from_sources(self) -> bool:
        """Whether the model is written from published sources for a unit
        nobody has run through tcsmt (its description says "from sources,
        not measured")."""
        return "from sources, not measured" in self.description

    @property
    def formats_label(self) -> str:
        """IN:OUT, or A,B:OUT when a and b differ."""
        ins = short_format(self.in_format)
        if self.fb.name != self.fin.name:
            ins += "," + short_format(self.fb.name)
        return f"{ins}:{short_format(self.out_format)}"

    def scale_count(self, k: int) -> int:
        """Scales of a (and of b) a dot product of length k needs."""
        return -(-k // self.scaling()[1]) if self.scale_format else 0

    def replace(self, **changes) -> ModelParams:
        p = dataclasses.replace(self, **changes)
        validate(p, origin=f"{self.name} (overridden)")
        return p

    def as_dict(self) -> dict:
        """Every field but source_file (devices as a list); the values are
        plain numbers, strings and None, so a shallow copy is a full one."""
        d = {name: getattr(self, name) for name in FIELD_NAMES}
        d["devices"] = list(self.devices)
        return d

    def parameter_dict(self) -> dict:
        """Only the values that change the arithmetic (parameters of
        LATER_DEFAULTS left out where they hold that value)."""
        return arithmetic(self.as_dict())


NAMING = ("name", "arch", "devices", "instruction", "description", "default")
"""Fields that name or describe a model and leave its arithmetic alone."""


def arithmetic(fields: dict) -> dict:
    """A model's fields (as_dict) less those of NAMING and those of
    LATER_DEFAULTS that hold their default: ModelParams.parameter_dict."""
    return {k: v for k, v in fields.items()
            if k not in NAMING and not (k in LATER_DEFAULTS and LATER_DEFAULTS[k] == v)}


LATER_DEFAULTS = {"b_format": None, "scale_format": None, "scale_block": None, "group_size": 1,
                  "scale_nan": "nan", "scale_zero": "dead",
                  "scale_window_bits": None, "c_window_bits": None, "c_group_size": None,
                  "c_group_window": False, "group_floor": None,
                  "product_groups": 1, "late_sum_exponent": "value", "late_c_window": None,
                  "c_lead_bits": 0, "pair_sums": False,
                  "saturation": "final", "sparsity": "dense", "sparse_order": "logical"}
"""Parameters added after results and plans were first written, with the
value that leaves the datapath as it was. ``parameter_dict`` leaves them out
at that value, so the hashes that name a model's questions (the plans' space
digests, regen's cache keys) stay what they were for every model that does
not use them."""


FIELD_NAMES = [f.name for f in fields(ModelParams) if f.name != "source_file"]
REQUIRED = [f.name for f in fields(ModelParams)
            if f.default is dataclasses.MISSING and f.name != "source_file"]
