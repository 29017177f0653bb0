"""``tcsmt check``: observed or expected outputs against named models.

What is read (``load_rows``):

* a probe's observations (schema ``tcsmt-observations/1``): the bits the
  device returned for each input;
* a recorded folder ``DIR/DEVICE/FORMAT`` (``tcsmt.observed.recorded``):
  one set of rows per recorded output format, the known problems of the
  recordings applied by rule and named;
* any other file tcsmt writes that holds vectors (a result of diff, find,
  prove, a coverage file, a plan; see ``tcsmt.observed.vectors``): the
  outputs each of its hypotheses expects stand where observations would.

Every model runs every row through the batch simulator
(``tcsmt.sim.batch.dot_batch``, seconds for thousands of rows in every
format), or through the scalar one where a model needs words wider than
the batch simulator's. A model given as an architecture (``hopper``) is
that architecture's model for the rows' formats, preferring the one whose
instruction is the observations' (``hopper-e4m3-fp32-mma`` for ``mma.sync``
fp8 observations). The first mismatching rows come with the model's
stage-by-stage explanation (``tcsmt.sim.dot.explain``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tcsmt.errors import FormatMismatch, UserError
from tcsmt.model.choose import Operands, choose_or_none, device_architecture, is_architecture
from tcsmt.model.formats import Format, format_value, get_format
from tcsmt.model.integers import int_format
from tcsmt.model.names import short_format
from tcsmt.model.params import ModelParams
from tcsmt.observed.observations import FormatSet, check_scales, check_sparsity, parse_observations

SCHEMA = "tcsmt-check/1"


@dataclass
class Rows:
    """Dot products of one format set and one length, as arrays of bits."""
    source: str
    what: str                      # "observations", "recorded" or "vectors"
    fs: FormatSet
    a: np.ndarray                  # [N, K] bits of a's format
    b: np.ndarray                  # [N, K]
    c: np.ndarray                  # [N]
    index: list[int]
    observed: np.ndarray | None = None                          # [N] out bits
    expected: dict[str, np.ndarray] = field(default_factory=dict)   # hypothesis -> [N]
    labels: dict[str, str] = field(default_factory=dict)
    sa: np.ndarray | None = None   # [N, S] scale bits (block-scaled instructions)
    sb: np.ndarray | None = None
    scale_block: int = 0
    device: str = ""
    instruction: str = ""
    notes: list[str] = field(default_factory=list)
    host_model: str = ""           # probes run in host mode: the model that gave d
    sparsity: str = "dense"
    mask: np.ndarray | None = None  # [N, K] the selected terms (sparse instructions)

    @property
    def k(self) -> int:
        return int(self.a.shape[1])

    @property
    def count(self) -> int:
        return int(self.a.shape[0])

    def row_scales(self, n: int) -> tuple[list[int] | None, list[int] | None]:
        """The scales of a and b of row n (None, None without scales)."""
        if self.sa is None or self.sb is None:
            return None, None
        return self.sa[n].tolist(), self.sb[n].tolist()

    def formats_text(self) -> str:
        fs = self.fs
        return f"{fs.a.name} x {fs.b.name} + {fs.c.name} -> {fs.out.name}"

    def formats_label(self) -> str:
        """IN:OUT (or A,B:OUT), as --formats takes it."""
        ins = short_format(self.fs.a.name)
        if self.fs.b != self.fs.a:
            ins += "," + short_format(self.fs.b.name)
        return f"{ins}:{short_format(self.fs.out.name)}"


# ---------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------

def _bits(rows: list, k: int | None = None) -> np.ndarray:
    out = np.array(rows, dtype=np.uint64)
    return out.reshape(len(rows), k) if k is not None else out


def rows_from_observations(obs, source: str, what: str = "observations") -> Rows:
    """An ObservationSet as Rows with observed d."""
    fs = FormatSet(obs.fin, obs.fb or obs.fin, obs.fc, obs.fout, obs.fscale)
    scaled = obs.fscale is not None
    return Rows(source, what, fs, _bits([r.a for r in obs.rows], obs.k),
                _bits([r.b for r in obs.rows], obs.k), _bits([r.c for r in obs.rows]),
                [r.index for r in obs.rows], observed=_bits([r.d for r in obs.rows]),
                sa=_bits([r.scale_a for r in obs.rows]) if scaled else None,
                sb=_bits([r.scale_b for r in obs.rows]) if scaled else None,
                scale_block=obs.scale_block, device=obs.device, instruction=obs.instruction,
                notes=[f"known problem of the recording: {kp.get('why', kp)}"
                       for kp in obs.meta.get("known_problems", [])],
                host_model=str(obs.meta.get("host_model", "")),
                sparsity=obs.sparsity,
                mask=_bits([r.mask for r in obs.rows], obs.k) if obs.sparsity != "dense" else None)


def rows_from_recorded(folder: Path) -> list[Rows]:
    """One Rows per recorded output of a DEVICE/FORMAT folder, with the
    recordings' known problems applied by rule (tcsmt.observed.recorded):
    Hopper fp8 rows get c = +0; for fp16 output c is rounded to fp16 (round
    to nearest even) as the recording did."""
    from tcsmt.model.catalogue import DEVICE_CC
    from tcsmt.observed.recorded import binary32_to_format, known_problems, read_folder, rounded_c
    rec = read_folder(folder)
    arch = device_architecture(rec.device) or "unknown"
    out = []
    for output in sorted(rec.d, key=lambda o: o != "fp32"):
        problems = known_problems(arch, rec.folder, output)
        fout = get_format("float32" if output == "fp32" else "float16")
        if any(kp.rule == "c_zero" for kp in problems):
            c = np.zeros(rec.rows, dtype=np.uint64)
        else:
            c = rounded_c(rec.c32, fout, f"{folder}/c")
        d = binary32_to_format(rec.d[output], fout, f"{folder}/d_{rec.device}_{output}")
        fs = FormatSet(rec.in_format, rec.in_format, fout, fout)
        notes = [f"known problem of the recording ({kp.rule}): {kp.why}" for kp in problems]
        cc = DEVICE_CC.get(rec.device)
        out.append(Rows(str(folder), "recorded", fs, rec.a, rec.b, c, list(range(rec.rows)),
                        observed=d, device=rec.device + (f" (compute capability {cc})" if cc else ""),
                        notes=notes))
    return out


def rows_from_vectors(vs, source: str) -> list[Rows]:
    """A VectorSet (plan, result, coverage file...) as Rows, one per length
    of its vectors; the outputs its hypotheses expect stand for observations."""
    groups: dict[int, list[int]] = {}
    for n, (a, _, _) in enumerate(vs.vectors):
        groups.setdefault(len(a), []).append(n)
    out = []
    for k, members in sorted(groups.items()):
        vec = [vs.vectors[n] for n in members]
        scaled = vs.scale_block > 0
        rows = Rows(source, "vectors", vs.fs, _bits([v[0] for v in vec], k),
                    _bits([v[1] for v in vec], k), _bits([v[2] for v in vec]), members,
                    expected={h: _bits([vs.expected[n][h] for n in members])
                              for h, _ in vs.hypotheses},
                    labels=dict(vs.hypotheses),
                    sa=_bits([vs.scales[n][0] for n in members]) if scaled else None,
                    sb=_bits([vs.scales[n][1] for n in members]) if scaled else None,
                    scale_block=vs.scale_block, instruction=vs.instruction or "",
                    sparsity=vs.sparsity,
                    mask=_bits([vs.masks[n] for n in members], k) if vs.sparsity != "dense" else None)
        out.append(rows)
    return out


def load_rows(path: str | Path) -> list[Rows]:
    """Every set of rows a file or recorded folder holds (see the module
    docstring); one-line UserErrors for anything else."""
    from tcsmt.observed.recorded import FOLDER_FORMATS
    from tcsmt.observed.vectors import find_vectors, parse_vector_file, read_json
    p = Path(path)
    if p.is_dir():
        if p.name.lower() not in FOLDER_FORMATS:
            raise UserError(f"{p}: not a recorded DEVICE/FORMAT folder (such as data/hwdata/H100/"
                            "fp16); tcsmt conformance replays a whole tree")
        return rows_from_recorded(p)
    p = find_vectors(p)
    data, sha = read_json(p)
    if isinstance(data, dict) and data.get("schema") == "tcsmt-observations/1":
        obs = parse_observations(data, str(p))      # rows of another k: a set per k
        return [rows_from_observations(obs, str(p))] + [
            rows_from_observations(obs.at(k), str(p)) for k in sorted(obs.other)]
    return [r for vs in parse_vector_file(data, str(p), sha) for r in rows_from_vectors(vs, str(p))]


# ---------------------------------------------------------------------------
# Which model checks which rows
# ---------------------------------------------------------------------------

def operands(rows: Rows) -> Operands:
    """What the rows are, as tcsmt.model.choose takes it."""
    fs = rows.fs
    return Operands((fs.a.name,), (fs.b.name,), (fs.c.name,), (fs.out.name,),
                    fs.scale.name if fs.scale else None, rows.scale_block, rows.instruction,
                    rows.sparsity)


def _computes(p: ModelParams, rows: Rows) -> bool:
    return [f.name for f in (p.fin, p.fb, p.fc, p.fout)] == \
        [f.name for f in (rows.fs.a, rows.fs.b, rows.fs.c, rows.fs.out)]


def arch_model(arch: str, rows: Rows) -> ModelParams | None:
    """The architecture's model for the rows' formats; among several, the
    one whose instruction is the rows' (mma.sync, wgmma...), else the
    architecture's plain model for the formats. None if it has none."""
    return choose_or_none(arch, None, operands(rows))


