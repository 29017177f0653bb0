"""What ``tcsmt check`` prints of its document (tcsmt.judge.check): each
set of rows, each model's count of rows matched (or, for --arch all, the
models ranked), and the first mismatching rows with the model's stages."""

from __future__ import annotations

from tcsmt.model.formats import describe, get_format
from tcsmt.observed.observations import FormatSet


def _inputs_text(fs: FormatSet, rec: dict) -> list[str]:
    """The non-zero products and c of a row, in a few words."""
    fa, fb, fc = fs.a, fs.b, fs.c
    terms = []
    for i, (x, y) in enumerate(zip(rec["a"], rec["b"])):
        xa, yb = int(x, 16), int(y, 16)
        xa, yb = fa.from_storage(xa), fb.from_storage(yb)
        if fa.classify(xa) != "zero" and fb.classify(yb) != "zero":
            terms.append(f"a{i}*b{i} = {describe(fa, xa)} x {describe(fb, yb)}")
    c = fc.from_storage(int(rec["c"], 16))
    return (terms or ["every product zero"]) + [f"c = {describe(fc, c)}"]


def text_lines(doc: dict) -> list[str]:
    """What ``tcsmt check`` prints."""
    lines = []
    for n, s in enumerate(doc["sets"]):
        f = s["formats"]
        fs = FormatSet(get_format(f.get("a") or f["in"]), get_format(f.get("b") or f["in"]),
                       get_format(f["c"]), get_format(f["out"]))
        where = " of " + s["device"] if s["device"] else ""
        kind = {"observations": "observations", "recorded": "recorded rows",
                "vectors": "vectors"}[s["what"]]
        lines.append(f"{doc['source']}: {s['rows']} {kind}{where}, "
                     f"{fs.a.name} x {fs.b.name} + {fs.c.name} -> {fs.out.name}, k = {s['k']}")
        if s["instruction"]:
            lines.append(f"  instruction {s['instruction']}")
        lines += [f"  note: {x}" for x in s["notes"]]
        mine = [m for m in doc["models"] if m["set"] == n]
        if doc.get("ranked"):
            lines += _ranking_lines(mine, fs)
        else:
            for m in mine:
                lines += _model_lines(m, fs)
        if not mine:
            lines.append("  no model checked computes these formats")
    lines += [f"note: {x}" for x in doc.get("skipped", [])]
    lines.append(f"checked in {doc['seconds']:.2f} s")
    return lines


def _ranking_lines(models: list[dict], fs: FormatSet) -> list[str]:
    """--arch all: every model of the rows' formats, most rows matched first."""
    judged = [m for m in models if "agrees_with" not in m]
    if not judged:
        return [x for m in models for x in _model_lines(m, fs)]
    pad = max(len(m["model"]) for m in judged)
    lines = [f"  {len(judged)} shipped models of these formats, ranked by rows matched "
             "(--arch MODEL explains one's mismatches):"]
    for n, m in enumerate(judged, 1):
        every = "  every row matches" if m["matched"] == m["rows"] else ""
        lines.append(f"  {n:>4}. {m['model']:<{pad}}  {m['matched']:>6}/{m['rows']}{every}")
    return lines


def _model_lines(m: dict, fs: FormatSet) -> list[str]:
    name = m["model"] + ("" if m["given_as"] == m["model"] else f" (for {m['given_as']})")
    if "agrees_with" in m:
        if not m["agrees_with"]:
            return [f"{name}: the file holds no expected outputs to compare with"]
        parts = ", ".join(f"{h} {n}/{m['rows']}" for h, n in m["agrees_with"].items())
        head = [f"{name}: gives the output each hypothesis expects on: {parts}"]
        if m["agrees_with_none"]:
            head.append(f"  {m['agrees_with_none']} vectors agree with no hypothesis; the first:")
        return head + [x for r in m["mismatches"] for x in mismatch_lines(r, fs, "expected")]
    verdict = "every row matches" if m["matched"] == m["rows"] else "MISMATCH"
    head = [f"{name}: {m['matched']}/{m['rows']} rows match ({verdict})"]
    if m["mismatches"]:
        head.append(f"  first mismatching rows ({len(m['mismatches'])} of "
                    f"{m['rows'] - m['matched']}), each with the model's stages:")
    return head + [x for r in m["mismatches"] for x in mismatch_lines(r, fs, "observed")]


def mismatch_lines(r: dict, fs: FormatSet, what: str) -> list[str]:
    """The text of one explain_row record: both outputs, the non-zero
    products and c, and the model's stages (those of zero products left
    out); ``what`` names the other output ("observed", "expected", "kernel")."""
    ulps = "" if r["ulps"] is None else f", {r['ulps']} ulp{'s' if r['ulps'] != 1 else ''} apart"
    lines = [f"  row {r['row']} (index {r['index']}): {what} {r[what]['hex']} = "
             f"{r[what]['decimal']}, model {r['model']['hex']} = {r['model']['decimal']}{ulps}"]
    lines += [f"    {x}" for x in _inputs_text(fs, r)]
    stages = [(s, t) for s, t in r["explain"] if not _zero_product(s, t)]
    lines += [f"      {stage:<20} {text}" for stage, text in stages]
    if len(stages) < len(r["explain"]):
        lines.append(f"      ({len(r['explain']) - len(stages)} stages of zero products left out)")
    return lines


def _zero_product(stage: str, text: str) -> bool:
    """A stage line of a zero product (left out of the text)."""
    return stage.startswith(("product ", "aligned product ")) and \
        text.startswith(("0 x 2^", "-0 x 2^", "0  (0 x"))

