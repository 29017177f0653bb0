"""The answers a result document holds, and the answers a newer document of
the same question would lose.

An answer is anything a solver or a search settled: the verdict, the one
vector for all pairs (found, or proved not to exist), a carry-bit proof's
lemmas, each pair of hypotheses (separated by a vector, proved
inseparable, or following from a proved pair) and each gap of a coverage
file (closed by a vector, proved inseparable). A rerun with a shorter
timeout, or with a solver that failed, may come back with "unknown" where
the file had an answer: such a document never replaces the file unless
asked (``--replace-answers``), whatever level of the file the answer is
at. Documents that ask different questions (other hypotheses, formats,
k or domain) are not compared: the new one answers another question.
"""

from __future__ import annotations

UNSETTLED = ("unknown", "open", "")
"""States that are no answer: no answer in time, a gap left open."""

QUESTION_KEYS = ("kind", "model", "k", "domain", "parameters", "suite", "space", "arch", "methods",
                 "reproduce", "readable", "question")
"""The keys of ``query`` that say what was asked (not how, not the answer)."""


def _dict(x) -> dict:
    return x if isinstance(x, dict) else {}


def _list(x) -> list:
    return x if isinstance(x, list) else []


def question(doc: dict) -> tuple:
    """What a document asks: its schema, query (QUESTION_KEYS), formats and
    the hypotheses with their parameters."""
    q, hyps = _dict(doc.get("query")), _list(doc.get("hypotheses"))
    return (doc.get("schema"), repr({k: q.get(k) for k in QUESTION_KEYS}), repr(doc.get("formats")),
            repr([(h.get("id"), h.get("parameters")) for h in hyps if isinstance(h, dict)]))


def _pair(p) -> str:
    return "|".join(map(str, p)) if isinstance(p, (list, tuple)) else str(p)


def answers(doc: dict) -> dict[str, str]:
    """Every answer of a document, by where it is: "verdict", "one vector
    for all pairs", "lemma N", "pair A|B" (separated, unsat, follows or
    unknown) and "gap SPACE PAIR" (a coverage file's closed, inseparable,
    unknown or open)."""
    out: dict[str, str] = {"verdict": str(doc.get("verdict", ""))}
    q = _dict(doc.get("query"))
    if "one_vector_for_all_pairs" in q:
        out["one vector for all pairs"] = str(q["one_vector_for_all_pairs"] or "")
    for n, v in _dict(q.get("lemmas")).items():
        out[f"lemma {n}"] = str(v)
    for p in doc.get("pairs") or []:
        if isinstance(p, dict):
            out[f"pair {_pair(p.get('pair'))}"] = str(p.get("verdict", ""))
    for v in doc.get("vectors") or []:
        for p in (v.get("separates") or []) if isinstance(v, dict) else []:
            out[f"pair {_pair(p)}"] = "separated"
    for u in doc.get("unseparated") or []:
        if isinstance(u, dict):
            out[f"gap {u.get('space')} {u.get('pair')}"] = str(u.get("status", ""))
    return out


def lost_answers(old: dict | None, new: dict) -> list[str]:
    """The answers of ``old`` that ``new`` (the same question) leaves
    unsettled, as "where: old answer"; empty when nothing is lost or the
    questions differ."""
    if not isinstance(old, dict) or question(old) != question(new):
        return []
    before, after = answers(old), answers(new)
    return [f"{where}: {was}" for where, was in before.items()
            if was not in UNSETTLED and where in after and after[where] in UNSETTLED]


def lost_text(path, lost: list[str], how: str = "--replace-answers") -> str:
    """One line: the file kept, what the new run did not settle, how to force."""
    shown = "; ".join(lost[:3]) + (f"; and {len(lost) - 3} more" if len(lost) > 3 else "")
    return (f"lost: {path} kept as it was: the new run left {len(lost)} of its answers unknown "
            f"({shown}); run again with a longer --timeout, or pass {how} to write the "
            "unknowns over them")
