"""Choosing a model: the one place where a request becomes a ModelParams.

A request names the model one of these ways:

* a ModelParams (already chosen: only the overrides apply);
* a model file (a path ending in .toml, or holding a /);
* a shipped model's name (``hopper-e4m3-fp32``);
* a reference model (``exact``, ``fma-chain``...: tcsmt.model.reference),
  which takes the formats it is asked for;
* an architecture (``hopper``, or an alias such as ``h100``), whose model is
  then picked by ``formats`` ("IN:OUT" or "A,B:OUT"), or by what the
  operands are (``Operands``: the formats rows were recorded in, or those
  an array's dtype can hold, and the instruction that ran them), or else is
  the architecture's default model.

``overrides`` (``--set KEY=VALUE`` strings) apply last. Every entrance
(command, Python call) calls ``choose`` once; below it a ModelParams
travels down and nothing chooses again.
"""

from __future__ import annotations

from dataclasses import dataclass

from tcsmt.errors import FormatMismatch, UnknownModel
from tcsmt.model import catalogue
from tcsmt.model.formats import get_format
from tcsmt.model.overrides import apply_overrides
from tcsmt.model.params import ModelParams
from tcsmt.model.reference import is_reference, reference_for, reference_model

__all__ = ["Operands", "choose", "choose_or_none", "device_architecture", "is_architecture"]


@dataclass(frozen=True)
class Operands:
    """What the operands of a request are, where known. For each of a, b, c
    and d, the format names it may be (several where a container holds more
    than one: a float32 array holds float32, tf32 or xf32 values); empty:
    any. ``scale`` is the block scales' format, or None for operands without
    scales, and ``scale_block`` the products per scale where known;
    ``instruction`` the family that ran them (mma.sync, wgmma...);
    ``sparsity`` the pattern of a sparse instruction's metadata ("dense":
    operands without a mask, which only a dense model takes)."""

    a: tuple[str, ...] = ()
    b: tuple[str, ...] = ()
    c: tuple[str, ...] = ()
    out: tuple[str, ...] = ()
    scale: str | None = None
    scale_block: int = 0
    instruction: str = ""
    sparsity: str = "dense"

    def fits(self, m: ModelParams) -> bool:
        if (m.scale_format or None) != self.scale or m.sparsity != self.sparsity:
            return False
        if self.scale_block and m.scale_block != self.scale_block:
            return False
        return all(not want or f.name in want for want, f in
                   ((self.a, m.fin), (self.b, m.fb), (self.c, m.fc), (self.out, m.fout)))

    def describe(self) -> str:
        def one(names):
            return "/".join(names) if names else "any"
        text = f"{one(self.a)} x {one(self.b)} + {one(self.c)} -> {one(self.out)}"
        return text + (f", scales {self.scale}" + (f" per {self.scale_block}" if self.scale_block else "")
                       if self.scale else "")

    def reference(self, name: str) -> ModelParams:
        """The reference model ``name`` in these formats (the first each may
        be; c and d in c's format unless d's is known)."""
        if not self.a or not self.c:
            raise FormatMismatch(f"the reference model {name} needs the formats of a and c")
        fa, fc = self.a[0], self.c[0]
        fb = self.b[0] if self.b else fa
        return reference_model(name, fa, self.out[0] if self.out else fc, fc, fb if fb != fa else None)


def choose(spec: str | ModelParams, formats: str | None = None, overrides=(),
           operands: Operands | None = None) -> ModelParams:
    """The model a request names (see the module docstring); UnknownModel or
    FormatMismatch, one line, when there is none."""
    p = choose_or_none(spec, formats, operands)
    if p is None:
        assert operands is not None     # only the operands may match no model of an architecture
        arch = catalogue.arch_name(str(spec))
        mine = [m for m in catalogue.all_models() if m.arch == arch]
        have = ", ".join(f"{m.formats_label}" + (f" ({m.scale_format}/{m.scale_block})" if m.scale_format
                                                 else "") for m in mine)
        raise FormatMismatch(f"{arch} has no model for {operands.describe()} (it has: {have}; "
                             "`tcsmt models` lists them)")
    return apply_overrides(p, list(overrides or []))


