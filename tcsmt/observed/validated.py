"""The inputs each shipped model was validated on, where the recorded data
covers less than every input: a vector outside them is a prediction no
recording has checked.

One table row per limit, taken from the known problems of the recordings
(tcsmt.observed.recorded.KNOWN_PROBLEMS): which models it covers, the
recording, what the vectors must satisfy, and the option of tcsmt diff and
tcsmt find's domain that keeps a search inside it. A limit no longer holds
for a model that a later recording checked beyond it (CHECKED_BEYOND: the
committed observations, which tests/test_validated.py runs through the
model on every row).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from tcsmt.model.params import ModelParams
from tcsmt.observed.recorded import KNOWN_PROBLEMS

FP8 = ("float8_e4m3fn", "float8_e5m2")


@dataclass(frozen=True)
class Limit:
    """Models ``covers`` were validated only on vectors ``inside`` holds for."""
    covers: Callable[[ModelParams], bool]
    inside: Callable[[dict], bool]        # a vector record of a result file
    what: str                             # "c = 0"
    recorded: str                         # where the rows come from, and why the limit
    option: str                           # the domain option that keeps a search inside


def _c_is_zero(v: dict) -> bool:
    return v["c"]["decimal"] in ("0", "-0")


def _wgmma_fp8_of(arch: str | None, m: ModelParams) -> bool:
    return m.arch == arch and m.in_format in FP8 and "wgmma" in m.instruction


def _limits() -> list[Limit]:
    out = []
    for kp in KNOWN_PROBLEMS:
        if kp.rule == "c_zero":
            out.append(Limit(
                covers=partial(_wgmma_fp8_of, kp.arch),
                inside=_c_is_zero, what="c = 0",
                recorded=f"data/hwdata ({kp.why})", option="--c-sign zero"))
    return out


LIMITS = _limits()

H200 = "results/hardware/H200/campaign-20261127-101515"
CHECKED_BEYOND: dict[str, dict[str, str]] = {
    # Hopper's same-format fp8 wgmma with c != 0 (H200, 2000 of 2000 rows each)
    "c = 0": {
        "hopper-e4m3-fp32": f"{H200}/observed-wgmma-e4m3-f32.json",
        "hopper-e5m2-fp32": f"{H200}/observed-wgmma-e5m2-f32.json",
        "hopper-e4m3-fp16": f"{H200}/observed-wgmma-e4m3-f16.json",
        "hopper-e5m2-fp16": f"{H200}/observed-wgmma-e5m2-f16.json",
    },
}
"""Per limit, the models a committed recording checked beyond it, and that
recording (relative to a checkout)."""


def limited(lim: Limit, m: ModelParams) -> bool:
    """Whether the limit holds for m: it covers m, and m is not a model a
    recording checked beyond it (the shipped model itself: a change of any
    parameter, which keeps the name, is unchecked again)."""
    if not lim.covers(m):
        return False
    if m.name not in CHECKED_BEYOND.get(lim.what, {}):
        return True
    from tcsmt.model.catalogue import by_name
    shipped = by_name().get(m.name)
    return shipped is None or shipped.as_dict() != m.as_dict()


def outside_notes(models: list[ModelParams], vectors: list[dict]) -> list[str]:
    """A note for each model and limit some vector lies outside: which
    vectors, what the recordings covered, and the option that keeps a
    search inside."""
    notes = []
    for m in models:
        for lim in LIMITS:
            if not limited(lim, m):
                continue
            out = [n for n, v in enumerate(vectors) if not lim.inside(v)]
            if out:
                which = ", ".join(str(n) for n in out)
                notes.append(f"{m.name} was validated only with {lim.what} (recorded: {lim.recorded}); "
                             f"vector(s) {which} lie outside that, so what it predicts there is "
                             f"unchecked: {lim.option} keeps {lim.what}")
    return notes


def gemm_notes(models: list[ModelParams], ks, c_zero: bool = True) -> list[str]:
    """A note for each model used in a GEMM beyond the inputs it was
    validated on: a limit of c = 0 is left when K is longer than one block
    (each block's result is the next block's c) or when C is not zero; a
    model written from sources has been checked by no run at all."""
    notes = []
    for m in models:
        if m.from_sources:
            notes.append(f"{m.name} is written from sources, not measured: no run of the unit has "
                         "checked what it predicts")
        for lim in LIMITS:
            if not limited(lim, m) or lim.what != "c = 0":
                continue
            chained = [k for k in ks if k > m.block_size]
            why = []
            if chained:
                why.append(f"K = {', '.join(map(str, chained))} chains blocks of {m.block_size} through "
                           "c != 0 (each block's result is the next block's c)")
            if not c_zero:
                why.append("C is not zero")
            if why:
                notes.append(f"{m.name} was validated only with {lim.what} (recorded: {lim.recorded}); "
                             f"{' and '.join(why)}, so what it predicts there is unchecked")
    return notes
