"""Printing result documents as tables a person can read."""

from __future__ import annotations

import re
from fractions import Fraction

from rich import box
from rich.table import Table

from tcsmt.enums import Verdict
from tcsmt.model.names import short_format
from tcsmt.report.terminal import (
    Column,
    console,
    csv_text,
    fit_table,
    least_width,
    records,
    terminal_width,
    wrap,
)


def short_value(text: str) -> str:
    """An exact decimal as a short exact form: 2^-24, 3*2^-5, -(1-2^-24)."""
    if text in ("0", "-0", "inf", "-inf", "nan"):
        return text
    v = Fraction(text)
    sign = "-" if v < 0 else ""
    v = abs(v)
    if v.denominator == 1 and v.numerator < 10**6:
        return sign + str(v.numerator)
    e = v.numerator.bit_length() - v.denominator.bit_length()
    if Fraction(2) ** e > v:
        e -= 1
    if v == Fraction(2) ** e:
        return f"{sign}2^{e}"
    for k in range(1, 60):   # 2^e (1 + 2^-k) or 2^(e+1) (1 - 2^-k)
        if v == Fraction(2) ** e * (1 + Fraction(1, 2**k)):
            return f"{sign}(1+2^-{k})*2^{e}" if e else f"{sign}(1+2^-{k})"
        if v == Fraction(2) ** (e + 1) * (1 - Fraction(1, 2**k)):
            return f"{sign}(1-2^-{k})*2^{e + 1}" if e + 1 else f"{sign}(1-2^-{k})"
    m, ee = v, 0
    while m.denominator != 1:
        m *= 2
        ee -= 1
    while m.numerator % 2 == 0 and m.numerator > 1:
        m /= 2
        ee += 1
    if ee == 0:
        return sign + str(m.numerator)
    return f"{sign}{m.numerator}*2^{ee}"


def inputs_text(v: dict) -> str:
    """The non-zero products a_i x b_i and c of a vector record."""
    parts = []
    for i, (x, y) in enumerate(zip(v["a"], v["b"])):
        if x["decimal"] in ("0", "-0") or y["decimal"] in ("0", "-0"):
            if x["decimal"] in ("0", "-0") and y["decimal"] in ("0", "-0"):
                continue
        parts.append(f"a{i}*b{i} = {short_value(x['decimal'])} x {short_value(y['decimal'])}")
    parts.append(f"c = {short_value(v['c']['decimal'])}")
    for side in ("scale_a", "scale_b"):
        if side in v:
            parts.append(f"{side} = " + ", ".join(short_value(x["decimal"]) for x in v[side]))
    if "mask" in v:
        parts.append("mask = " + "".join(str(x) for x in v["mask"]))
    return "\n".join(parts)


def separates_text(v: dict, ids: list[str], labels: dict[str, str] | None = None) -> str:
    """The pairs a vector separates: "every pair", "every pair but a|b", or
    the list (each hypothesis by its label)."""
    name = (labels or {}).get
    seps = [tuple(p) for p in v["separates"]]
    if not seps:
        return "-"
    every = [(a, b) for i, a in enumerate(ids) for b in ids[i + 1:]]
    missing = [p for p in every if p not in seps]
    if len(every) > 1 and not missing:
        return "every pair"
    pairs = missing if len(every) > 3 and len(missing) < len(seps) / 2 else seps
    text = ", ".join(f"{name(a, a)}|{name(b, b)}" for a, b in pairs)
    return ("every pair but " + text) if pairs is missing else text


LABEL_LIMIT = 12
"""Hypothesis ids longer than this are shown by a short label, with a legend."""


def own_hypothesis(doc: dict) -> str | None:
    """The id of the hypothesis that is the asked model itself: the one
    whose spec sets a subset of what every other's sets (the others each
    change it), when there is exactly one."""
    sets = {h["id"]: set(h.get("spec", "").split(" --set ")[1:]) for h in doc["hypotheses"]}
    if len(sets) < 2 or doc["query"].get("kind") in ("diff", "equiv"):
        return None
    own = [i for i, s in sets.items() if all(s < t for j, t in sets.items() if j != i)]
    return own[0] if len(own) == 1 else None