def choose_or_none(spec: str | ModelParams, formats: str | None = None,
                   operands: Operands | None = None) -> ModelParams | None:
    """As choose, without overrides; None where an architecture has no model
    for the operands."""
    if isinstance(spec, ModelParams):
        return spec
    if not isinstance(spec, str):
        raise UnknownModel(f"a model is named by a string or given as a ModelParams, "
                           f"not {type(spec).__name__}")
    spec = spec.strip()
    if spec.endswith(".toml") or "/" in spec:
        return catalogue.load_model(spec)
    if is_reference(spec):
        if formats is None and operands is not None:
            return operands.reference(spec)
        return reference_for(spec, formats)
    named = catalogue.by_name().get(spec)
    if named is not None and formats is None:
        return named
    mine = catalogue.models_of(spec)
    if formats:
        return _by_formats(mine, formats)
    if operands is not None:
        return _by_operands(mine, operands)
    return next((m for m in mine if m.default), mine[0])


def _ranked(models: list[ModelParams], instruction: str = "") -> list[ModelParams]:
    """Models of one architecture in the order a request prefers them: those
    of the instruction family asked for, then the default model, then the
    one named ARCH-IN-OUT (others are alternative hypotheses, such as
    blackwell-e4m3-fp32-mma), then file order. An integer instruction with
    .satfinite asks for the saturating model, one without it for the
    wrapping one."""
    word = instruction_family(instruction)
    sat = ".satfinite" in instruction
    return sorted(models, key=lambda m: (bool(word) and word not in m.instruction,
                                         m.fout.is_integer and sat != (m.overflow == "saturate"),
                                         not m.default, m.name != catalogue.plain_name(m)))


def _by_formats(mine: list[ModelParams], formats: str) -> ModelParams:
    fin, _, fout = formats.partition(":")
    fa, _, fb = fin.partition(",")
    try:
        want = Operands(a=(get_format(fa).name,), b=(get_format(fb or fa).name,),
                        out=(get_format(fout).name,) if fout else ())
    except Exception:
        raise FormatMismatch(f"bad --formats {formats!r}: expected IN:OUT such as fp16:fp32, "
                             "or A,B:OUT such as e4m3fnuz,e5m2fnuz:fp32") from None
    match = [m for m in mine if all(not w or f.name in w for w, f in
                                    ((want.a, m.fin), (want.b, m.fb), (want.out, m.fout)))]
    if not match:
        have = ", ".join(m.formats_label for m in mine)
        raise FormatMismatch(f"{mine[0].arch} has no model for formats {formats} (it has: {have})")
    plain = [m for m in match if m.name == catalogue.plain_name(m)]
    return (plain + [m for m in match if m not in plain])[0]


def _by_operands(mine: list[ModelParams], operands: Operands) -> ModelParams | None:
    fits = [m for m in mine if operands.fits(m)]
    return _ranked(fits, operands.instruction)[0] if fits else None


def instruction_family(instruction: str) -> str:
    """mma.sync, wgmma, wmma, tcgen05, v_mfma... : the family of an
    instruction's name ("" when none is named)."""
    word = instruction.strip().split(".")[0].split()[0] if instruction.strip() else ""
    return "mma.sync" if word == "mma" else word


def is_architecture(spec: str) -> bool:
    """Whether a name is an architecture (or a reference model, which like an
    architecture takes the formats it is asked for), not a model or file."""
    if is_reference(spec):
        return True
    if spec.endswith(".toml") or "/" in spec or spec in catalogue.by_name():
        return False
    return catalogue.arch_name(spec) in catalogue.architectures()


def device_architecture(device: str) -> str | None:
    """The architecture of a device name (NVIDIA H100 80GB HBM3 -> hopper)."""
    arch = catalogue.arch_for_device(device)
    words = device.upper().replace("-", " ").split()
    for dev, a in catalogue.DEVICE_ARCH.items():
        if arch is None and dev.replace(" ", "") in words:
            arch = a
    return arch
