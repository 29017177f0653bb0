"""A GPU as a device that runs vectors: write a probe, build it, run it, read d.

``ProbeDevice`` is what ``--device cuda[:N]`` and ``--device hip[:N]`` stand
for: each ``run(vectors)`` (one launch) writes the probe for those vectors
(tcsmt.probes.program), builds it for the GPU's architecture with nvcc or
hipcc (tcsmt.probes.toolchain), runs it, reads its JSON back and checks it:
the inputs it printed are the ones asked for, its calibration vectors came
out exact. Every row it returned is added to one observations file (schema
tcsmt-observations/1, written again after every launch), with the device,
its runtime and driver, the compiler and the build command, so that a run
can be replayed offline (``tcsmt identify FILE``, ``tcsmt check FILE``).
Rows of another k than the probe's instruction run, when ``other_k``
chooses one, in a probe of an instruction of that k (each launch records
its instruction and k, each row of another k its k); otherwise they are
refused with the reason (``refuses(k)``).

``--device cuda-host:MODEL`` (and ``hip-host:MODEL``) is the same device
without a GPU: the same probes, built by the same compiler for the
instruction's own architecture, run on this machine in their host mode
(``./probe --host-d FILE``), reading the d that MODEL computes (the
calibration vectors' too) instead of launching their kernel. Everything a
GPU run does but the kernel runs: the probe's embedding of the vectors, its
calibration check, its JSON, the reading and checking of it.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tcsmt.errors import InternalError, OutputRefused, UserError
from tcsmt.instructions.instruction import Instruction
from tcsmt.model.formats import Format, parse_bits
from tcsmt.model.params import ModelParams
from tcsmt.observed.observations import SCHEMA, FormatSet, parse_observations
from tcsmt.observed.random_rows import Rows
from tcsmt.observed.vectors import VectorSet, parse_vectors
from tcsmt.probes.toolchain import (
    TARGETS,
    Toolchain,
    compile_probe,
    device_info,
    find_compiler,
    first_error,
    run_checked,
)
from tcsmt.version import __version__

RUN_SECONDS = 300.0
HOST_TARGETS = {"volta": "sm_70", "turing": "sm_75", "ampere": "sm_80", "ada": "sm_89", "hopper": "sm_90a",
                "blackwell": "sm_100a", "blackwell-ultra": "sm_103a", "rtx-blackwell": "sm_120a",
                "cdna1": "gfx908", "cdna2": "gfx90a", "cdna3": "gfx942", "cdna4": "gfx950"}
"""The target a model's architecture stands for in host mode."""
SPECS = "cuda[:N], hip[:N], cuda-host:MODEL or hip-host:MODEL"


@dataclass(frozen=True)
class DeviceSpec:
    target: str                 # "cuda" or "hip"
    index: int | None = 0       # the GPU; None in host mode
    model: str | None = None    # host mode: the model whose d the probes read

    @property
    def text(self) -> str:
        if self.model is not None:
            return f"{self.target}-host:{self.model}"
        return f"{self.target}:{self.index}"


def parse_device_spec(text: str) -> DeviceSpec:
    """cuda, cuda:1, hip, hip:0, cuda-host:hopper, hip-host:cdna3."""
    kind, sep, rest = text.strip().partition(":")
    rest = rest.strip()
    if kind in ("cuda-host", "hip-host") and rest:
        return DeviceSpec(kind.removesuffix("-host"), None, rest)
    if kind in TARGETS and (not sep or rest.isdigit()):
        return DeviceSpec(kind, int(rest) if sep else 0)
    raise UserError(f"--device {text!r}: expected {SPECS}")


def is_probe_device(text: str) -> bool:
    return text.strip().partition(":")[0] in ("cuda", "hip", "cuda-host", "hip-host")


