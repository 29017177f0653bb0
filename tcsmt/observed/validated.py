"""The inputs each shipped model was validated on, where the recorded data
covers less than every input: a vector outside them is a prediction no
recording has checked.

One table row per limit, taken from the known problems of the recordings
(tcsmt.observed.recorded.KNOWN_PROBLEMS): which models it covers, the
recording, what the vectors must satisfy, and the option of tcsmt diff and
tcsmt find's domain that keeps a search inside it.
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


def outside_notes(models: list[ModelParams], vectors: list[dict]) -> list[str]:
    """A note for each model and limit some vector lies outside: which
    vectors, what the recordings covered, and the option that keeps a
    search inside."""
    notes = []
    for m in models:
        for lim in LIMITS:
            if not lim.covers(m):
                continue
            out = [n for n, v in enumerate(vectors) if not lim.inside(v)]
            if out:
                which = ", ".join(str(n) for n in out)
                notes.append(f"{m.name} was validated only with {lim.what} (recorded: {lim.recorded}); "
                             f"vector(s) {which} lie outside that, so what it predicts there is "
                             f"unchecked: {lim.option} keeps {lim.what}")
    return notes