def pair_models(specs: list[str], sets: list[Rows], overrides: list[str]
                ) -> tuple[list[tuple[str, ModelParams, Rows]], list[str]]:
    """(spec, model, rows) for every model and the rows it computes, and a
    note for each model skipped: with several models named, one that
    computes none of the rows' formats is skipped, not an error. "all":
    every shipped model of the rows' formats."""
    from tcsmt.model.catalogue import all_models
    from tcsmt.model.overrides import apply_overrides
    out, skipped = [], []
    for spec in specs:
        if spec == "all":
            out += [(m.name, apply_overrides(m, overrides), r) for r in sets for m in all_models()
                    if operands(r).fits(m)]
            continue
        try:
            out += _pairs_of(spec, sets, overrides)
        except FormatMismatch as e:
            if len(specs) == 1:
                raise
            skipped.append(f"{spec} skipped: {e}")
    if not out:
        raise FormatMismatch("no model named computes the rows' formats: " + "; ".join(skipped)
                             if skipped else "no shipped model computes the rows' formats")
    return out, skipped


def _pairs_of(spec: str, sets: list[Rows], overrides: list[str]) -> list[tuple[str, ModelParams, Rows]]:
    from tcsmt.model.choose import choose
    from tcsmt.model.overrides import apply_overrides
    if is_architecture(spec):
        each = [(spec, arch_model(spec, r), r) for r in sets]
        found = [(s, apply_overrides(m, overrides), r) for s, m, r in each if m is not None]
        if not found:
            have = ", ".join(sorted({r.formats_label() for r in sets}))
            raise FormatMismatch(f"{spec} has no model for the formats of the rows ({have}); "
                                 "`tcsmt models` lists them")
        return found
    p = choose(spec, None, overrides)
    match = [r for r in sets if _computes(p, r)]
    if not match:
        have = "; ".join(sorted({r.formats_text() for r in sets}))
        raise FormatMismatch(f"model {p.name} computes {p.fin.name} x {p.fb.name} + {p.fc.name} -> "
                             f"{p.fout.name}; the rows are {have}")
    return [(spec, p, r) for r in match]


