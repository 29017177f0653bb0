"""Fragment helpers every probe kernel shares: masks, the tables of which
term each lane's element holds, the lane that holds D[0][0], and how
operands are packed into shared memory."""

from __future__ import annotations

from tcsmt.instructions.instruction import Instruction
from tcsmt.model.formats import get_format


def mask(bits: int) -> str:
    return f"0x{(1 << bits) - 1:x}u"


def term_table(layout, elems: int, want_row: bool, lanes: int = 32) -> str:
    """Rows of the A (want_row) or B table: the term an element holds, or -1."""
    rows = []
    for lane in range(lanes):
        cells = []
        for i in range(elems):
            r, col = layout(lane, i)
            if want_row:
                cells.append(col if r == 0 else -1)
            else:
                cells.append(r if col == 0 else -1)
        rows.append("  {" + ", ".join(str(x) for x in cells) + "},")
    return "\n".join(rows)


def d00(ins: Instruction, lanes: int = 32) -> tuple[int, int]:
    layout = ins.c_layout
    if layout is None:
        raise ValueError(f"{ins.name}: no layout of C")
    for lane in range(lanes):
        for i in range(ins.c_elems):
            if layout(lane, i) == (0, 0):
                return lane, i
    raise ValueError(f"{ins.name}: no lane holds D[0][0]")


def chunk_geometry(ins: Instruction, fmt_name: str) -> tuple[int, int]:
    """(bits of a term, terms per 16-byte chunk) of an operand in shared memory."""
    bits = get_format(fmt_name).storage_bits
    if ins.kind in ("mxf4", "mxf4nvf4"):
        return 4, 32
    if bits < 8:
        return bits, 16
    return bits, 128 // bits
