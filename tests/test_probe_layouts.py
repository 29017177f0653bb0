"""Probe layouts: every fragment layout against the vendors' documents.

The probes cannot be run here (no GPU), so what places the terms is tested
on its own: each lane layout covers its matrix exactly once, single entries
typed from the PTX ISA and the AMD CDNA ISA / matrix instruction calculator
match, the tables written into the programs rebuild a and b, the tcgen05
instruction descriptors carry the documented fields, and the calibration
vectors have the exact results the probes check.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction

import pytest

from tcsmt.instructions.layouts import check_layout
from tcsmt.instructions.table import all_instructions, instruction_by_name
from tcsmt.model.formats import get_format
from tcsmt.observed.vectors import random_vectors, read_vectors
from tcsmt.probes.calibration import calibration_vectors
from tcsmt.probes.cuda_tcgen05 import instruction_descriptor
from tcsmt.probes.harness import program

ALL = all_instructions()


def _known(ins) -> bool:
    """Whether every format of the instruction is in the format table."""
    try:
        for name in (ins.in_format, ins.b_fmt, ins.c_format, ins.out_format):
            get_format(name)
        if ins.scale_format:
            get_format(ins.scale_format)
    except Exception:
        return False
    return True


LAID_OUT = [i for i in ALL if i.a_layout is not None]
REGISTERS = [i for i in ALL if i.api in ("mma", "mfma")]


def _ids(instrs):
    return [i.name for i in instrs]


@pytest.mark.parametrize("ins", REGISTERS, ids=_ids(REGISTERS))
def test_register_layouts_cover_each_matrix_once(ins):
    sizes = ins.layout_sizes()
    lanes = ins.threads
    check_layout(ins.a_layout, ins.a_elems, *sizes["a"], lanes=lanes)
    check_layout(ins.b_layout, ins.b_elems, *sizes["b"], lanes=lanes)
    check_layout(ins.c_layout, ins.c_elems, *sizes["c"], lanes=lanes)


@pytest.mark.parametrize("ins", [i for i in ALL if i.api == "wgmma"],
                         ids=_ids([i for i in ALL if i.api == "wgmma"]))
def test_wgmma_a_layout_covers_m64(ins):
    check_layout(ins.a_layout, ins.a_elems, 64, ins.k, lanes=128)


def test_layout_check_refuses_a_wrong_layout():
    with pytest.raises(ValueError, match="both hold"):
        check_layout(lambda lane, i: (lane >> 2, 2 * (lane & 3)), 2, 8, 8)
    with pytest.raises(ValueError, match="outside"):
        check_layout(lambda lane, i: (lane, i), 1, 16, 1)


# Single entries typed from the PTX ISA tables (groupID = lane >> 2, t = lane % 4).
PTX = [
    ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "a", 5, 6, (9, 10)),   # g=1 t=1 a6: g+8, 2t+8
    ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "b", 7, 3, (15, 1)),   # g=1 t=3 b3: 2t+1+8
    ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "c", 30, 3, (15, 5)),  # g=7 t=2 c3
    ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", "a", 6, 1, (9, 2)),   # a1: g+8, t
    ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", "a", 6, 2, (1, 6)),   # a2: g, t+4
    ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", "b", 6, 1, (6, 1)),   # b1: t+4
    ("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32", "b", 3, 1, (7, 0)),     # 2t+i
    ("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", "a", 1, 13, (8, 21)),  # a13: g+8, 4t+1+16
    ("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", "b", 2, 6, (26, 0)),   # b6: 4t+2+16
    ("mma.sync.aligned.kind::f8f6f4.m16n8k32.row.col.f32.e2m1.e3m2.f32", "a", 1, 13, (8, 21)),
    # m16n8k64 (.e2m1): row g for i < 8 or 16 <= i < 24, col 8t + (i & 7) (+32 for i >= 16)
    ("mma.sync.aligned.kind::mxf4.block_scale.scale_vec::2X.m16n8k64.row.col.f32.e2m1.e2m1.f32.ue8m0",
     "a", 6, 19, (1, 51)),                                                      # g=1 t=2 a19
    ("mma.sync.aligned.kind::mxf4.block_scale.scale_vec::2X.m16n8k64.row.col.f32.e2m1.e2m1.f32.ue8m0",
     "a", 6, 9, (9, 17)),                                                       # a9: g+8
    ("mma.sync.aligned.kind::mxf4.block_scale.scale_vec::2X.m16n8k64.row.col.f32.e2m1.e2m1.f32.ue8m0",
     "b", 13, 10, (42, 3)),                                                     # g=3 t=1 b10: 8t+2+32
    ("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32", "a", 17, 2, (5, 2)),      # high group: +4
    ("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32", "c", 3, 6, (3, 6)),       # X=1+2, (4)+(2)+0
    ("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32", "c", 4, 0, (8, 0)),       # quad pair 1
    # wgmma m64nNk16 A: warp w holds rows 16w.. with the m16n8k16 layout
    ("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16", "a", 37, 6, (25, 10)),  # warp 1, lane 5
    ("wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e5m2", "a", 97, 13, (56, 21)),  # warp 3, lane 1
]

# Single entries from AMD's matrix instruction calculator (CDNA ISA, "Matrix Arithmetic
# Instructions"): 32x32 D[i][j] in lane j + 32 * ((i / 4) % 2), register (i % 4) + 4 * (i / 8);
# 16x16 D[i][j] in lane j + 16 * (i / 4), register i % 4; A[i][k] in lane i + M * (k / E),
# element k % E with E terms per lane.
AMD = [
    ("v_mfma_f32_32x32x8f16", "c", 40, 5, (13, 8)),
    ("v_mfma_f32_32x32x8f16", "c", 0, 15, (27, 0)),
    ("v_mfma_f32_32x32x8f16", "a", 33, 2, (1, 6)),
    ("v_mfma_f32_32x32x8f16", "b", 63, 3, (7, 31)),
    ("v_mfma_f32_16x16x16f16", "c", 19, 2, (6, 3)),
    ("v_mfma_f32_16x16x16f16", "a", 37, 2, (5, 10)),
    ("v_mfma_f32_32x32x4bf16", "a", 45, 1, (13, 3)),
    ("v_mfma_f32_32x32x2f32", "b", 40, 0, (1, 8)),
    ("v_mfma_f64_16x16x4f64", "a", 50, 0, (2, 3)),
    ("v_mfma_f64_16x16x4f64", "c", 50, 3, (15, 2)),
    ("v_mfma_f32_32x32x16_fp8_fp8", "a", 35, 5, (3, 13)),
    ("v_mfma_f32_16x16x32_bf8_fp8", "b", 58, 7, (31, 10)),
]


@pytest.mark.parametrize("name,which,lane,i,want", PTX + AMD)
def test_layouts_match_documented_entries(name, which, lane, i, want):
    ins = instruction_by_name(name)
    assert getattr(ins, f"{which}_layout")(lane, i) == want


@pytest.mark.parametrize("ins", REGISTERS, ids=_ids(REGISTERS))
def test_d00_is_lane_0_element_0(ins):
    holders = [(lane, i) for lane in range(ins.threads) for i in range(ins.c_elems)
               if ins.c_layout(lane, i) == (0, 0)]
    assert holders == [(0, 0)]


# ---------------------------------------------------------------------------
# The tables in the generated programs
# ---------------------------------------------------------------------------

def _table(src: str, name: str) -> list[list[int]]:
    body = re.search(name + r"\[\w+\]\[\w+\] = \{\n(.*?)\n\};", src, re.S).group(1)
    return [[int(x) for x in re.findall(r"-?\d+", line)] for line in body.splitlines()]


def _define(src: str, name: str) -> int:
    return int(re.search(rf"#define {name} (\w+)", src).group(1), 0)


def _vectors(tmp_path, ins, n=1, k=None):
    data = random_vectors(ins.formats(), k or ins.k, n, 5, scale_block=ins.scale_block,
                          sparsity=ins.sparsity or "dense")
    data["instruction"] = ins.name
    path = tmp_path / "v.json"
    path.write_text(json.dumps(data))
    return read_vectors(path)


SINGLE = [i for i in REGISTERS if _known(i)]


@pytest.mark.parametrize("ins", SINGLE, ids=_ids(SINGLE))
def test_fragment_tables_rebuild_a_and_b(tmp_path, ins):
    """Pack each lane's operand words as the kernel does, from the tables in
    the source, then read every element back through the documented layout:
    row 0 of A must be a, column 0 of B must be b, everything else zero.
    (A sparse instruction's row 0 of A is compressed: the terms its mask
    selects, in order; the kernel reads them through SEL, checked here too.)"""
    vs = _vectors(tmp_path, ins)
    src = program(vs, ins)
    (a, b, _), = vs.padded(ins.k)
    if ins.sparsity:
        mask, = vs.padded_masks(ins.k)
        sel = [int(x, 0) for x in re.findall(r"0x[0-9a-f]+", src.split("SEL[NTOT * KS] = {")[1]
                                              .split("};")[0])][:ins.stored_k]
        assert sel == [i for i, x in enumerate(mask) if x]
        a = [a[i] for i in sel]
    lanes = ins.threads
    for which, fmt_name, terms, elems, is_a in (("A", ins.in_format, a, ins.a_elems, True),
                                                ("B", ins.b_fmt, b, ins.b_elems, False)):
        fmt = get_format(fmt_name)
        words = [fmt.to_storage(x) for x in terms]
        bits = _define(src, f"{which}_BITS")
        shift = _define(src, f"{which}_SHIFT") if f"#define {which}_SHIFT" in src else 0
        table = _table(src, f"{which}_TERM")
        assert len(table) == lanes and all(len(r) == elems for r in table)
        layout = ins.a_layout if is_a else ins.b_layout
        for lane in range(lanes):
            packed = 0
            for i in range(elems):
                t = table[lane][i]
                packed |= ((words[t] << shift) if t >= 0 else 0) << (i * bits)
            for i in range(elems):
                r, col = layout(lane, i)
                got = (packed >> (i * bits + shift)) & ((1 << fmt.storage_bits) - 1)
                term = col if is_a and r == 0 else r if not is_a and col == 0 else None
                assert got == (words[term] if term is not None else 0), (which, lane, i)


def test_f8f6f4_containers_hold_fp4_in_bits_5_2():
    ins = instruction_by_name("mma.sync.aligned.kind::f8f6f4.m16n8k32.row.col.f32.e2m1.e3m2.f32")
    src = program(_vectors_for_src(ins), ins)
    assert (_define(src, "A_BITS"), _define(src, "A_SHIFT")) == (8, 2)      # e2m1 in bits 5:2
    assert (_define(src, "B_BITS"), _define(src, "B_SHIFT")) == (8, 0)      # e3m2 in bits 5:0


def _vectors_for_src(ins):
    from tcsmt.observed.observations import parse_format_set
    from tcsmt.observed.vectors import VectorSet
    fs = parse_format_set(ins.formats(), "t")
    return VectorSet(fs, [([0] * ins.k, [0] * ins.k, 0)], ins.name, "t", "", ins.scale_block,
                     [([], [])])


# ---------------------------------------------------------------------------
# tcgen05 instruction descriptors (PTX ISA "Instruction descriptor")
# ---------------------------------------------------------------------------

M128_N16 = (2 << 17) | (8 << 24)       # N >> 3 at bit 17, M >> 4 at bit 24


@pytest.mark.parametrize("name,fields", [
    ("tcgen05.mma.cta_group::1.kind::f16.f32.bf16.bf16", (1 << 4) | (1 << 7) | (1 << 10)),
    ("tcgen05.mma.cta_group::1.kind::f16.f16.f16.f16", 0),
    ("tcgen05.mma.cta_group::1.kind::tf32.f32.tf32.tf32", (1 << 4) | (2 << 7) | (2 << 10)),
    ("tcgen05.mma.cta_group::1.kind::f8f6f4.f32.e2m1.e3m2", (1 << 4) | (5 << 7) | (4 << 10)),
    ("tcgen05.mma.cta_group::1.kind::f8f6f4.f16.e5m2.e2m3", (1 << 7) | (3 << 10)),
    # block-scaled: no d format field; scale type at bit 23 (1 = ue8m0), scale factor ids 0
    ("tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e4m3.e2m1.ue8m0",
     (0 << 7) | (5 << 10) | (1 << 23)),
    ("tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.ue4m3",
     (1 << 7) | (1 << 10)),
])
def test_tcgen05_instruction_descriptors(name, fields):
    assert instruction_descriptor(instruction_by_name(name)) == fields | M128_N16


# ---------------------------------------------------------------------------
# Calibration vectors
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", [
    "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16",
    "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e5m2",
    "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.ue4m3",
    "mma.sync.aligned.kind::mxf8f6f4.block_scale.scale_vec::1X.m16n8k32.row.col.f32.e3m2.e2m1.f32.ue8m0",
    "v_mfma_f32_16x16x32_bf8_fp8",
    "v_mfma_f32_32x32x4_xf32",
])
def test_calibration_vectors_are_exact(name):
    ins = instruction_by_name(name)
    if not _known(ins):
        pytest.skip(f"formats of {name} are not in the format table yet")
    fa, fb = get_format(ins.in_format), get_format(ins.b_fmt)
    fc, fout = get_format(ins.c_format), get_format(ins.out_format)
    cal = calibration_vectors(ins)
    assert len(cal) == ins.k + 1
    for k, x in enumerate(cal[:-1]):
        assert [fa.value(t) for t in x.a] == [1 if j == k else 0 for j in range(ins.k)]
        assert [fb.value(t) for t in x.b] == [1 if j == k else 0 for j in range(ins.k)]
        scale = 1
        if ins.scale_format:
            fs = get_format(ins.scale_format)
            blocks = ins.k // ins.scale_block
            assert [fs.value(s) for s in x.scale_a] == [Fraction(2) ** j for j in range(blocks)]
            assert [fs.value(s) for s in x.scale_b] == [1] * blocks
            scale = Fraction(2) ** (k // ins.scale_block)
        assert fc.value(x.c) == 0 and fout.value(x.d) == scale
    last = cal[-1]
    assert fc.value(last.c) == Fraction(3, 2) and fout.value(last.d) == Fraction(3, 2)
    assert not any(last.a) and not any(last.b)