def _tokens(text: str) -> list[str]:
    return [t for t in re.split(r"[\[\],\s]+|(?<=[a-z0-9])-(?=[a-z])", text) if t]


def hypothesis_labels(ids: list[str]) -> dict[str, str]:
    """A short label for each hypothesis id: the ids themselves when all
    are short; else what tells them apart (tokens every id shares left out,
    and a key=value's key when every id sets that key); else A, B, C..."""
    if all(len(i) <= LABEL_LIMIT for i in ids):
        return {i: i for i in ids}
    toks = [_tokens(i) for i in ids]
    common = set.intersection(*map(set, toks)) if toks else set()
    keys = [{t.split("=", 1)[0] for t in ts if "=" in t} for ts in toks]
    shared = set.intersection(*keys) if keys else set()
    short = ["-".join(t.split("=", 1)[1] if t.split("=", 1)[0] in shared else t
                      for t in ts if t not in common) for ts in toks]
    if all(short) and len(set(short)) == len(short) and all(len(x) <= LABEL_LIMIT + 4 for x in short):
        return dict(zip(ids, short))
    letters = [chr(ord("A") + n) if n < 26 else f"H{n}" for n in range(len(ids))]
    return dict(zip(ids, letters))


def legend_lines(doc: dict, labels: dict[str, str]) -> list[str]:
    """What each short label stands for, and which hypothesis is the model's own."""
    lines = [f"{lab}: {i}" for i, lab in labels.items() if lab != i]
    own = own_hypothesis(doc)
    if own is not None:
        lines.append(f"*: the value of the model asked about ({doc['query'].get('model', '')})")
    return lines


def _title(doc: dict) -> str:
    q = doc["query"]
    on = f"  on {q['model']}" if q.get("model") else ""
    return f"{q.get('kind')}{on}  (k={q.get('k')})"


INPUTS = Column("inputs", wrap=True, min=24)


def _shown(doc: dict, labels: dict[str, str]) -> dict[str, str]:
    own = own_hypothesis(doc)
    return {i: lab + (" *" if i == own else "") for i, lab in labels.items()}


def wide_result_table(doc: dict, labels: dict[str, str]) -> tuple[list[Column], list[list[str]]]:
    """A column per hypothesis: its output (hex over value) for each vector."""
    ids = [h["id"] for h in doc["hypotheses"]]
    shown = _shown(doc, labels)
    cols = [Column("#", justify="right"), INPUTS, *(Column(shown[h]) for h in ids),
            Column("separates", wrap=True)]
    rows = [[str(n), inputs_text(v),
             *(f"{v['outputs'][h]['hex']}\n{short_value(v['outputs'][h]['decimal'])}" for h in ids),
             separates_text(v, ids, labels)] for n, v in enumerate(doc["vectors"])]
    return cols, rows


def long_result_table(doc: dict, labels: dict[str, str]) -> tuple[list[Column], list[list[str]]]:
    """A line per hypothesis inside each vector's row: fits narrow
    terminals whatever the number of hypotheses (the value column goes first)."""
    ids = [h["id"] for h in doc["hypotheses"]]
    shown = _shown(doc, labels)
    cols = [Column("#", justify="right"), INPUTS, Column("hypothesis"), Column("d"), Column("value", 1)]
    rows = []
    for n, v in enumerate(doc["vectors"]):
        outs = [v["outputs"][h] for h in ids]
        rows.append([str(n), inputs_text(v) + "\n\nseparates " + separates_text(v, ids, labels),
                     "\n".join(shown[h] for h in ids), "\n".join(o["hex"] for o in outs),
                     "\n".join(short_value(o["decimal"]) for o in outs)])
    return cols, rows


def pair_lines(doc: dict) -> list[str]:
    """The verdict on every pair no vector separates."""
    lines = []
    details = doc.get("run", {}).get("pairs", [])
    for pr, det in zip(doc.get("pairs", []), details):
        a, b = pr["pair"]
        how = f"proved inseparable by {', '.join(det['proved_by'])}" if pr["verdict"] == Verdict.UNSAT \
            else f"{pr['verdict']}: {det['reason']}"
        lines.append(f"  {a} | {b}: {how}")
    return lines


