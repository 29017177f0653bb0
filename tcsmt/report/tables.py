"""Printing result documents as tables a person can read."""

from __future__ import annotations

from fractions import Fraction

from rich.console import Console
from rich.table import Table

from tcsmt.enums import Verdict


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
    return "\n".join(parts)


def result_table(doc: dict, console: Console | None = None) -> None:
    """Each vector, the output each hypothesis predicts, and which pairs it
    separates; then the pairs no vector separates, with their verdicts."""
    console = console or Console(width=160)
    ids = [h["id"] for h in doc["hypotheses"]]
    t = Table(title=f"{doc['query'].get('kind')}  on {doc['query'].get('model', '')}  "
                    f"(k={doc['query'].get('k')})", show_lines=True, header_style="bold")
    t.add_column("#", justify="right")
    t.add_column("inputs")
    for hid in ids:
        t.add_column(hid)
    t.add_column("separates")
    for n, v in enumerate(doc["vectors"]):
        outs = [f"{v['outputs'][h]['hex']}\n{short_value(v['outputs'][h]['decimal'])}" for h in ids]
        seps = ", ".join(f"{a}|{b}" for a, b in v["separates"]) or "-"
        t.add_row(str(n), inputs_text(v), *outs, seps)
    console.print(t)
    details = doc.get("run", {}).get("pairs", [])
    for pr, det in zip(doc.get("pairs", []), details):
        a, b = pr["pair"]
        how = f"proved inseparable by {', '.join(det['proved_by'])}" if pr["verdict"] == Verdict.UNSAT \
            else f"{pr['verdict']}: {det['reason']}"
        console.print(f"  {a} | {b}: {how}")


def vector_table(doc: dict, index: int = 0) -> Table:
    """One vector: the inputs, then c and d under each hypothesis (exact
    decimals, folded rather than cut when the terminal is narrow)."""
    v = doc["vectors"][index]
    t = Table(show_header=True, header_style="bold")
    t.add_column("")
    for col in ("hex", "a", "hex", "b"):
        t.add_column(col, overflow="fold")
    for i, (x, y) in enumerate(zip(v["a"], v["b"])):
        t.add_row(f"{i}", x["hex"], x["decimal"], y["hex"], y["decimal"])
    for j, (x, y) in enumerate(zip(v.get("scale_a", []), v.get("scale_b", []))):
        t.add_row(f"scale {j}", x["hex"], short_value(x["decimal"]), y["hex"], short_value(y["decimal"]))
    t.add_row("c", v["c"]["hex"], v["c"]["decimal"], "", "", end_section=True)
    for h in doc["hypotheses"]:
        d = v["outputs"][h["id"]]
        t.add_row(f"d {h['id']}", d["hex"], d["decimal"], "", h["label"])
    return t


def separation_summary(doc: dict) -> list[str]:
    """The lines that say what a diff or equiv found."""
    labels = [h["label"] for h in doc["hypotheses"]]
    run, k = doc["run"], doc["query"]["k"]
    s = run["solver"]
    who = f"{s['name']} {s['version']}, {run['seconds']:.2f} s"
    if doc["verdict"] == Verdict.UNSAT:
        return [f"{' and '.join(labels)} agree on every input of the domain (k={k}): "
                f"proved by {' and '.join(run['proved_by'])} ({who})"]
    return [f"{' and '.join(labels)} differ (k={k}; found by {who}, formula {s['formula']}; "
            "replayed on the concrete model):"]
