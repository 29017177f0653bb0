"""One page per architecture, from its model files (tcsmt.model.catalogue)
and the committed results (results/): the models, what the results
establish (vectors, proofs, the published tests they settle), and the
open questions with the run that would settle each."""

from __future__ import annotations

import json
from collections import defaultdict
from functools import cache
from pathlib import Path

from tcsmt.model import catalogue
from tcsmt.observed.recorded import KNOWN_PROBLEMS
from tcsmt.observed.validated import CHECKED_BEYOND, LIMITS, limited
from tcsmt.report.tables import MODEL_COLUMNS, model_rows, own_hypothesis

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"
HWDATA = ROOT / "data" / "hwdata"
LONGER = 600          # the timeout that the run settling an unknown answer asks for


def _read(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


@cache
def _files() -> dict[str, list[tuple[Path, dict]]]:
    """Every committed result file, by the schema it follows."""
    out: dict[str, list[tuple[Path, dict]]] = defaultdict(list)
    for path in sorted(RESULTS.rglob("*.json")):
        doc = _read(path)
        if isinstance(doc, dict) and ".cache" not in path.parts:
            out[str(doc.get("schema", "")).split("/")[0]].append((path, doc))
    return out


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(_cell(c) for c in r) + " |" for r in rows), ""]


def models_table(models) -> list[str]:
    """The models as `tcsmt models` lists them, in Markdown."""
    rows = model_rows(models)
    cols = [c.header for c in MODEL_COLUMNS][:8]
    keep = [i for i in range(8) if i != 7 or any(r[7] != "-" for r in rows)]
    return _table([cols[i] for i in keep], [[r[i] for i in keep] for r in rows])


# ---------------------------------------------------------------------------
# What the result files of one model say
# ---------------------------------------------------------------------------

def _pairs(doc: dict) -> tuple[int, int, int, int]:
    """(pairs, separated by the vectors, proved inseparable, unknown)."""
    n = len(doc["hypotheses"])
    total = n * (n - 1) // 2
    separated = len({tuple(p) for v in doc["vectors"] for p in v["separates"]})
    proved = sum(p["verdict"] == "unsat" for p in doc.get("pairs") or [])
    unknown = sum(p["verdict"] == "unknown" for p in doc.get("pairs") or [])
    return total, separated, proved, unknown


def property_row(path: Path, doc: dict) -> list[str]:
    """property | hypotheses (the model's own in bold) | answer | file."""
    own = own_hypothesis(doc)
    hyps = ", ".join(f"**{h['id']}**" if h["id"] == own else h["id"] for h in doc["hypotheses"])
    total, sep, proved, unknown = _pairs(doc)
    if len(doc["hypotheses"]) == 1:          # monotonicity: a witness x <= y with f(x) > f(y), or a proof
        answer = {"sat": "not monotone: the 2 vectors are x <= y (elementwise, same signs) with d(x) > d(y)",
                  "unsat": "monotone: proved", "unknown": "unknown: no answer within the time limit"}
        return [doc["query"]["kind"], "-", answer[doc["verdict"]], f"`{_rel(path)}`"]
    if doc["verdict"] == "unknown" and not doc["vectors"]:
        answer = "unknown: no answer within the time limit"
    else:
        parts = [f"{len(doc['vectors'])} vector(s) separate {sep} of {total} pair(s)"]
        if proved:
            parts.append(f"{proved} proved inseparable")
        if unknown:
            parts.append(f"{unknown} unknown")
        answer = "; ".join(parts) if doc["vectors"] else \
            ("no input separates them: proved" if doc["verdict"] == "unsat" else doc["verdict"])
    return [doc["query"]["kind"], hyps, answer, f"`{_rel(path)}`"]


def proof_lines(path: Path, doc: dict) -> list[str]:
    q, run = doc["query"], doc["run"]
    who = ", ".join(run.get("proved_by", [])) or "no solver"
    lines = [f"**Carry bits** (`{_rel(path)}`): {q['fewest']} carry bits suffice for a block of "
             f"{q['k']} terms: no finite input overflows a {q['fewest']}-carry-bit register "
             f"(proved by {who})."]
    if doc["vectors"]:
        lines[0] += (f" With {q['fewest'] - 1} the witness in the file gives other bits "
                     "(replayed on the concrete model).")
    return lines + [""]


def open_questions(path: Path, doc: dict) -> list[str]:
    """An item per answer the file lacks: what is unknown, why, and the run that would settle it."""
    q = doc["query"]
    again = f"`tcsmt find {q['kind']} --arch {q['model']} --timeout {LONGER}`"
    details = {tuple(d["pair"]): d for d in doc["run"].get("pairs", []) or []}
    out = []
    if doc["verdict"] == "unknown" and not doc["vectors"]:
        reasons = sorted({r.get("reason", "") for r in doc["run"]["solver"].get("runs", [])} - {""})
        out.append(f"- {q['model']}, {q['kind']}: no vector and no proof within the time limit "
                   f"({'; '.join(reasons[:2]) or 'unknown'}). Settled by {again}.")
    for p in doc.get("pairs") or []:
        if p["verdict"] == "unknown":
            a, b = p["pair"]
            why = details.get((a, b), {}).get("reason", "")
            out.append(f"- {q['model']}, {q['kind']}: {a} against {b} is neither separated nor proved "
                       f"inseparable ({why}). Settled by {again}.")
    return out


