"""Blind identification of units one and two parameters away from shipped
models: runs, launches, vectors, seconds, and whether the model written is
proved equivalent to the unit.

    python benchmarks/bench_blind.py [NAME ...] [--list] [--short] [--no-prove] [--equiv-timeout S]

Each unit outside the plans' spaces (UNITS below, or those named) is
written as a model file that starts from a shipped model, played blind
with ``tcsmt identify --device sim:FILE --model-file out.toml``
(tcsmt.api.identify), and ``tcsmt equiv out.toml FILE`` is asked of the
solvers (tcsmt.api.equiv); the shipped models of INSIDE (units inside
the plans' spaces) are played as ``sim:NAME`` beside them. One line per
unit: the verdict and what it differs in from its base, phase 1's runs
(vectors on the plan's path), the launches of the unit in both phases,
the vectors run, wall and CPU seconds (the worker and solver processes
included), the check after the verdict and equiv's answer, what the unit
changes and what the verdict says; then how many units outside the spaces
were identified and how many left unexplained. A unit is as the judge wants
("ok") when it ends identified and equiv proves the model written
equivalent, or, for UNEXPLAINED (four parameters away: nothing within two
of a shipped model explains it), ends unexplained with the rows and writes
no model; the exit status is 1 when some unit is not.
``--short`` runs SHORT without the solvers (rivals no row splits are left
undecided, no equiv): a minute or so. The machine is shared: read the
load average printed beside the figures.
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from pathlib import Path

INSIDE = ("ampere-fp16-fp32", "hopper-fp16-fp32", "hopper-bf16-fp32", "hopper-e4m3-fp32")
SHORT = ("ampere-fp16-fp32", "volta-rne")
UNITS = {
    "hop-carry2-zero": ("hopper-fp16-fp32", {"carry_bits": 2, "zero_sign": "ieee"}),
    "hop-carry2": ("hopper-fp16-fp32", {"carry_bits": 2}),
    "volta-rne": ("volta-fp16-fp32", {"final_rounding": "rne"}),
    "amp-block4-flush": ("ampere-fp16-fp32", {"block_size": 4, "subnormals": "flush"}),
    "hop-prodround": ("hopper-fp16-fp32", {"product_rounding": "in_format"}),
    "hop-align0-norm": ("hopper-fp16-fp32", {"align_bits": 0, "product_alignment": "normalised"}),
    "hop-block8-sep": ("hopper-fp16-fp32", {"block_size": 8, "chaining": "separate"}),
    "hbf16-floor": ("hopper-bf16-fp32", {"min_exponent": -120}),
    "abf16-rne-norm": ("ampere-bf16-fp32", {"align_rounding": "rne", "product_alignment": "normalised"}),
    "htf32-ieee-align3": ("hopper-tf32-fp32", {"overflow": "ieee", "align_bits": 3}),
    "he4m3-align1-flush": ("hopper-e4m3-fp32", {"align_bits": 1, "subnormals": "flush"}),
    "ada-e4m3-rne": ("ada-e4m3-fp32", {"final_rounding": "rne"}),
    "hop-e4m3-mma-crz": ("hopper-e4m3-fp32-mma", {"c_rounding": "rz"}),
    "cdna3-late29": ("cdna3-fp16-fp32", {"late_frac_bits": 29}),
    "volta16-separate": ("volta-fp16-fp16", {"chaining": "separate"}),
    "bw16-zero": ("blackwell-fp16-fp16", {"zero_sign": "ieee"}),
    "htf32-flush": ("hopper-tf32-fp32", {"subnormals": "flush"}),
    "hop-c-after": ("hopper-fp16-fp32", {"c_placement": "after"}),
    "rdna3-rz": ("rdna3-fp16-fp32", {"final_rounding": "rz"}),
    "cdna2-keep": ("cdna2-fp16-fp32", {"subnormals": "keep"}),
    "nvfp4-align10": ("blackwell-nvfp4", {"align_bits": 10}),
    "mxf8-carry3-rne": ("blackwell-mxf8f6f4-e4m3", {"carry_bits": 3, "final_rounding": "rne"}),
    "cdna3-e4m3-rz": ("cdna3-e4m3fnuz-fp32", {"final_rounding": "rz"}),
    "rdna4-block2": ("rdna4-fp16-fp32", {"block_size": 2}),
    "hop-four-away": ("hopper-fp16-fp32", {"carry_bits": 2, "zero_sign": "ieee",
                                           "product_rounding": "in_format", "final_rounding": "rne"}),
}
UNEXPLAINED = ("hop-four-away",)
"""Units four parameters from their base: nothing within two parameters of
a shipped model explains them, so the verdict must be unexplained."""


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def unit_file(folder: Path, name: str, base: str, changes: dict) -> Path:
    lines = [f'base = "{base}"', f'name = "{name}"']
    for key, v in changes.items():
        value = f'"{v}"' if isinstance(v, str) else ('"none"' if v is None else str(v))
        lines += ["# source: a unit of bench_blind.py", f"{key} = {value}"]
    path = folder / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def one(name: str, folder: Path, prove: bool, equiv_timeout: float | None) -> dict:
    """Identify one unit blind; its figures."""
    from tcsmt import api
    from tcsmt.errors import UserError
    inside = name not in UNITS
    unit = name if inside else str(unit_file(folder, name, *UNITS[name]))
    out = folder / f"{name}-identified.toml"
    t0, c0 = time.monotonic(), _cpu()
    doc = api.identify(device=f"sim:{unit}", model_file=str(out), prove=prove)
    wall, cpu = time.monotonic() - t0, _cpu() - c0
    eq = "-"
    if equiv_timeout is not None and out.exists():
        try:
            eq = api.equiv(str(out), unit, timeout=equiv_timeout)["verdict"]
            eq = {"unsat": "proved", "sat": "DIFFERENT"}.get(eq, eq)
        except UserError as e:
            eq = f"no answer ({str(e)[:40]})"
    return {"name": name, "inside": inside, "doc": doc, "wall": wall, "cpu": cpu, "equiv": eq,
            "wrote": out.exists()}


def changed(name: str) -> str:
    """What a unit differs in from its base (a shipped model: nothing)."""
    if name not in UNITS:
        return "shipped, inside the plan's space"
    base, changes = UNITS[name]
    return f"{base} with " + ", ".join(f"{k} = {v}" for k, v in changes.items())


def wanted(r: dict) -> bool:
    """The verdict the judge asks for: unexplained, with rows and no model
    written, for UNEXPLAINED; else identified, and equivalent when equiv ran."""
    doc = r["doc"]
    if r["name"] in UNEXPLAINED:
        return doc["verdict"] == "unexplained" and bool(doc["phase2"].get("rows")) and not r["wrote"]
    return doc["verdict"] == "identified" and r["equiv"] in ("proved", "-")


def line(r: dict) -> str:
    doc, n = r["doc"], r["doc"]["launches"]
    what = doc["phase2"].get("describe", f"{len(doc['phase2'].get('rows', []))} rows shown")
    right = doc.get("check", {}).get("right")
    return (f"{r['name']:18s} {'ok ' if wanted(r) else 'BAD'} {doc['verdict']:11s} {r['equiv']:8s} "
            f"{r['wall']:7.1f} {r['cpu']:7.1f} {doc['phase1'].get('runs', 0):4d} "
            f"{n['phase1']:3d}+{n['phase2']:<3d} {n['vectors']:6d}  right={right}\n"
            f"{'':18s} changed: {changed(r['name'])}\n{'':18s} verdict: {what}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="units to run (default: INSIDE and UNITS)")
    ap.add_argument("--list", action="store_true", help="list the units and stop")
    ap.add_argument("--short", action="store_true", help="SHORT only, without the solvers")
    ap.add_argument("--no-prove", action="store_true", help="no solvers: rivals left undecided")
    ap.add_argument("--equiv-timeout", type=float, default=300.0)
    args = ap.parse_args()
    if args.list:
        for name in INSIDE:
            print(f"{name:20s} inside the plan's space")
        for name, (base, changes) in UNITS.items():
            print(f"{name:20s} {base} {changes}")
        return
    names = list(SHORT) if args.short else args.names or [*INSIDE, *UNITS]
    bad = [x for x in names if x not in UNITS and x not in INSIDE]
    if bad:
        raise SystemExit(f"error: unknown unit {bad[0]} (--list)")
    prove = not (args.short or args.no_prove)
    print(f"load average {os.getloadavg()[0]:.1f}; solvers {'on' if prove else 'off'}")
    print(f"{'unit':18s} ok? {'verdict':11s} {'equiv':8s}  wall s   CPU s runs launches vectors")
    got = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            got.append(one(name, Path(tmp), prove, args.equiv_timeout if prove else None))
            print(line(got[-1]), flush=True)
    out = [r["doc"]["verdict"] for r in got if not r["inside"]]
    ident, unexp = out.count("identified"), out.count("unexplained")
    bad = [r["name"] for r in got if not wanted(r)]
    print(f"outside the spaces: {ident} identified, {unexp} unexplained, {len(out) - ident - unexp} "
          f"other, of {len(out)}; as the judge wants: {len(got) - len(bad)} of {len(got)}"
          f"{' (not: ' + ', '.join(bad) + ')' if bad else ''}; load average {os.getloadavg()[0]:.1f}")
    if bad:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
