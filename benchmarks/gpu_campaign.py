"""One command on a GPU machine: what tcsmt can only learn there.

    python benchmarks/gpu_campaign.py [--device cuda:0] [--budget 480] [--out DIR] [--short]

Steps, in this order, each in a process of its own with its own time
limit, the whole within --budget seconds (a step that cannot start in the
time left is skipped, and says so):

  identify-fp16, -bf16, -tf32, -e4m3, -fp16-fp16   tcsmt identify --device
        cuda with the committed plans (fp16:fp32, bf16:fp32, tf32:fp32,
        e4m3:fp32, fp16:fp16; mma.sync) in both phases: the plan's search
        (the whole plan in one launch, --batch plan), then confirmation
        parameter by parameter on vectors it was not chosen from (property
        vectors, random rows, the rows that split the neighbours), all on
        the device; each writes its observations, its report and its model
        file, and the verdict is the blind one (identified, or unexplained
        with the rows)
  identify-e4m3-wgmma   the fp8 plan through wgmma (sm_90a: H100, H200)
  wgmma-e4m3-f32, wgmma-e5m2-f32, wgmma-e4m3-f16, wgmma-e5m2-f16
        2000 vectors each with c != 0 (results/hardware/make_vectors.py)
        through wgmma on sm_90a, checked against the shipped hopper-e4m3-fp32
        (e5m2, fp16 accumulators) and against it with c_placement=after (c
        added to the blocks' rounded sum): open question 6 of FACTS.md (the
        recordings ran wgmma with c = 0)
  gemm  the CUDA GEMM kernel against MMA-Sim on the same GPU:
        benchmarks/bench_gpu.py --size 4096 where it exists, else
        bench_kernels.py --sizes 2048 (its CUDA rows: the kernel, MMA-Sim on
        the device)
  wgmma-f16-f32, wgmma-f16-f16, wgmma-bf16-f32, wgmma-tf32-f32,
  mma-e4m3-f16, mma-e5m2-f16
        the probes no GPU but an H200 had run (results/hardware/README.md),
        each against its shipped Hopper model (tf32 also with blocks of 4;
        mma.sync fp8 into fp16 also against the model files written from
        the H200's rows, results/hardware/H200/)

Everything goes to results/hardware/<GPU>/campaign-<UTC time>/ (or --out):
each step's files (the observations name the device, its driver and
runtime, the compiler and every build command) and campaign.json (the
device, the toolchain, every step's status, seconds and figures), written
again after every step. One line per step as it ends, then a summary.

Without a GPU it prints "no GPU: <why>" and exits 0. --short (CI, here)
checks its own setup instead: nvcc, the imports, every step's probe
compiled by nvcc, the vectors generator; then says whether a GPU is there
(exit 0; 1 when the setup is broken). --device cuda-host:MODEL runs the
probe steps without a GPU, in the probes' host mode (d from MODEL).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# (step, seconds, what) in the order they run
IDENTIFY = {"identify-fp16": "fp16:fp32", "identify-bf16": "bf16:fp32", "identify-tf32": "tf32:fp32",
            "identify-e4m3": "e4m3:fp32", "identify-e4m3-wgmma": "e4m3:fp32",
            "identify-fp16-fp16": "fp16:fp16"}
# the probes no GPU had run (results/hardware/README.md): vectors -> the
# shipped model they are checked against, and the other readings checked
WGMMA = {"wgmma-e4m3-f32": "hopper-e4m3-fp32", "wgmma-e5m2-f32": "hopper-e5m2-fp32",
         "wgmma-e4m3-f16": "hopper-e4m3-fp16", "wgmma-e5m2-f16": "hopper-e5m2-fp16",
         "wgmma-f16-f32": "hopper-fp16-fp32", "wgmma-f16-f16": "hopper-fp16-fp16",
         "wgmma-bf16-f32": "hopper-bf16-fp32", "wgmma-tf32-f32": "hopper-tf32-fp32",
         "mma-e4m3-f16": "hopper-e4m3-fp16", "mma-e5m2-f16": "hopper-e5m2-fp16"}
READINGS = {name: ["c_placement=after"] for name in list(WGMMA)[:4]} | \
    {"wgmma-tf32-f32": ["block_size=4"]}
# model files written from an earlier device's rows, checked as well
H200 = ROOT / "results" / "hardware" / "H200"
MODEL_FILES = {"mma-e4m3-f16": H200 / "hopper-e4m3-fp16-mma.toml",
               "mma-e5m2-f16": H200 / "hopper-e5m2-fp16-mma.toml"}
STEPS = [(name, 120) for name in list(IDENTIFY)[:5]] + [("vectors", 60)] + \
    [(name, 60) for name in list(WGMMA)[:2]] + [("gemm", 150)] + [(name, 60) for name in list(WGMMA)[2:]] + \
    [("identify-fp16-fp16", 120)]
SM90 = {"identify-e4m3-wgmma", *(w for w in WGMMA if w.startswith("wgmma"))}   # wgmma: sm_90a only
PROOF_SECONDS = 40.0


def say(text: str) -> None:
    print(text, flush=True)


# ---------------------------------------------------------------------------
# The steps (each runs in a child process: --step NAME)
# ---------------------------------------------------------------------------

def step_identify(name: str, device: str, out: Path) -> dict:
    """Both phases on the device: the plan's search (one launch of the
    plan), then confirmation parameter by parameter (every launch kept in
    the observations); the verdict from the observations alone."""
    import tcsmt.api as api
    rec = api.identify(device=device, formats=IDENTIFY[name], batch="plan", confirm=True,
                       instruction="wgmma" if name.endswith("wgmma") else None,
                       observations_out=out / f"observed-{name}.json", timeout=PROOF_SECONDS,
                       model_file=str(out / f"identified-{name}.toml"), log=say)
    (out / f"{name}.json").write_text(json.dumps(rec, indent=1) + "\n")
    obs = json.loads(Path(rec["observations_file"]).read_text())
    launches = rec["launches"]
    phase1, phase2 = rec.get("phase1") or {}, rec.get("phase2") or {}
    return {"verdict": rec["verdict"], "model": phase2.get("describe"),
            "launches_phase1": launches["phase1"], "launches_phase2": launches["phase2"],
            "vectors_run": launches["vectors"], "instruction": rec["instruction"],
            "phase1_class": phase1.get("class"), "phase1_class_size": phase1.get("class_size"),
            "undecided": phase2.get("undecided"),
            "compile_seconds": [x["compile_seconds"] for x in obs["launches"]],
            "run_seconds": [x["run_seconds"] for x in obs["launches"]]}


def step_wgmma(name: str, device: str, out: Path) -> dict:
    """The vectors through their instruction on the device (one launch),
    then the rows against the shipped model and its other readings."""
    import tcsmt.api as api
    vectors = out / "vectors" / f"{name}.vectors.json"
    if not vectors.exists():
        _make_vectors(out / "vectors")
    obs = out / f"observed-{name}.json"
    got = {}
    for reading, sets in [("shipped", [])] + [(r, [r]) for r in READINGS.get(name, [])]:
        first = not obs.exists()
        ins = "wgmma" if first and name.startswith("wgmma") else None
        doc = api.check(vectors if first else obs, [WGMMA[name]], overrides=sets, show=2,
                        device=device if first else None, instruction=ins,
                        observations=obs if first else None, log=say)
        (out / f"{name}.check-{reading.replace('=', '-')}.json").write_text(json.dumps(doc, indent=1) + "\n")
        m = doc["models"][0]
        got[reading] = f"{m['matched']}/{m['rows']}"
    if name in MODEL_FILES and MODEL_FILES[name].exists() and obs.exists():
        doc = api.check(obs, [str(MODEL_FILES[name])], show=2, log=say)
        (out / f"{name}.check-{MODEL_FILES[name].stem}.json").write_text(json.dumps(doc, indent=1) + "\n")
        m = doc["models"][0]
        got[MODEL_FILES[name].name] = f"{m['matched']}/{m['rows']}"
    return {"rows_matched": got, "observations": obs.name}


def _make_vectors(folder: Path) -> None:
    subprocess.run([sys.executable, str(ROOT / "results" / "hardware" / "make_vectors.py"), str(folder)],
                   check=True, capture_output=True, text=True, env=_env())


def step_vectors(name: str, device: str, out: Path) -> dict:
    _make_vectors(out / "vectors")
    return {"files": len(list((out / "vectors").glob("*.vectors.json")))}


def step_gemm(name: str, device: str, out: Path) -> dict:
    mine = ROOT / "benchmarks" / "bench_gpu.py"
    sizes = ["--size", "4096", "--repeat", "2", "--mmasim-rows", "64"]
    cmd = [sys.executable, str(mine), *sizes] if mine.exists() else \
        [sys.executable, str(ROOT / "benchmarks" / "bench_kernels.py"), "--sizes", "2048", "--repeat", "3"]
    done = subprocess.run(cmd, capture_output=True, text=True, env=_env())
    (out / "gemm.txt").write_text(f"$ {' '.join(Path(c).name if '/' in c else c for c in cmd)}\n"
                                  + done.stdout + done.stderr)
    lines = [x for x in done.stdout.splitlines() if "cuda" in x.lower() or "device" in x.lower()]
    return {"command": " ".join(Path(c).name for c in cmd[1:2]) + " " + " ".join(cmd[2:]),
            "exit": done.returncode, "lines": lines[:20]}


def run_step(name: str, device: str, out: Path) -> None:
    fn = (step_identify if name in IDENTIFY else step_wgmma if name in WGMMA else
          step_vectors if name == "vectors" else step_gemm)
    t0 = time.monotonic()
    result = fn(name, device, out)
    result["seconds"] = round(time.monotonic() - t0, 1)
    (out / f"{name}.result.json").write_text(json.dumps(result, indent=1) + "\n")


# ---------------------------------------------------------------------------
# The campaign
# ---------------------------------------------------------------------------

def _env() -> dict:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def child(name: str, device: str, out: Path, seconds: float) -> tuple[str, dict]:
    """Run one step in its own process group; (status, result)."""
    log = open(out / f"{name}.log", "w")
    proc = subprocess.Popen([sys.executable, __file__, "--step", name, "--device", device, "--out", str(out)],
                            stdout=log, stderr=subprocess.STDOUT, env=_env(), start_new_session=True)
    try:
        proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return f"timed out after {seconds:.0f} s", {}
    finally:
        log.close()
    res = out / f"{name}.result.json"
    if proc.returncode == 0 and res.exists():
        return "done", json.loads(res.read_text())
    tail = [x for x in (out / f"{name}.log").read_text().splitlines() if x.strip()]
    return f"failed (exit {proc.returncode}): {tail[-1][:200] if tail else 'no output'}", {}


def gpu(device: str):
    """The toolchain of the device (or its reason for being absent)."""
    from tcsmt.errors import UserError
    from tcsmt.probes.device import parse_device_spec
    from tcsmt.probes.toolchain import Toolchain, device_info, find_compiler
    spec = parse_device_spec(device)
    try:
        if spec.index is None:
            return Toolchain(spec.target, *find_compiler(spec.target)), None
        with tempfile.TemporaryDirectory() as d:
            return device_info(spec.target, spec.index, Path(d)), None
    except UserError as e:
        return None, str(e)


def short_name(device: str) -> str:
    """H100, H200, B200, A100... from a CUDA device name; else a slug."""
    import re

    from tcsmt.model.modelfile import slug
    m = re.search(r"\b([A-Z]{1,2}\d{2,3}[A-Z]?)\b", device)
    return m.group(1) if m else slug(device)


def campaign(args) -> int:
    tc, why = gpu(args.device)
    if tc is None:
        say(f"no GPU: {why}")
        return 0
    sm90 = tc.index is None or tc.arch == "9.0"
    name = short_name(tc.device) if tc.index is not None else "host"
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%d-%H%M%S")
    out = Path(args.out) if args.out else ROOT / "results" / "hardware" / name / f"campaign-{stamp}"
    out.mkdir(parents=True, exist_ok=True)
    say(f"{tc.label}; {tc.compiler_version}; writing {out}")
    summary = {"device": tc.record(), "device_spec": args.device, "started": stamp,
               "budget_seconds": args.budget, "steps": []}
    t0 = time.monotonic()
    for step, seconds in STEPS:
        if args.only and step not in args.only:
            continue
        left = args.budget - (time.monotonic() - t0)
        if step in SM90 and not sm90:
            status, res = f"skipped: wgmma needs sm_90a, the device is {tc.arch_word}", {}
        elif step == "gemm" and tc.index is None:
            status, res = "skipped: the CUDA kernel needs a GPU", {}
        elif left < min(seconds, 20):
            status, res = f"skipped: {left:.0f} s of the budget left", {}
        else:
            status, res = child(step, args.device, out, min(seconds, left))
        summary["steps"].append({"step": step, "status": status, **res})
        summary["seconds"] = round(time.monotonic() - t0, 1)
        (out / "campaign.json").write_text(json.dumps(summary, indent=1) + "\n")
        say(f"{step}: {status}" + (f" ({res.get('seconds')} s) {_figures(res)}" if res else ""))
    say(f"summary ({summary['seconds']} s, {out / 'campaign.json'}):")
    for s in summary["steps"]:
        say(f"  {s['step']:<22} {s['status']:<10} {_figures(s)}")
    return 0


def _figures(res: dict) -> str:
    if "launches_phase2" in res:
        return (f"{res['verdict']}: {res['model']}, {res['launches_phase1']} + {res['launches_phase2']} "
                f"launches of {res['vectors_run']} vectors")
    if "rows_matched" in res:
        return ", ".join(f"{k}: {v}" for k, v in res["rows_matched"].items())
    if "files" in res:
        return f"{res['files']} vector files (results/hardware/make_vectors.py)"
    if "exit" in res:
        return f"{res['command']}: exit {res['exit']}, see gemm.txt"
    return ""


# ---------------------------------------------------------------------------
# --short: the setup, here
# ---------------------------------------------------------------------------

def short(args) -> int:
    """nvcc, the imports, the vectors generator, and every step's probe
    built by nvcc and run in its host mode on a few of its vectors (d from
    the Hopper models): the code a GPU run takes, but the kernel launch;
    then whether a GPU is there."""
    import dataclasses

    try:
        import tcsmt.api  # noqa: F401
        from tcsmt.errors import UserError
        from tcsmt.identify.loop import vector_rows
        from tcsmt.identify.ondevice import device_instruction
        from tcsmt.identify.plan import committed_plan, read_plan
        from tcsmt.observed.vectors import read_vectors
        from tcsmt.probes.device import ProbeDevice, parse_device_spec
    except ImportError as e:
        say(f"setup: cannot import tcsmt: {e}")
        return 1
    problems = []
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        try:
            _make_vectors(folder)
        except subprocess.CalledProcessError as e:
            problems.append(f"make_vectors.py failed: {e.stderr.strip()[-200:]}")
        for step in [*IDENTIFY, *WGMMA]:
            try:
                if step in IDENTIFY:
                    plan = read_plan(committed_plan(IDENTIFY[step]))
                    ins = device_instruction(plan, "wgmma" if step.endswith("wgmma") else None, "cuda")
                    vs = None
                else:
                    vs = read_vectors(folder / f"{step}.vectors.json")
                    ins = vs.pick_instruction(None, "cuda")
                    vs = dataclasses.replace(vs, vectors=vs.vectors[:8], expected=vs.expected[:8])
                with ProbeDevice(parse_device_spec("cuda-host:hopper"), ins) as dev:
                    rows = dev.run_set(vs) if vs else dev.run(vector_rows(plan.vectors[:8], plan.k))
                    say(f"setup: {step}: {ins.name}: built ({dev.launch_records[0]['build']}) and "
                        f"ran in host mode, {len(rows)} rows back")
            except (UserError, OSError) as e:
                problems.append(f"{step}: {e}")
    for p in problems:
        say(f"setup: {p}")
    tc, why = gpu(args.device)
    say(f"GPU: {tc.label}" if tc is not None else f"no GPU: {why}")
    return 1 if problems else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda:0", help="cuda[:N] (default cuda:0), or cuda-host:MODEL")
    ap.add_argument("--budget", type=float, default=480.0, help="seconds for every step together")
    ap.add_argument("--out", help="folder for the results (default results/hardware/<GPU>/campaign-<time>)")
    ap.add_argument("--only", nargs="+", metavar="STEP", help="run only these steps")
    ap.add_argument("--short", action="store_true",
                    help="check the setup here (CI), then say whether a GPU is there")
    ap.add_argument("--step", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.step:
        run_step(args.step, args.device, Path(args.out))
        return 0
    return short(args) if args.short else campaign(args)


if __name__ == "__main__":
    sys.exit(main())