def result_renderable(doc: dict, width: int):
    """The vectors of a result as the widest form that fits ``width``
    without cutting a word: a column per hypothesis, a line per hypothesis
    in each vector's row, or a few lines per vector."""
    labels = hypothesis_labels([h["id"] for h in doc["hypotheses"]])
    kw = {"title": _title(doc), "show_lines": True, "box": box.HEAVY_HEAD, "pad_edge": True}
    cols, rows = wide_result_table(doc, labels)
    if least_width(cols, rows, **kw) <= width:
        return fit_table(cols, rows, width, **kw)
    cols, rows = long_result_table(doc, labels)
    for columns in ([*cols[:-1], Column("value")], cols):     # the value column wrapped around first
        table = fit_table(columns, rows, width, **kw)
        if isinstance(table, Table):
            return table
    return records([Column("vector"), *cols[1:]], [[f"vector {r[0]}", *r[1:]] for r in rows], width)


def result_table(doc: dict, width: int | None = None, pairs: bool = True) -> None:
    """Each vector, the output each hypothesis predicts, and which pairs it
    separates (a column per hypothesis where that fits ``width``, else a
    line per hypothesis, else lines per vector), the legend of the labels;
    then (``pairs``) the pairs no vector separates, with their verdicts."""
    width = width or terminal_width()
    con = console(width)
    if doc["vectors"]:
        con.print(result_renderable(doc, width))
        labels = hypothesis_labels([h["id"] for h in doc["hypotheses"]])
        for line in legend_lines(doc, labels):
            for part in wrap(line, width, "", "    "):
                con.print(part, soft_wrap=True)
    for line in pair_lines(doc) if pairs else []:
        for part in wrap(line, width, "", "    "):
            con.print(part, soft_wrap=True)


def result_csv(doc: dict) -> str:
    """A row per vector: a, b and c as hex, each hypothesis's output, the pairs separated."""
    ids = [h["id"] for h in doc["hypotheses"]]
    rows = [[n, " ".join(x["hex"] for x in v["a"]), " ".join(y["hex"] for y in v["b"]), v["c"]["hex"],
             *(v["outputs"][h]["hex"] for h in ids), " ".join(f"{a}|{b}" for a, b in v["separates"])]
            for n, v in enumerate(doc["vectors"])]
    return csv_text(["vector", "a", "b", "c", *ids, "separates"], rows)


def vector_table(doc: dict, index: int = 0, width: int | None = None):
    """One vector: the inputs, then c and d under each hypothesis, with
    their exact decimals (wrapped at spaces only: a table too narrow for
    the decimals prints them as lines)."""
    v = doc["vectors"][index]
    cols = [Column(""), Column("hex"), Column("a", wrap=True), Column("hex"), Column("b", wrap=True)]
    rows = [[f"{i}", x["hex"], x["decimal"], y["hex"], y["decimal"]]
            for i, (x, y) in enumerate(zip(v["a"], v["b"]))]
    rows += [[f"scale {j}", x["hex"], short_value(x["decimal"]), y["hex"], short_value(y["decimal"])]
             for j, (x, y) in enumerate(zip(v.get("scale_a", []), v.get("scale_b", [])))]
    rows.append(["c", v["c"]["hex"], v["c"]["decimal"], "", ""])
    for h in doc["hypotheses"]:
        d = v["outputs"][h["id"]]
        rows.append([f"d {h['id']}", d["hex"], d["decimal"], "", h["label"]])
    return fit_table(cols, rows, width or terminal_width(), show_header=True)