def vector_set(fs: FormatSet, scale_block: int, ins: Instruction, rows: Rows, source: str) -> VectorSet:
    """Rows (a, b [N, k], c [N], scales [N, S] as container words) as a
    VectorSet for a probe; scales keep their format's bits."""
    def hexes(fmt: Format, xs):
        return [fmt.hex(int(x) & ((1 << fmt.bits) - 1)) for x in xs]
    vectors = []
    for n in range(len(rows.c)):
        v = {"a": hexes(fs.a, rows.a[n]), "b": hexes(fs.b, rows.b[n]), "c": fs.c.hex(int(rows.c[n]))}
        if scale_block and fs.scale is not None and rows.sa is not None and rows.sb is not None:
            v.update(scale_a=hexes(fs.scale, rows.sa[n]), scale_b=hexes(fs.scale, rows.sb[n]))
        vectors.append(v)
    doc = {"formats": fs.record(), "instruction": ins.name, "vectors": vectors,
           **({"scale_block": scale_block} if scale_block else {})}
    sha = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()
    return parse_vectors(doc, source, sha)


class ProbeDevice:
    """Vectors of one instruction run on a GPU (or in host mode), launch by launch."""

    def __init__(self, spec: DeviceSpec, ins: Instruction, observations: str | Path | None = None,
                 log=None, generator: str = "", other_k=None):
        self.spec, self.ins, self.log = spec, ins, log
        self.other_k = other_k      # (ins, k, arch) -> the instruction of k, or why none
        self.path: Path | None = None
        if observations is not None:
            self.record_to(observations)
        self.workdir = Path(tempfile.mkdtemp(prefix="tcsmt-probe-"))
        try:
            self.tc = self._toolchain()
        except BaseException:
            self.close()
            raise
        self.model: ModelParams | None = None
        self.generator = generator or f"tcsmt {__version__}"
        self.rows: list[dict] = []
        self.launch_records: list[dict] = []
        self.head: dict = {}

    def _toolchain(self) -> Toolchain:
        if self.spec.index is None:
            compiler, version = find_compiler(self.spec.target)
            return Toolchain(self.spec.target, compiler, version)
        return device_info(self.spec.target, self.spec.index, self.workdir)

    def record_to(self, path: str | Path) -> None:
        """Keep every row in ``path`` (a new file), written after each launch."""
        path = Path(path)
        if path.exists():
            raise OutputRefused(f"{path} exists: observations are never written over; "
                                "choose another file")
        self.path = path

    @property
    def device_name(self) -> str:
        """The GPU's name ("host" in host mode), for file names."""
        return self.tc.device or "host"

    @property
    def name(self) -> str:
        return self.label

    @property
    def label(self) -> str:
        if self.spec.index is None:
            return f"{self.spec.text} ({self.tc.label})"
        return self.tc.label

    def close(self) -> None:
        shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- running --------------------------------------------------------------

    @property
    def arch(self) -> str:
        """The GPU's architecture (sm_90, gfx90a); in host mode that of the
        model playing the unit where it runs the instruction, else the
        instruction's own."""
        from tcsmt.instructions.table import runs_on
        if self.spec.index is not None:
            return self.tc.arch_word
        target = HOST_TARGETS.get(self.model.arch if self.model is not None else "", "")
        return target if target and runs_on(self.ins, target) else self.ins.arch

    def instruction(self, k: int) -> Instruction | str:
        """The instruction that runs rows of k products, or why none does:
        the probe's own at its k; at another k the one ``other_k`` chooses
        (tcsmt.identify.otherk: of that k, the same formats, the same unit
        on this GPU), none without it."""
        if k == self.ins.k:
            return self.ins
        if self.other_k is None:
            return (f"the probe is written for {self.ins.name} (k = {self.ins.k}); rows of k = {k} "
                    "need an instruction of that k, and none is chosen here")
        return self.other_k(self.ins, k, self.arch)

    def refuses(self, k: int) -> str | None:
        """Why rows of k products are not run (None when an instruction of
        that k runs them): a row of fewer products padded with zeros is not
        a lone block of k."""
        ins = self.instruction(k)
        return ins if isinstance(ins, str) else None

    def run(self, rows: Rows) -> np.ndarray:
        """The d of every row (tcsmt.observed.random_rows.Rows): one launch,
        of the instruction of the rows' k."""
        ins = self.instruction(rows.a.shape[1])
        if isinstance(ins, str):
            raise UserError(f"{self.label}: {ins}")
        vs = vector_set(self._fs(ins), ins.scale_block, ins, rows,
                        f"launch {len(self.launch_records) + 1} of {self.spec.text}")
        fout = vs.fout
        return np.array([parse_bits(r["d"], fout) for r in self.run_set(vs, ins)], dtype=np.uint64)

    def _fs(self, i: Instruction) -> FormatSet:
        from tcsmt.model.formats import get_format
        return FormatSet(get_format(i.in_format), get_format(i.b_fmt), get_format(i.c_format),
                         get_format(i.out_format), get_format(i.scale_format) if i.scale_format else None)

    def run_set(self, vs: VectorSet, ins: Instruction | None = None) -> list[dict]:
        """Run a set of vectors in one launch of ``ins`` (the probe's own by
        default); the rows the probe returned (numbered on from the rows of
        earlier launches; a row of another k than the probe's own says its k)."""
        from tcsmt.probes.harness import program
        ins = ins or self.ins
        n = len(self.launch_records) + 1
        src = self.workdir / f"probe{n}{'.cu' if self.spec.target == 'cuda' else '.hip'}"
        src.write_text(program(vs, ins, src.name))
        dfile = self._host_file(vs, n, ins) if self.spec.index is None else None
        t0 = time.monotonic()
        build = compile_probe(self.tc, ins, src, self.workdir / f"probe{n}")
        t1 = time.monotonic()
        doc = self._execute(n, dfile)
        t2 = time.monotonic()
        rows = self._check(vs, doc, n, ins)
        self.launch_records.append({"launch": n, "instruction": ins.name, "k": ins.k,
                                    "rows": [len(self.rows), len(self.rows) + len(rows)],
                                    "vectors_sha256": vs.sha256, "build": build,
                                    "compile_seconds": round(t1 - t0, 2), "run_seconds": round(t2 - t1, 2)})
        for r in rows:
            r["index"] = len(self.rows)
            if ins.k != self.ins.k:
                r["k"] = ins.k
            self.rows.append(r)
        self._write()
        if self.log:
            self.log(f"launch {n} on {self.label}: {len(rows)} vector{'s' * (len(rows) != 1)} "
                     f"(built in {t1 - t0:.1f} s, ran in {t2 - t1:.1f} s)")
        return rows

    def _execute(self, n: int, dfile: Path | None) -> dict:
        cmd = [str(self.workdir / f"probe{n}")]
        if dfile is not None:
            cmd += ["--host-d", str(dfile)]
        else:
            cmd += ["--device", str(self.spec.index)]
        done = run_checked(cmd, f"the probe on {self.spec.text}", RUN_SECONDS, self.tc.env())
        if done.returncode not in (0, 3, 4):
            raise UserError(f"the probe on {self.label} failed (exit status {done.returncode}): "
                            f"{first_error(done.stderr)}")
        try:
            doc = json.loads(done.stdout)
        except json.JSONDecodeError:
            raise InternalError(f"the probe on {self.label} printed no JSON (exit status "
                                f"{done.returncode}): {first_error(done.stderr)}") from None
        if doc.get("layout_check", "ok") != "ok":
            self._keep_failed(done.stdout, n)
            raise UserError(f"the probe's layout check failed on {self.label}: {doc['layout_check']}")
        return doc

    def _host_file(self, vs: VectorSet, n: int, ins: Instruction) -> Path:
        """The d file of a host-mode launch: the model's d of every vector and
        calibration vector, as the kernel would write them, then 0 stray
        elements."""
        from tcsmt.probes.calibration import calibration_vectors
        from tcsmt.probes.harness import model_outputs, vectors_model
        from tcsmt.sim.dot import dot_bits
        if self.model is None:      # the unit: one model, whatever instruction runs it
            self.model = vectors_model(self.spec.model, vs, self.ins)
        model = self.model
        fout = vs.fout
        _, outs = model_outputs(vs, ins, model)
        for cal in calibration_vectors(ins):
            sc = (cal.scale_a, cal.scale_b) if ins.scale_block else (None, None)
            outs.append(dot_bits(model, cal.a, cal.b, cal.c, *sc))
        path = self.workdir / f"d{n}.txt"
        path.write_text("\n".join(f"0x{fout.to_storage(d):x}" for d in outs) + "\n0\n")
        return path

    def _check(self, vs: VectorSet, doc: dict, n: int, ins: Instruction) -> list[dict]:
        """The probe's rows, after checking that they hold the inputs asked for."""
        obs = parse_observations(doc, f"the output of launch {n} on {self.label}")
        if obs.instruction != ins.name or len(obs.rows) != len(vs.vectors):
            raise InternalError(f"launch {n}: the probe ran {obs.instruction} on {len(obs.rows)} "
                                f"vectors; asked: {ins.name} on {len(vs.vectors)}")
        scales = vs.padded_scales(ins.k)
        for i, ((a, b, c), row) in enumerate(zip(vs.padded(ins.k), obs.rows)):
            want = (a, b, c, *(scales[i] if vs.scale_block else ([], [])))
            got = (list(row.a), list(row.b), row.c, list(row.scale_a), list(row.scale_b))
            if list(want) != list(got):
                raise InternalError(f"launch {n}: the probe's row {i} holds other inputs than vector {i}")
        if not self.head and ins == self.ins:      # the file's instruction: the probe's own
            skip = ("observations", "hypotheses", "vectors_sha256", "layout_check", "host_d")
            self.head = {k: v for k, v in doc.items() if k not in skip}
        return [{k: v for k, v in r.items() if k != "matches"} for r in doc["observations"]]

    def _keep_failed(self, stdout: str, n: int) -> None:
        """A probe whose layout check failed: its output beside the observations."""
        if self.path is not None:
            from tcsmt.fileio import write_text_atomic
            bad = self.path.with_name(f"{self.path.stem}.layout-failed-{n}.json")
            write_text_atomic(bad, stdout)
            if self.log:
                self.log(f"wrote {bad}: the probe's output (its layout check failed)")

    # -- the record -------------------------------------------------------------

    def document(self) -> dict:
        """Every row so far as one observations document."""
        doc = {"schema": SCHEMA, **self.head}
        doc["generator"] = self.generator
        doc["device_spec"] = self.spec.text
        doc["toolchain"] = self.tc.record()
        if self.model is not None:
            doc["host_model"] = self.model.name
        doc["launches"] = self.launch_records
        doc["layout_check"] = "ok"
        doc["observations"] = self.rows
        return doc

    def _write(self) -> None:
        if self.path is not None:
            from tcsmt.fileio import write_json_atomic
            write_json_atomic(self.path, self.document())


