"""Which instruction runs rows of another k on a GPU.

Blind identification runs rows at a second k when rivals differ only
there (tcsmt.identify.blind: the larger block size of the two, as tcsmt
equiv asks). A model's k is the number of products one instruction sums,
so a row of k products is run by an instruction of exactly that k, with
the same formats, scale block and sparsity, on the same GPU
(tcsmt.instructions.table.same_formats). It must also be the same unit:
on some architectures an instruction of another shape runs another
datapath (Turing runs Volta's m8n8k4 with Volta's settings; CDNA2's bf16
MFMA without _1k is not the _1k one). The record of which model each
instruction computes on each architecture is MMA-Sim's map
(tcsmt.peer.mmasim.PAIRS); an instruction is taken only where that map
names one model for it and for the instruction the probe was written
for. Otherwise the rows are refused, with the reason in one line.
"""

from __future__ import annotations

from tcsmt.instructions.instruction import AMD_APIS, Instruction
from tcsmt.instructions.nvidia import PTX_TYPES, compute_capability

NVIDIA_FAMILIES = [((70, 70), "Volta"), ((75, 75), "Turing"), ((80, 87), "Ampere"),
                   ((89, 89), "Ada Lovelace"), ((90, 90), "Hopper"), ((100, 103), "Blackwell"),
                   ((120, 121), "RTX Blackwell")]
AMD_FAMILIES = {"gfx908": "CDNA1", "gfx90a": "CDNA2", "gfx940": "CDNA3", "gfx941": "CDNA3",
                "gfx942": "CDNA3"}


def family(arch: str) -> str | None:
    """MMA-Sim's name of the architecture of ``sm_80``, ``sm_90a``, ``gfx90a``."""
    arch = arch.strip().lower()
    if arch.startswith("gfx"):
        return AMD_FAMILIES.get(arch.split(":")[0])
    cc = compute_capability(arch)
    if cc is None:
        return None
    return next((name for (lo, hi), name in NVIDIA_FAMILIES if lo <= cc <= hi), None)


def peer_key(ins: Instruction) -> tuple[str, str] | None:
    """(MMA-Sim class, shape and types) of an instruction, as PAIRS spells
    them; None for the forms the map does not hold (scaled, sparse, wmma)."""
    if ins.scale_format or ins.sparsity:
        return None
    if ins.api in AMD_APIS:
        return ("MFMA", ins.name.removeprefix("v_mfma_")) if ins.api == "mfma" and not ins.kind else None
    t = PTX_TYPES
    kind = f"kind::{ins.kind}." if ins.kind else ""
    if ins.api == "mma":
        return "MMA", (f"{ins.shape}.{kind}{t[ins.out_format]}.{t[ins.in_format]}.{t[ins.b_fmt]}."
                       f"{t[ins.c_format]}")
    if ins.api == "wgmma":
        return "WGMMA", f"m64n8k{ins.k}.{t[ins.out_format]}.{t[ins.in_format]}.{t[ins.b_fmt]}"
    if ins.api == "tcgen05":
        return "TCGen05MMA", f"m64n8k{ins.k}.{kind}{t[ins.out_format]}.{t[ins.in_format]}.{t[ins.b_fmt]}"
    return None


def _plain(shape: str, fam: str) -> str:
    """An MFMA suffix compared without underscores (CDNA3's names drop _1k)."""
    s = shape.replace("_", "")
    return s.removesuffix("1k") if fam == "CDNA3" else s


def computed_by(ins: Instruction, arch: str) -> str | None:
    """The model MMA-Sim's map says ``ins`` computes on ``arch`` (None when
    the map does not hold it)."""
    from tcsmt.peer.mmasim import PAIRS
    fam, key = family(arch), peer_key(ins)
    if fam is None or key is None:
        return None
    cls, shape = key
    for model, c, a, s in PAIRS:
        if c == cls and a == fam and (s == shape if cls != "MFMA" else _plain(s, fam) == _plain(shape, fam)):
            return model
    return None


def short(ins: Instruction) -> str:
    return f"{ins.api if ins.api != 'mma' else 'mma.sync'} {ins.shape}"


def instruction_for_k(ins: Instruction, k: int, arch: str) -> Instruction | str:
    """The instruction that runs rows of k products where ``ins`` runs the
    plan's, on a GPU of ``arch``; else why none does (one line)."""
    from tcsmt.instructions.table import same_formats
    if k == ins.k:
        return ins
    fits = same_formats(ins, arch)
    of_k = [i for i in fits if i.k == k]
    if not of_k:
        have = ", ".join(str(n) for n in sorted({i.k for i in fits}))
        return (f"the table holds no instruction of k = {k} for {ins.name}'s formats on {arch} "
                f"(it has k = {have})")
    mine = computed_by(ins, arch)
    for other in of_k:
        theirs = computed_by(other, arch)
        if mine is not None and theirs == mine:
            return other
    other = of_k[0]
    theirs = computed_by(other, arch)
    if mine is not None and theirs is not None:
        return (f"on {arch}, {short(other)} (k = {k}) computes {theirs}, not {mine} as {short(ins)} "
                "does: its rows would not be the unit's")
    return (f"nothing records that {short(other)} (k = {k}) computes on {arch} what {short(ins)} "
            "does (MMA-Sim's map holds no model for both)")
