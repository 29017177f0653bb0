"""Properties: questions about one or more model parameters.

A property is a module in ``queries/`` (installed as ``tcsmt.queries``) that
defines ``PROPERTY``, a ``Property``: which hypotheses it tells apart (each a
set of parameter overrides on an architecture's model), which inputs are
allowed (a tcsmt.search.domain.Domain and the number of products k), and for
which models the question makes sense. A
query module never touches a solver; ``tcsmt.search.find`` turns it into formulas,
solves them, replays the witnesses and writes the result.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field

from tcsmt.enums import PropertyKind
from tcsmt.errors import UserError
from tcsmt.model.params import ModelParams
from tcsmt.search.domain import Domain


@dataclass(frozen=True)
class Hypothesis:
    label: str
    overrides: tuple[tuple[str, object], ...] = ()

    def apply(self, base: ModelParams) -> ModelParams:
        if not self.overrides:
            return base
        changes = dict(self.overrides)
        suffix = ",".join(f"{k}={v}" for k, v in self.overrides)
        return base.replace(name=f"{base.name}[{suffix}]", **changes)


def rdna_adder(p: ModelParams) -> bool:
    """Whether the model uses AMD RDNA's adder (align_rounding ones or floor,
    c_lead_bits, pair_sums), which only the block datapath has."""
    return p.align_rounding in ("ones", "floor") or bool(p.c_lead_bits) or p.pair_sums


def hyp(label: str, **overrides) -> Hypothesis:
    return Hypothesis(label, tuple(overrides.items()))


@dataclass(frozen=True)
class Property:
    name: str
    description: str
    parameters: tuple[str, ...]
    hypotheses: Callable[[ModelParams], list[Hypothesis]]
    domain: Callable[[ModelParams], Domain] = lambda p: Domain()
    k: Callable[[ModelParams], int] = lambda p: p.block_size   # products per dot product
    applies: Callable[[ModelParams], str | None] = lambda p: None   # None, or why not
    formats: str | None = None       # preferred IN:OUT when the default model does not apply
    kind: PropertyKind = PropertyKind.SEPARATE
    notes: str = ""
    # (hypothesis x, hypothesis y, k, domain) -> a formula whose UNSAT proves
    # that x and y agree on every input of the domain, or None
    lemma: Callable | None = None
    integer: bool = False            # asks about integer models (the others ask about floats)
    # the model an architecture stands for when its default model does not
    # apply and ``formats`` does not name it (sparse models): arch -> name
    pick: Callable[[str], str] | None = None

    def check(self, p: ModelParams) -> None:
        why = self.applies(p)
        if not why and p.fout.is_integer and not self.integer:
            why = ("an integer model: its products and sums are exact, nothing is aligned or "
                   "rounded (the saturation property asks about its overflow)")
        if why:
            raise UserError(f"property {self.name} does not apply to {p.name}: {why}")


def not_fp64(p: ModelParams) -> str | None:
    return "an IEEE fp64 FMA chain has no block datapath to ask about" if p.facc.name == "float64" else None


def integer(p: ModelParams) -> str | None:
    """None for an integer model (s8, u8, s4, u4 inputs; s32 c and d), else
    why a question about integer overflow does not apply."""
    if not p.fout.is_integer:
        return "a question about integer models (s8, u8, s4, u4 inputs; s32 c and d)"
    return None


def sparse_float(p: ModelParams) -> str | None:
    """None for a sparse float model, else why a question about how the
    selected products enter the blocks does not apply (an integer sum is
    exact: every reading gives the same bits)."""
    if p.sparsity == "dense":
        return "a question about sparse models (mma.sp, tcgen05.mma.sp)"
    if p.fout.is_integer:
        return "an integer model's sums are exact: its selected products give the same bits in any order"
    return None


def aligns(p: ModelParams) -> str | None:
    """None where the block aligns its terms to a register (the question
    about alignment, carries or additions applies), else why not."""
    if p.align_rounding == "exact":
        return "an exact block sum (CDNA1) keeps every bit and rounds once: nothing is aligned"
    return not_fp64(p)


def scaled(p: ModelParams) -> str | None:
    """None for a block-scaled model (MX, NVFP4), else why a question about
    scales does not apply."""
    if p.scale_format is None:
        return "the model has no block scales (a question about MX and NVFP4 kinds)"
    return None


def ungrouped(p: ModelParams) -> str | None:
    """None where every product is its own term, else why a question that
    changes how single products enter the block does not apply."""
    if p.group_size > 1:
        return (f"{p.name} sums exact groups of {p.group_size} products, which need raw, exact "
                "products in a normalised block (the group-size property asks about the groups)")
    return None


def all_properties() -> dict[str, Property]:
    import tcsmt.queries as pkg
    found: dict[str, Property] = {}
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"tcsmt.queries.{info.name}")
        prop = getattr(mod, "PROPERTY", None)
        if isinstance(prop, Property):
            found[prop.name] = prop
    return found


def get_property(name: str) -> Property:
    props = all_properties()
    key = name.strip().lower().replace("_", "-")
    if key not in props:
        raise UserError(f"unknown property {name!r} (known: {', '.join(sorted(props))})")
    return props[key]


@dataclass
class Models:
    """The hypotheses of a property resolved against one base model."""
    base: ModelParams
    labels: list[str] = field(default_factory=list)
    models: list[ModelParams] = field(default_factory=list)


def resolve_hypotheses(prop: Property, base: ModelParams) -> Models:
    prop.check(base)
    out = Models(base)
    seen = set()
    for h in prop.hypotheses(base):
        m = h.apply(base)
        key = m.parameter_dict().__repr__()
        if key in seen:
            continue            # two labels for the same model: keep the first
        seen.add(key)
        out.labels.append(h.label)
        out.models.append(m)
    if len(out.models) < 2 and prop.kind == PropertyKind.SEPARATE:
        raise UserError(f"property {prop.name} has fewer than two distinct hypotheses for {base.name}")
    return out
