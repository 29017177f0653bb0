"""Replaying recorded GPU outputs through the models, row by row.

For each DEVICE/FORMAT folder and each recorded output format, the model of
the device's architecture for that format pair predicts every row (each
folder output one job of tcsmt.runner: its rows travel with it); the
report counts the rows whose bits match. Known problems of the recordings
(tcsmt.observed.recorded.KNOWN_PROBLEMS) are applied by rule and named in the report;
folders whose problem is open are reported but not judged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np

from tcsmt.errors import UserError
from tcsmt.model.catalogue import arch_for_device
from tcsmt.model.choose import choose
from tcsmt.model.params import ModelParams
from tcsmt.observed import recorded as hwdata

SCHEMA = "tcsmt-conformance/2"


@dataclass
class FolderReport:
    device: str
    folder: str
    output: str
    model: str | None
    rows: int
    matched: int
    judged: bool
    notes: list[str] = field(default_factory=list)
    mismatches: list[int] = field(default_factory=list)   # first few row numbers (0-based)
    hypothesis: bool = False      # a second reading of rows counted under the folder's own model

    @property
    def ok(self) -> bool:
        return not self.judged or self.matched == self.rows


def model_for(arch: str, in_format: str, out: str) -> ModelParams | None:
    """The architecture's own model for a format pair (not a named variant)."""
    try:
        return choose(arch, f"{in_format}:{out}")
    except UserError:
        return None


def prepare_c(rec: hwdata.Recording, p: ModelParams, c_zero: bool) -> np.ndarray:
    """The recorded c as bits of the model's c_format (RNE where narrower,
    as the recordings did for fp16 output)."""
    if c_zero:
        return np.zeros(rec.rows, dtype=np.uint64)
    return hwdata.rounded_c(rec.c32, p.fc)


def recorded_outputs(rec: hwdata.Recording, out: str, p: ModelParams) -> np.ndarray:
    """Recorded d as bits of the model's out_format (fp16 outputs are stored
    widened to binary32)."""
    d = rec.d[out]
    if p.fout.name == "float32":
        return d
    return hwdata.binary32_to_format(d, p.fout, f"{rec.path}/d_{rec.device}_{out}")


def predict(p: ModelParams, a: np.ndarray, b: np.ndarray, c: np.ndarray,
            engine: str = "auto") -> np.ndarray:
    """Model outputs for rows of bits: the NumPy batch interpreter when it
    can take the model, else the Python-int interpreter."""
    if engine in ("auto", "batch"):
        try:
            from tcsmt.sim.batch import dot_batch
            return dot_batch(p, a, b, c)
        except ImportError:
            if engine == "batch":
                raise UserError("the batch interpreter is not available") from None
        except UserError:
            if engine == "batch":
                raise
    from tcsmt.sim.dot import dot_bits
    rows = [dot_bits(p, [int(x) for x in ra], [int(x) for x in rb], int(rc))
            for ra, rb, rc in zip(a, b, c)]
    return np.array(rows, dtype=np.uint64)


@dataclass
class Check:
    """One folder output to judge: its report (rows, notes, whether judged),
    and the model's inputs and the recorded outputs when there is a model."""
    report: FolderReport
    p: ModelParams | None = None
    inputs: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None     # a, b, c bits
    want: np.ndarray | None = None


def folder_checks(device: str, folder: Path, arch: str | None, limit: int | None = None) -> list[Check]:
    rec = hwdata.read_folder(folder, device)
    arch = arch or arch_for_device(device)
    if arch is None:
        raise UserError(f"unknown device {device!r}: name its architecture with --arch")
    choose(arch)  # unknown architecture -> one-line error
    checks = []
    for out in sorted(rec.d, key=lambda o: o != "fp32"):
        problems = hwdata.known_problems(arch, rec.folder, out)
        rules = {kp.rule for kp in problems}
        judged = not ({"unreliable", "open"} & rules)
        notes = [kp.why for kp in problems]
        n = rec.rows if limit is None else min(limit, rec.rows)
        p = model_for(arch, rec.in_format.name, out)
        if p is None:
            checks.append(Check(FolderReport(device, rec.folder, out, None, n, 0, judged,
                                             [f"no {arch} model for {rec.in_format.name} -> {out}"] + notes)))
            continue
        c = prepare_c(rec, p, "c_zero" in rules)[:n]
        checks.append(Check(FolderReport(device, rec.folder, out, p.name, n, 0, judged, notes), p,
                            (rec.a[:n], rec.b[:n], c), recorded_outputs(rec, out, p)[:n]))
        for kp in problems:
            if kp.hypothesis:
                checks.append(hypothesis_check(rec, out, kp.hypothesis, c, n))
    return checks