def formula_words(tag: str) -> str:
    """What found a vector, in words: "pool", "earlier result", or
    "SOLVER (FORMULA)" where FORMULA is "full" or a restriction
    ("support-2": two products non-zero, the others +0; "bits-4": every
    input with at most 4 significant bits)."""
    if tag == "pool":
        return "the candidate pool (no solver)"
    if tag == "earlier result":
        return "an earlier result"
    solver, _, formula = tag.partition(" (")
    formula = formula.rstrip(")")
    words = []
    for part in formula.split("/"):
        if part.startswith("support-"):
            words.append(f"{part.split('-')[1]} non-zero product(s)")
        elif part.startswith("bits-"):
            words.append(f"at most {part.split('-')[1]} significant bits")
        elif part == "full":
            words.append("the full formula")
        elif part:
            words.append(part)
    return f"{solver} on " + ", ".join(words) if words else solver


def separation_summary(doc: dict) -> list[str]:
    """The lines that say what a diff or equiv found."""
    ids = [h["id"] for h in doc["hypotheses"]]
    run, k = doc["run"], doc["query"]["k"]
    if "pairs" not in doc:                      # equiv: one question about two models
        s = run["solver"]
        who = f"{s['name']} {s['version']}, {run['seconds']:.2f} s"
        if doc["verdict"] == Verdict.UNSAT:
            return [f"{' and '.join(ids)} agree on every input of the domain (k={k}): "
                    f"proved by {' and '.join(run['proved_by'])} ({who})"]
        return [f"{' and '.join(ids)} differ (k={k}; found by {who}, "
                f"{formula_words(s['name'] + ' (' + s['formula'] + ')')}; replayed on the concrete model):"]
    lines = []
    if doc["vectors"]:
        done = {tuple(p) for v in doc["vectors"] for p in v["separates"]}
        total = len(ids) * (len(ids) - 1) // 2
        how = "; ".join(sorted(set(formula_words(t) for t in run.get("found_by", []))))
        lines.append(f"{', '.join(ids)} differ (k={k}): {len(doc['vectors'])} vector(s) separate "
                     f"{len(done)} of {total} pair(s), found by {how}, shrunk and replayed on the "
                     f"concrete models ({run['seconds']:.2f} s):")
    details = {tuple(d["pair"]): d for d in run.get("pairs", [])}
    for pr in doc["pairs"]:
        a, b = pr["pair"]
        det = details.get((a, b), {})
        if det.get("proved_by") == ["identical circuits"]:
            lines.append(f"{a} and {b} are identical circuits: every parameter that changes the "
                         "arithmetic is equal, so no input separates them (no solver needed)")
        elif pr["verdict"] == Verdict.UNSAT:
            lines.append(f"{a} and {b} agree on every input of the domain (k={k}): proved by "
                         f"{' and '.join(det.get('proved_by', []))}")
        else:
            lines.append(f"{a} and {b}: {pr['verdict']} ({det.get('reason', '')})")
    return lines


# ---------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------

_OPS = re.compile(r"(wgmma|tcgen05\.mma\.sp|tcgen05\.mma|mma\.sp|mma\.sync|wmma|v_mfma)")
_KIND = re.compile(r"kind::(\w+)|_(\d+x\d+x\d+)_")


def instruction_short(text: str) -> str:
    """A model's instruction in a word or two: "mma.sync", "wgmma",
    "mma.sync, wgmma" (either gives the same bits), "tcgen05 f8f6f4",
    "v_mfma 32x32x8"; the model file has the whole text."""
    parts = []
    for alt in text.split(" / "):
        op = _OPS.search(alt)
        if not op:
            continue
        name = op.group(1).replace("tcgen05.mma", "tcgen05")
        kind = _KIND.search(alt)
        if kind and " / " not in text:
            name += f" {kind.group(1) or kind.group(2)}"
        parts.append(name)
    return ", ".join(parts) or (text.split(" ")[0] if text else "-")


def final_rounding_text(m) -> str:
    """The rounding of a model's result in a few words."""
    if m.fout.is_integer:
        if m.overflow == "wrap":
            return "wrap"
        return "saturate" if m.saturation == "final" else "saturate every add"
    if m.c_placement == "late":
        return f"rd to {m.late_frac_bits} bits, then {m.final_rounding}"
    if m.align_rounding == "exact":
        return f"exact sum, {m.final_rounding}"
    if m.normalisation == "every_add":
        return f"{m.align_rounding} every add"
    return m.final_rounding + (f" to e8m{m.final_frac_bits}" if m.final_frac_bits else "")


