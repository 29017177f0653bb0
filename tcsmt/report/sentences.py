"""A property's result in sentences: which hypothesis the model asked
about takes, which vectors tell it from the others, what is proved, and
what is still open (``tcsmt find`` prints them after its table)."""

from __future__ import annotations

from tcsmt.enums import Verdict
from tcsmt.report.tables import own_hypothesis


def _names(ids: list[str]) -> str:
    return ids[0] if len(ids) == 1 else ", ".join(ids[:-1]) + " and " + ids[-1]


def _values(doc: dict, hid: str) -> str:
    """The values of the parameters the property asks about, under hypothesis ``hid``."""
    params = next(h["parameters"] for h in doc["hypotheses"] if h["id"] == hid)
    asked = doc["query"].get("parameters") or []
    shown = [f"{k} = {'unbounded' if k == 'carry_bits' and params.get(k) is None else params.get(k)}"
             for k in asked if k in params]
    return ", ".join(shown)


def monotonicity_lines(doc: dict) -> list[str]:
    model = doc["query"].get("model", "the model")
    if doc["verdict"] == Verdict.SAT:
        return [f"Answer: {model} is not monotone: vectors 0 and 1 are x <= y (elementwise, same signs), "
                "and d(x) > d(y)."]
    if doc["verdict"] == Verdict.UNSAT:
        return [f"Answer: {model} is monotone: no x <= y with d(x) > d(y) exists (proved by "
                f"{', '.join(doc['run'].get('proved_by', []))})."]
    return [f"No answer within the time limit: whether {model} is monotone is unknown "
            "(a longer --timeout may settle it)."]


def answer_lines(doc: dict) -> list[str]:
    """The answer of a property's result document in a few sentences."""
    q = doc["query"]
    ids = [h["id"] for h in doc["hypotheses"]]
    if len(ids) == 1:
        return monotonicity_lines(doc)
    model, own = q.get("model", "the model"), own_hypothesis(doc)
    lines = []
    if own is not None:
        lines.append(f"Answer: the model {model} says {own} ({_values(doc, own)}), of the "
                     f"hypotheses {_names(ids)}: {q.get('description', q['kind'])}.")
    separated = {tuple(p) for v in doc["vectors"] for p in v["separates"]}
    total = len(ids) * (len(ids) - 1) // 2
    if doc["vectors"]:
        fewest = len(doc["vectors"]) > 1 and q.get("one_vector_for_all_pairs") == Verdict.UNSAT
        lines.append(f"The {len(doc['vectors'])} vector(s) above separate {len(separated)} of the "
                     f"{total} pairs" + (" (no single vector can: proved)" if fewest else "")
                     + ": `tcsmt harness FILE` writes a program that runs them on a GPU, and the "
                     "bits it returns say which hypothesis the GPU follows.")
    proved = [p for p in doc.get("pairs") or [] if p["verdict"] == Verdict.UNSAT]
    open_ = [p for p in doc.get("pairs") or [] if p["verdict"] != Verdict.UNSAT]
    if proved and len(proved) == total:
        lines.append("No input tells any two of them apart: every pair is proved to give the same bits.")
    elif proved:
        lines.append(f"{len(proved)} pair(s) give the same bits on every input, proved (listed above): "
                     "no vector can tell them apart.")
    if open_:
        lines.append(f"{len(open_)} pair(s) are neither separated nor proved the same within the time "
                     "limit (listed above): a longer --timeout may settle them.")
    if not doc["vectors"] and not doc.get("pairs") and doc["verdict"] == Verdict.UNSAT:
        lines.append("No input tells any two of them apart: proved.")
    return lines