def hypothesis_check(rec, out: str, name: str, c, n: int) -> Check:
    """The rows of an open-problem folder under a named reading (a model
    that is not the architecture's own for these formats)."""
    h = choose(name)
    return Check(FolderReport(rec.device, rec.folder, out, h.name, n, 0, False,
                              [f"hypothesis: {h.description}"], hypothesis=True),
                 h, (rec.a[:n], rec.b[:n], c), recorded_outputs(rec, out, h)[:n])


def judge(checks: list[Check], engine: str = "auto") -> list[FolderReport]:
    """Every check's model run on its rows (independent jobs, tcsmt.runner),
    and the rows that match counted."""
    from tcsmt import runner
    tasks = [runner.Task(str(i), partial(predict, ch.p, *ch.inputs, engine))
             for i, ch in enumerate(checks) if ch.p is not None and ch.inputs is not None]
    for done in runner.run(tasks):
        ch = checks[int(done.name)]
        bad = np.nonzero(done.result() != ch.want)[0]
        ch.report.matched = ch.report.rows - len(bad)
        ch.report.mismatches = [int(i) for i in bad[:5]]
    return [ch.report for ch in checks]


def check_folder(device: str, folder: Path, arch: str | None, engine: str = "auto",
                 limit: int | None = None) -> list[FolderReport]:
    return judge(folder_checks(device, folder, arch, limit), engine)


def run(root: str | Path, arch: str | None = None, engine: str = "auto",
        limit: int | None = None) -> list[FolderReport]:
    checks: list[Check] = []
    for device, folder in hwdata.discover(root):
        checks += folder_checks(device, folder, arch, limit)
    return judge(checks, engine)


def document(reports: list[FolderReport]) -> dict:
    """The tcsmt-conformance/2 document of the folder outputs judged."""
    return {"schema": SCHEMA, "summary": summary(reports), "folders": [dict(r.__dict__) for r in reports]}


def summary(reports: list[FolderReport]) -> dict:
    """Rows recorded, judged and matched over the folder outputs (a
    hypothesis's second reading of the same rows not counted again), and
    the rows not judged grouped by why."""
    own = [r for r in reports if not r.hypothesis]
    judged = [r for r in own if r.judged]
    why: dict[str, int] = {}
    for r in own:
        if not r.judged:
            reason = r.notes[0] if r.notes else "not judged"
            why[reason] = why.get(reason, 0) + r.rows
    c_zero = sum(r.rows for r in judged if any("c is read as +0" in n for n in r.notes))
    return {"rows": sum(r.rows for r in own), "judged": sum(r.rows for r in judged),
            "matched": sum(r.matched for r in judged), "judged_outputs": len(judged),
            "outputs": len(own), "judged_with_c_zero": c_zero, "not_judged": why}


def conformance_lines(doc: dict) -> list[str]:
    """What ``tcsmt conformance`` prints of its document (tcsmt.api.conformance)."""
    lines = []
    for r in doc["folders"]:
        ok = r["matched"] == r["rows"]
        status = "" if ok else "  MISMATCH"
        if not r["judged"]:
            status = "  known problem, not judged"
        count = f"matched {r['matched']}/{r['rows']}" if r["model"] else f"not modelled ({r['rows']} rows)"
        lines.append(f"{r['device']:<6} {r['folder']:<5} -> {r['output']:<5} {r['model'] or '-':<22} "
                     f"{count}{status}")
        lines += [f"       note: {note}" for note in r["notes"]]
        if r["judged"] and not ok:
            lines.append(f"       first mismatching rows (0-based): {r['mismatches']}")
    total = doc["summary"]
    c0 = total["judged_with_c_zero"]
    lines.append(f"{total['matched']}/{total['judged']} judged rows match in {total['judged_outputs']} "
                 f"folder outputs; {total['judged']} of {total['rows']} recorded rows judged"
                 + (f" ({c0} with c read as +0)" if c0 else ""))
    lines += [f"  {rows} rows not judged: {why}" for why, rows in total["not_judged"].items()]
    return lines