MODEL_COLUMNS = [Column("model"), Column("instruction", 4, wrap=True), Column("formats", wrap=True),
                 Column("block", justify="right"), Column("align", justify="right"),
                 Column("carry", justify="right"), Column("rounding", wrap=True),
                 Column("scales", 3, wrap=True), Column("arch", 2), Column("devices", 1, wrap=True)]
MODEL_NOTE = ["* the architecture's default model (--arch ARCH picks it; --formats IN:OUT another).",
              "~ from sources, not measured: no run of the unit has checked it (docs/units-next.md).",
              "block: products summed before one normalisation; align: fraction bits kept below the "
              "accumulator's last bit when terms are aligned; carry: integer bits above the largest "
              "term (- no limit); rounding: of the result; scales: scale format / terms per scale."]


def model_note_lines(width: int) -> list[str]:
    """The legend of the models' table, wrapped within ``width``."""
    return [part for line in MODEL_NOTE for part in wrap(line, width, "", "")]


def formats_text(m) -> str:
    """IN:OUT (A,B:OUT when a and b differ), c's format where it is not
    OUT's, and a sparse model's pattern (2:4)."""
    c = "" if m.c_format == m.out_format else f" c {short_format(m.c_format)}"
    return m.formats_label + c + ("" if m.sparsity == "dense" else f" {m.sparsity}")


def model_instruction(m) -> str:
    """The instruction in a word or two, without the kind that the model's name already says."""
    text = instruction_short(m.instruction)
    kind = text.partition(" ")[2]
    return text.partition(" ")[0] if kind and kind in m.name else text


def scales_text(m) -> str:
    """"-", or the scale format and the terms each scale covers (ue8m0/32),
    with the exact groups of a grouped model."""
    if m.scale_format is None:
        return "-"
    groups = f", groups of {m.group_size}" if m.group_size > 1 else ""
    return f"{short_format(m.scale_format)}/{m.scale_block}{groups}"


def model_rows(models) -> list[list[str]]:
    """A row per model, in MODEL_COLUMNS' order."""
    return [[m.name + (" *" if m.default else "") + (" ~" if m.from_sources else ""),
             model_instruction(m),
             formats_text(m), str(m.block_size), "-" if m.fout.is_integer else str(m.align_bits),
             "-" if m.carry_bits is None else str(m.carry_bits), final_rounding_text(m),
             scales_text(m), m.arch, ", ".join(m.devices[:3])] for m in models]


def models_table(models, width: int) -> Table:
    """The models' table within ``width`` (no scales column when no model has scales)."""
    rows = [[*r[:2], r[2].replace(",", ", "), *r[3:]] for r in model_rows(models)]   # wraps after a comma
    cols = MODEL_COLUMNS
    if all(r[7] == "-" for r in rows):
        cols, rows = cols[:7] + cols[8:], [r[:7] + r[8:] for r in rows]
    return fit_table(cols, rows, width)


def models_csv(models) -> str:
    return csv_text([c.header for c in MODEL_COLUMNS], model_rows(models))


# ---------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------

def _property_rows(rows: list[dict], arch: str) -> list[list[str]]:
    out = []
    for row in rows:
        if "not_applicable" in row:
            hs = f"(not for {arch}: {row['not_applicable']})"
        else:
            hs = ", ".join(row["hypotheses"]) or "x <= y with f(x) > f(y), or a proof of none"
        out.append([row["property"], hs, row["description"]])
    return out


def properties_table(rows: list[dict], arch: str, width: int) -> Table:
    """A row per property of ``tcsmt.api.properties``: its hypotheses and description."""
    cols = [Column("property"), Column(f"hypotheses (on {arch})", wrap=True),
            Column("description", wrap=True)]
    return fit_table(cols, _property_rows(rows, arch), width)


def properties_csv(rows: list[dict], arch: str) -> str:
    return csv_text(["property", "hypotheses", "description"], _property_rows(rows, arch))
