"""The tables of matrix instructions, and how to pick one for a format pair
and a target (``tcsmt.instructions.instruction`` is the record; the tables
are in ``tcsmt.instructions.nvidia`` and ``tcsmt.instructions.mfma``)."""

from __future__ import annotations

from dataclasses import replace

from tcsmt.errors import UserError
from tcsmt.instructions.instruction import AMD_APIS, Instruction
from tcsmt.instructions.nvidia import compute_capability

# ---------------------------------------------------------------------------
# Looking instructions up
# ---------------------------------------------------------------------------

def _all() -> tuple[list[Instruction], dict[tuple, str]]:
    from tcsmt.instructions.mfma import MFMA
    from tcsmt.instructions.nvidia import DEFAULTS, NVIDIA
    from tcsmt.instructions.wmma_amd import AMD_WMMA
    return NVIDIA + MFMA + AMD_WMMA, DEFAULTS


def _label(key: tuple) -> str:
    a, b, c, out, scale, block, sparsity = key
    ab = f"in {a}" if a == b else f"a {a}, b {b}"
    sc = f", scale {scale} per {block}" if scale else ""
    sp = f", {sparsity} sparse" if sparsity else ""
    return f"{ab}, c {c}, out {out}{sc}{sp}"


API_ALIASES = {"mma.sync": "mma", "mma": "mma", "wmma": "wmma", "wgmma": "wgmma",
               "wgmma.mma_async": "wgmma", "tcgen05": "tcgen05", "tcgen05.mma": "tcgen05",
               "mfma": "mfma", "hip": "mfma"}


def choose_instruction(fin: str, fc: str, fout: str, name: str | None = None, *,
                       fb: str | None = None, scale: str = "", scale_block: int = 0,
                       target: str | None = None, sparsity: str = "") -> Instruction:
    """The instruction for these formats (canonical format names).

    ``name`` may be a full name (``mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32``),
    an API (``mma``/``mma.sync``/``wmma``/``wgmma``/``tcgen05``/``mfma``:
    that API's instruction for the formats, the largest k first), a shape
    (``m16n8k8``, ``wmma.m16n16k8``), or an architecture (``sm_90a``,
    ``sm_100a``, ``sm_120a``, ``gfx942``). ``target`` ("cuda" or "hip")
    limits the choice to that vendor's instructions; ``sparsity`` ("2:4")
    to the sparse ones (mma.sp).
    """
    instructions, defaults = _all()
    key = (fin, fb or fin, fc, fout, scale, scale_block, "" if sparsity == "dense" else sparsity)
    fits = [i for i in instructions if i.key() == key and _on_target(i, target)]
    if not fits:
        near = sorted({_label(i.key()) for i in instructions if _on_target(i, target) and i.key()[0] == fin})
        have = f"with a {fin}: {'; '.join(near)}" if near else f"none with a {fin}"
        raise UserError(f"no supported instruction for {_label(key)} (supported {have})")
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
    return target is None or (ins.api in AMD_APIS) == (target == "hip")


def _preference(ins: Instruction) -> tuple:
    """mma.sync first (it runs on most GPUs); of AMD's the MFMA 32x32 forms; then the largest k;
    the wrapping integer form before .satfinite."""
    return (ins.api == "mma", ins.api == "mfma", ins.m if ins.api == "mfma" else 0, ins.k, -ins.min_sm,
            not ins.satfinite)


SAME_INSTRUCTIONS = {"sm_103a": ("sm_100a", "tcgen05")}
"""Architectures that run another's instructions of one API, built for
their own target: Blackwell Ultra (B300, sm_103a) takes sm_100a's tcgen05.mma
kinds (PTX ISA, tcgen05 target notes)."""


def _match(fits: list[Instruction], want: str) -> list[Instruction]:
    if want in API_ALIASES:
        return [i for i in fits if i.api == API_ALIASES[want]]
    if want in SAME_INSTRUCTIONS:
        arch, api = SAME_INSTRUCTIONS[want]
        return [replace(i, arch=want) for i in fits if i.arch == arch and i.api == api]
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


def runs_on(ins: Instruction, arch: str) -> bool:
    """Whether a GPU of ``arch`` (``sm_80``, ``sm_90a``, ``gfx90a``) runs the
    instruction: an AMD target among its ``archs``; an NVIDIA one of at least
    its compute capability, exactly its own for an arch-specific
    instruction (``sm_90a`` wgmma, ``sm_100a`` tcgen05, ``sm_120a`` kinds)."""
    arch = arch.strip().lower()
    if ins.api in AMD_APIS:
        return arch.split(":")[0] in ins.archs
    cc = compute_capability(arch)
    if cc is None:
        return False
    if ins.arch.endswith("a"):
        own = compute_capability(ins.arch)
        same = SAME_INSTRUCTIONS.get(f"sm_{cc}a")
        return cc == own or (same is not None and same == (ins.arch, ins.api))
    return cc >= ins.min_sm


def same_formats(ins: Instruction, arch: str) -> list[Instruction]:
    """The instructions a GPU of ``arch`` runs that compute what ``ins``
    computes (its formats, scale block and sparsity), whatever their k;
    ``ins`` first, then by k."""
    fits = [i for i in all_instructions() if i.key() == ins.key() and runs_on(i, arch) and i != ins]
    return [ins] + sorted(fits, key=lambda i: (i.k, i.api != "mma", i.name))