# ---------------------------------------------------------------------------
# One architecture
# ---------------------------------------------------------------------------

def _of_arch(arch: str, schema: str) -> list[tuple[Path, dict]]:
    names = catalogue.by_name()
    out = []
    for path, doc in _files()[schema]:
        m = names.get(doc.get("query", {}).get("model", ""))
        if m is not None and m.arch == arch:
            out.append((path, doc))
    return out


def known_sections(arch: str) -> tuple[list[str], list[str]]:
    """The sections on each model with results, and the open questions they leave."""
    by_model: dict[str, list[tuple[Path, dict]]] = defaultdict(list)
    for path, doc in _of_arch(arch, "tcsmt-result"):
        by_model[doc["query"]["model"]].append((path, doc))
    lines, questions = [], []
    names = catalogue.by_name()
    for name in sorted(by_model, key=lambda n: (not names[n].default, n)):
        files = by_model[name]
        lines += [f"### {name}", ""]
        proofs = [(p, d) for p, d in files if d["query"]["kind"] == "prove carry-bits"]
        rows = [property_row(p, d) for p, d in files if d["query"]["kind"] != "prove carry-bits"]
        for p, d in proofs:
            lines += proof_lines(p, d)
        if rows:
            lines += ["The questions asked of it, each hypothesis a value of the parameter asked about "
                      "(the model's own in bold). A vector separates a pair when their outputs differ; "
                      "`tcsmt replay FILE` runs a file's vectors through every hypothesis again.", ""]
            lines += _table(["property", "hypotheses", "answer", "file"], rows)
        for p, d in files:
            questions += open_questions(p, d)
    return lines, questions


def recorded_lines(arch: str) -> list[str]:
    """The recordings of this architecture's devices in data/hwdata and results/hardware."""
    lines = []
    for dev in sorted(HWDATA.iterdir()) if HWDATA.is_dir() else []:
        if dev.is_dir() and catalogue.arch_for_device(dev.name) == arch:
            folders = ", ".join(sorted(f.name for f in dev.iterdir() if f.is_dir()))
            lines.append(f"- `data/hwdata/{dev.name}/` ({folders}): recorded by Khattak and Mikaitis; "
                         f"`tcsmt conformance data/hwdata/{dev.name}` replays every row through the "
                         "models.")
    for path, doc in _files()["tcsmt-observations"]:
        dev = doc.get("device", {})
        name = dev.get("name", "") if isinstance(dev, dict) else str(dev)
        if any(catalogue.arch_for_device(w) == arch for w in name.replace("NVIDIA ", "").split()):
            lines.append(f"- `{_rel(path)}`: {len(doc.get('observations', []))} observations of "
                         f"{name} (`{doc.get('instruction', '')}`); `tcsmt check {_rel(path)} "
                         f"--arch {arch}` compares them with the model.")
    return lines


def coverage_lines(arch: str) -> tuple[list[str], list[str]]:
    """What the published test suites establish on this architecture's devices."""
    lines, questions = [], []
    for path, doc in _files()["tcsmt-coverage"]:
        spaces = [s for s in doc["spaces"] if catalogue.arch_for_device(s["device"]) == arch]
        if not spaces:
            continue
        ids = {s["space"] for s in spaces}
        un = [u for u in doc["unseparated"] if u["space"] in ids]
        sep = len({(s, pair) for v in doc["suite_vectors"] for s in ids
                   for pair in v["separates"].get(s, [])})
        failing = [f for f in doc["expectations"]["failing"] if f["device"] in {s["device"] for s in spaces}]
        closed = sum(u["status"] == "closed" for u in un)
        proved = sum(u["status"] == "inseparable" for u in un)
        lines.append(f"- `{_rel(path)}` ({doc['query']['suite']}): on {', '.join(sorted(ids))}, the "
                     f"published vectors separate {sep} pair(s) of hypotheses; of the {len(un)} they "
                     f"leave, {closed} are separated by new vectors in the file and {proved} proved "
                     f"inseparable. {len(failing)} published expectation(s) fail on the model.")
        for f in failing:
            lines.append(f"    - {f['vector']} on {f['device']}: the paper says {f['paper']}; "
                         f"{f['model']} gives {f['model_gives']}.")
        for u in un:
            if u["status"] not in ("closed", "inseparable"):
                questions.append(f"- {u['space']}: {u['pair']} ({u['status']}): no published vector "
                                 f"separates it and no new vector or proof was found. Settled by "
                                 f"`tcsmt coverage {doc['query']['suite']} --timeout {LONGER}`.")
        if closed:
            questions.append(f"- Which hypothesis {', '.join(sorted(ids))} follow(s) on the {closed} "
                             f"pair(s) the published tests leave open: settled on the device by the "
                             f"new vectors of `{_rel(path)}` (`tcsmt harness {_rel(path)} --formats "
                             "IN:OUT -o probe.cu`, build and run it, then `tcsmt check` its output).")
    return lines, questions


