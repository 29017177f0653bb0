"""Hypotheses and input vectors: the models a search runs, the inputs it
finds, and what a vector separates (computed on the concrete model)."""

from __future__ import annotations

from dataclasses import dataclass

from tcsmt.model.params import ModelParams
from tcsmt.sim.dot import dot_bits


@dataclass(frozen=True)
class Hypothesis:
    """One model the vectors are run through."""
    id: str
    params: ModelParams
    spec: str = ""

    @property
    def label(self) -> str:
        return self.params.name

    def record(self) -> dict:
        return {"id": self.id, "label": self.label, "spec": self.spec,
                "parameters": self.params.parameter_dict()}


@dataclass(frozen=True)
class Vector:
    """Inputs as bit patterns of their formats; for block-scaled models
    also the scales of a and b (in the model's scale_format, one per
    scale_block products), for sparse models the mask (one bit per
    product, 1 where the metadata selects it), empty otherwise."""
    a: tuple[int, ...]
    b: tuple[int, ...]
    c: int
    sa: tuple[int, ...] = ()
    sb: tuple[int, ...] = ()
    mask: tuple[int, ...] = ()

    def scales(self) -> tuple[list[int] | None, list[int] | None]:
        """The scales as dot_bits takes them (None without scales)."""
        return (list(self.sa) or None, list(self.sb) or None)

    def mask_list(self) -> list[int] | None:
        """The mask as dot_bits takes it (None for a dense model)."""
        return list(self.mask) or None


def outputs(vec: Vector, hyps: list[Hypothesis]) -> dict[str, int]:
    """d under every hypothesis (the concrete model)."""
    return {h.id: dot_bits(h.params, list(vec.a), list(vec.b), vec.c, *vec.scales(),
                           mask=vec.mask_list()) for h in hyps}


Pair = tuple[int, int]
"""Two hypotheses by their indices, the smaller first."""


def all_pairs(n: int) -> list[Pair]:
    """Every pair of n hypotheses, in order."""
    return [(i, j) for i in range(n) for j in range(i + 1, n)]


def separated_by(vec: Vector, hyps: list[Hypothesis]) -> set[Pair]:
    """The pairs whose outputs differ on ``vec`` (the concrete model)."""
    outs = outputs(vec, hyps)
    return {(i, j) for i, j in all_pairs(len(hyps)) if outs[hyps[i].id] != outs[hyps[j].id]}


def separated_pairs(outs: dict[str, int], ids: list[str]) -> list[list[str]]:
    """The pairs of ids whose outputs differ, as a result file lists them."""
    return [[ids[i], ids[j]] for i, j in all_pairs(len(ids)) if outs[ids[i]] != outs[ids[j]]]
