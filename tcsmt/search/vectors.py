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
    """Inputs as bit patterns of their formats."""
    a: tuple[int, ...]
    b: tuple[int, ...]
    c: int


def outputs(vec: Vector, hyps: list[Hypothesis]) -> dict[str, int]:
    """d under every hypothesis (the concrete model)."""
    return {h.id: dot_bits(h.params, list(vec.a), list(vec.b), vec.c) for h in hyps}


def separated_pairs(outs: dict[str, int], ids: list[str]) -> list[list[str]]:
    return [[x, y] for i, x in enumerate(ids) for y in ids[i + 1:] if outs[x] != outs[y]]