def limit_lines(arch: str) -> list[str]:
    """The known limits of the recordings and of what the models were validated on."""
    out = []
    models = catalogue.models_of(arch)
    for lim in LIMITS:
        covered = [m.name for m in models if limited(lim, m)]
        if covered:
            out.append(f"- {', '.join(covered)}: validated only with {lim.what} ({lim.recorded}); "
                       f"a prediction outside it is unchecked. `{lim.option}` keeps a search inside; "
                       "a probe of the instruction with other inputs settles it.")
        beyond = {m.name: CHECKED_BEYOND[lim.what][m.name] for m in models
                  if lim.covers(m) and not limited(lim, m)}
        if beyond:
            out.append(f"- {', '.join(beyond)}: checked beyond {lim.what} too, on every row of "
                       + ", ".join(f"`{p}`" for p in beyond.values()) + ".")
    for kp in KNOWN_PROBLEMS:
        if kp.arch == arch:
            hyp = f" (hypothesis used: {kp.hypothesis})" if kp.hypothesis else ""
            out.append(f"- Recorded {kp.folder or 'fp8'} rows, {kp.output} output: {kp.why}{hyp}.")
    return out


def compare_lines(arch: str) -> list[str]:
    out = []
    for path, doc in _files()["tcsmt-compare"]:
        q = doc["query"]
        if q.get("arch") != arch:
            continue
        answer = {"sat": "yes: a witness, replayed on the concrete model",
                  "unsat": "no: proved", "unknown": "unknown within the time limit"}[doc["verdict"]]
        how = " (the outputs fixed to Table 5 of VLPG)" if "reproduce" in path.stem else ""
        out.append(f"- k = {q['k']}{how}: {q['question']}? {answer} (`{_rel(path)}`).")
    return out


def arch_page(arch: str) -> str:
    models = catalogue.models_of(arch)
    default = next((m for m in models if m.default), models[0])
    known, questions = known_sections(arch)
    recorded = recorded_lines(arch)
    coverage, more = coverage_lines(arch)
    limits = limit_lines(arch)
    lines = [f"# {arch}", "",
             f"*Generated from `models/{arch}-*.toml` and `results/` when this site was built.*", "",
             f"{default.description}. Devices: {', '.join(default.devices) or 'none named'}. "
             f"`--arch {arch}` picks `{default.name}`; `--arch {arch} --formats IN:OUT` another of "
             f"its {len(models)} model(s).", "",
             "## Models", "", *models_table(models),
             "`tcsmt models --arch " + arch + " --wide` lists them with every column; each value in a "
             "model file names its source (`tcsmt params` explains every parameter).", ""]
    lines += ["## Recorded on hardware", ""]
    lines += (recorded or ["No public recording of this architecture's outputs: every vector below is "
                           "a prediction of the model. `tcsmt harness FILE` writes a probe that runs a "
                           "result file's vectors on a device and says which hypothesis it followed."])
    lines += [""]
    if coverage:
        lines += ["### Published tests", "", *coverage, ""]
    lines += ["## What the results establish", "", *(known or ["No result files for this architecture."]), ""]
    cmp = compare_lines(arch)
    if cmp:
        lines += ["### Error-corrected GEMM: can Ootomo-Yokota be less accurate than Markidis?", "",
                  *cmp, ""]
    lines += ["## Open questions", ""]
    items = questions + more + limits
    lines += items or ["None left by the committed results."]
    return "\n".join(lines) + "\n"


def index_page() -> str:
    rows = []
    for arch in catalogue.architectures():
        models = catalogue.models_of(arch)
        default = next((m for m in models if m.default), models[0])
        known, questions = known_sections(arch)
        _, more = coverage_lines(arch)
        n_files = len(_of_arch(arch, "tcsmt-result"))
        rows.append([f"[{arch}]({arch}.md)", str(len(models)), default.name,
                     ", ".join(default.devices[:4]) or "-", "yes" if recorded_lines(arch) else "no",
                     str(n_files), str(len(questions) + len(more) + len(limit_lines(arch)))])
    lines = ["# Architectures and units", "",
             "*Generated from the model files and `results/` when this site was built.*", "",
             "One page per architecture: its models (one per instruction and format pair), the "
             "recordings that validate them, what the committed results establish (the vectors "
             "that tell hypotheses apart, the proofs that none exist), and the open questions with "
             "the run that would settle each.", "",
             *_table(["architecture", "models", "default model", "devices", "recorded", "result files",
                      "open questions"], rows)]
    return "\n".join(lines) + "\n"


def pages() -> dict[str, str]:
    """{path under docs/: Markdown} for the index and every architecture."""
    out = {"units/index.md": index_page()}
    for arch in catalogue.architectures():
        out[f"units/{arch}.md"] = arch_page(arch)
    return out