def observations_path(device_label: str, what: str, folder: str | Path = ".") -> Path:
    """observed-DEVICE-WHAT.json in ``folder``, or -2, -3... after it: a
    recorded run is never written over."""
    from tcsmt.model.modelfile import slug
    base = Path(folder) / f"observed-{slug(device_label)}-{slug(what)}"
    path, n = base.with_suffix(".json"), 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}.json")
    return path


def run_file(device: str, vectors: str | Path, *, instruction: str | None = None,
             formats: str | None = None, observations: str | Path | None = None, log=None) -> Path:
    """Run every vector of a file (any file tcsmt writes that holds vectors,
    or a shipped plan's name) on a device, in one launch; the observations
    file written (default observed-DEVICE-NAME.json in the current folder)."""
    from tcsmt.observed.vectors import read_vectors
    vs = read_vectors(vectors, formats)
    spec = parse_device_spec(device)
    ins = vs.pick_instruction(instruction, spec.target)
    with ProbeDevice(spec, ins, log=log, generator=f"tcsmt {__version__} check --device {spec.text}") as dev:
        dev.record_to(observations or observations_path(dev.device_name, Path(str(vectors)).stem))
        dev.run_set(vs)
        if log:
            log(f"wrote {dev.path}: {len(dev.rows)} observations of {dev.label}")
        return dev.path