# ---------------------------------------------------------------------------
# Running and comparing
# ---------------------------------------------------------------------------

def predict(p: ModelParams, rows: Rows) -> np.ndarray:
    """The model's d bits for every row: the batch simulator, or the scalar
    one where the model needs words wider than 64 bits."""
    from tcsmt.sim.batch import dot_batch, supported
    from tcsmt.sim.dot import dot_bits
    check_scales(p, rows.fs.scale, rows.scale_block, "rows")
    check_sparsity(p, rows.sparsity, "rows")
    if supported(p):
        return dot_batch(p, rows.a, rows.b, rows.c, sa_bits=rows.sa, sb_bits=rows.sb,
                         mask_bits=rows.mask)
    out = []
    for n in range(rows.count):
        out.append(dot_bits(p, rows.a[n].tolist(), rows.b[n].tolist(), int(rows.c[n]),
                            *rows.row_scales(n), mask=_mask_of(rows, n)))
    return np.array(out, dtype=np.uint64)


def _mask_of(rows: Rows, n: int) -> list[int] | None:
    return None if rows.mask is None else rows.mask[n].tolist()


def ulps_apart(x: int, y: int, fmt: Format) -> int | None:
    """Units in the last place between two patterns of fmt (None for NaNs;
    for an integer format, how far apart the integers are)."""
    if fmt.is_integer:
        fi = int_format(fmt)
        return abs(fi.int_value(x) - fi.int_value(y))
    if "nan" in (fmt.classify(x), fmt.classify(y)):
        return None

    def ordered(v: int) -> int:
        mag = v & ((1 << (fmt.bits - 1)) - 1)
        return -mag if v >> (fmt.bits - 1) else mag
    return abs(ordered(x) - ordered(y))


def _value(fmt: Format, bits: int) -> dict:
    v = fmt.value(bits)
    text = "-0" if fmt.is_negative_zero(bits) else format_value(v)
    return {"hex": fmt.hex(bits), "decimal": text}


def explain_row(p: ModelParams, rows: Rows, n: int, got: int, want: int, what: str) -> dict:
    """One mismatching row: its inputs, both outputs, and the model's stages."""
    from tcsmt.sim.dot import explain
    fs = rows.fs
    a, b, c = rows.a[n].tolist(), rows.b[n].tolist(), int(rows.c[n])
    sa, sb = rows.row_scales(n)
    rec = {"row": n, "index": rows.index[n],
           "a": [fs.a.hex(x) for x in a], "b": [fs.b.hex(x) for x in b], "c": fs.c.hex(c),
           what: _value(fs.out, want), "model": _value(fs.out, got),
           "ulps": ulps_apart(got, want, fs.out),
           "explain": [[stage, text] for stage, text in explain(p, a, b, c, sa, sb,
                                                                 _mask_of(rows, n))]}
    if sa is not None and sb is not None and fs.scale is not None:
        rec["scale_a"], rec["scale_b"] = [fs.scale.hex(x) for x in sa], [fs.scale.hex(x) for x in sb]
    if rows.mask is not None:
        rec["mask"] = _mask_of(rows, n)
    return rec


def check_pair(spec: str, p: ModelParams, rows: Rows, show: int) -> dict:
    """One model on one set of rows: matches, and the first mismatches explained."""
    got = predict(p, rows)
    rec = {"model": p.name, "given_as": spec, "instruction": p.instruction,
           "formats": rows.formats_label(), "k": rows.k, "rows": rows.count}
    if rows.observed is not None:
        bad = np.nonzero(got != rows.observed)[0]
        rec["matched"] = rows.count - len(bad)
        rec["mismatches"] = [explain_row(p, rows, int(n), int(got[n]), int(rows.observed[n]),
                                         "observed") for n in bad[:show]]
        return rec
    agree = {h: int((got == e).sum()) for h, e in rows.expected.items()}
    rec["agrees_with"] = agree
    rec["matched"] = max(agree.values(), default=0)
    none = np.ones(rows.count, dtype=bool)
    for e in rows.expected.values():
        none &= got != e
    rec["agrees_with_none"] = int(none.sum())
    rec["model_outputs"] = [rows.fs.out.hex(int(x)) for x in got[:show]] if not agree else []
    first = next(iter(rows.expected.values()), None)
    rec["mismatches"] = [] if first is None else [
        explain_row(p, rows, int(n), int(got[n]), int(first[n]), "expected")
        for n in np.nonzero(none)[0][:show]]
    return rec


def rows_record(rows: Rows) -> dict:
    rec = {"what": rows.what, "formats": rows.fs.record(), "k": rows.k, "rows": rows.count,
           "device": rows.device, "instruction": rows.instruction, "notes": rows.notes}
    if rows.expected:
        rec["hypotheses"] = [{"id": h, "label": rows.labels.get(h, h)} for h in rows.expected]
    return rec


def check(source: str | Path, models: list[str] | tuple = (), overrides: list[str] | tuple = (),
          show: int = 3, limit: int | None = None) -> dict:
    """The check document: every model against the rows of ``source`` it
    computes. Without models, the architecture of the observations'
    device. ``show``: mismatching rows explained per model; ``limit``:
    the first rows only."""
    t0 = time.monotonic()
    sets = load_rows(source)
    if limit:
        sets = [_first(r, limit) for r in sets]
    specs = list(models)
    if not specs:
        arch = next((r.host_model or device_architecture(r.device) for r in sets if r.device), None)
        if arch is None:
            raise UserError(f"{source}: name the models to check with --arch MODEL "
                            "(the rows name no device tcsmt knows)")
        specs = [arch]
    results = []
    pairs, skipped = pair_models(specs, sets, list(overrides))
    for spec, p, rows in pairs:
        rec = check_pair(spec, p, rows, show)
        rec["set"] = next(n for n, r in enumerate(sets) if r is rows)
        results.append(rec)
    ranked = "all" in specs
    if ranked:                         # most rows matched first; the order of the files beside
        results.sort(key=lambda m: (m["set"], -m.get("matched", 0) / max(m["rows"], 1)))
    return {"schema": SCHEMA, "source": str(source), "sets": [rows_record(r) for r in sets],
            "models": results, "skipped": skipped, "ranked": ranked,
            "seconds": round(time.monotonic() - t0, 3)}


def _first(rows: Rows, n: int) -> Rows:
    from dataclasses import replace
    cut = slice(0, n)
    return replace(rows, a=rows.a[cut], b=rows.b[cut], c=rows.c[cut], index=rows.index[cut],
                   observed=None if rows.observed is None else rows.observed[cut],
                   expected={h: e[cut] for h, e in rows.expected.items()},
                   sa=None if rows.sa is None else rows.sa[cut],
                   sb=None if rows.sb is None else rows.sb[cut])


def all_matched(doc: dict) -> bool:
    """Whether every model reproduces every observed row (vector files,
    which hold no observations, always pass); for a ranking (--arch all),
    whether some model does, on every set of rows."""
    judged = [m for m in doc["models"] if "agrees_with" not in m]
    if doc.get("ranked"):
        return all(any(m["matched"] == m["rows"] for m in judged if m["set"] == n)
                   for n in {m["set"] for m in judged})
    return all(m["matched"] == m["rows"] for m in judged)
