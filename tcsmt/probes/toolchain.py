"""What a probe needs to run: a compiler, a driver, a GPU, and what they are.

``--device cuda[:N]`` needs ``nvcc`` on PATH and an NVIDIA GPU; ``--device
hip[:N]`` needs ``hipcc`` and an AMD GPU. Which GPU it is (its name and
architecture: compute capability 9.0, gfx90a), and the runtime's and the
driver's versions, come from the GPU's own runtime: a small query program
is built with the same compiler and run once (``device_info``). Anything
missing is one line naming it (``DeviceMissing``): no compiler, no driver,
no GPU of that index.

``--device cuda-host:MODEL`` and ``hip-host:MODEL`` need only the compiler:
the probes are built for the instruction's own architecture and run on this
machine in their host mode (``./probe --host-d FILE``), reading the d that
MODEL computes instead of launching their kernel (tcsmt.probes.program).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from tcsmt.errors import DeviceMissing, UserError
from tcsmt.instructions.instruction import Instruction

TARGETS = {"cuda": "nvcc", "hip": "hipcc"}
COMPILE_SECONDS = 600.0

QUERY = r"""// tcsmt: which GPU is device N, and the runtime's and driver's versions.
#include <cstdio>
#include <cstdlib>
#include <%(header)s>
#define RT(x) %(prefix)s##x
static void str(const char* s) {
  putchar('"');
  for (; *s; ++s) {
    if (*s == '"' || *s == '\\') putchar('\\');
    if ((unsigned char)*s >= 0x20) putchar(*s);
  }
  putchar('"');
}
int main(int argc, char** argv) {
  const int index = argc > 1 ? atoi(argv[1]) : 0;
  int n = 0, runtime = 0, driver = 0;
  RT(RuntimeGetVersion)(&runtime);
  RT(DriverGetVersion)(&driver);
  RT(Error_t) e = RT(GetDeviceCount)(&n);
  printf("{\"runtime\": %%d, \"driver\": %%d, \"error\": %%d, \"error_text\": ", runtime, driver, (int)e);
  str(e == RT(Success) ? "" : RT(GetErrorString)(e));
  printf(", \"count\": %%d", e == RT(Success) ? n : 0);
  %(prop)s prop;
  if (e == RT(Success) && index < n && RT(GetDeviceProperties)(&prop, index) == RT(Success)) {
    printf(", \"name\": ");
    str(prop.name);
    printf(", \"major\": %%d, \"minor\": %%d, \"arch\": ", prop.major, prop.minor);
    str(%(arch)s);
  }
  printf("}\n");
  return 0;
}
"""
QUERY_PARTS = {
    "cuda": {"header": "cuda_runtime.h", "prefix": "cuda", "prop": "cudaDeviceProp", "arch": '""'},
    "hip": {"header": "hip/hip_runtime.h", "prefix": "hip", "prop": "hipDeviceProp_t",
            "arch": "prop.gcnArchName"},
}
NO_DEVICE, NO_DRIVER = 100, 35      # cudaErrorNoDevice / hipErrorNoDevice, ...InsufficientDriver


@dataclass
class Toolchain:
    """A compiler and, unless the probes run in host mode, the GPU they run on."""
    target: str                   # "cuda" or "hip"
    compiler: str                 # path of nvcc or hipcc
    compiler_version: str
    index: int | None = None      # the GPU; None in host mode
    device: str = ""              # its name, as its runtime gives it
    arch: str = ""                # compute capability "9.0", or "gfx90a:sramecc+:xnack-"
    runtime: str = ""
    driver: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def label(self) -> str:
        if self.index is None:
            return f"{self.target} probes on the host"
        return f"{self.target}:{self.index} ({self.device}, {self.arch_word})"

    @property
    def arch_word(self) -> str:
        """sm_90, gfx90a."""
        if self.target == "cuda":
            return "sm_" + self.arch.replace(".", "")
        return self.arch.split(":")[0]

    def record(self) -> dict:
        out: dict[str, object] = {"target": self.target, "compiler": self.compiler_version}
        if self.index is not None:
            out.update(index=self.index, device=self.device, arch=self.arch,
                       runtime=self.runtime, driver=self.driver, **self.extra)
        return out

    def env(self) -> dict:
        return tool_env(self.target)


def tool_env(target: str) -> dict:
    """The environment compilers and probes run in: hipcc for AMD even where
    nvcc is installed too (Debian's hipcc picks NVIDIA then); CUDA devices
    numbered as nvidia-smi numbers them."""
    env = dict(os.environ)
    if target == "hip":
        env["HIP_PLATFORM"] = "amd"
    else:
        env.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    return env


def find_compiler(target: str) -> tuple[str, str]:
    """(path, version line) of nvcc or hipcc on PATH."""
    name = TARGETS[target]
    path = shutil.which(name)
    if path is None:
        kit = "the CUDA toolkit's bin folder" if target == "cuda" else "ROCm's bin folder (or Debian's hipcc)"
        raise DeviceMissing(f"no {target.upper()} compiler: {name} is not on PATH (add {kit})")
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60,
                             env=tool_env(target)).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        raise DeviceMissing(f"{path} --version failed: {e}") from None
    return path, version_line(target, out)


def version_line(target: str, text: str) -> str:
    want = "release" if target == "cuda" else "HIP version"
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    hit = [x for x in lines if want in x]
    return f"{TARGETS[target]}: " + (hit[0] if hit else lines[-1] if lines else "unknown version")


def run_checked(cmd: list[str], what: str, timeout: float, env: dict | None = None,
                cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run a compiler or probe; a one-line error when it cannot start or time runs out."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)
    except subprocess.TimeoutExpired:
        raise UserError(f"{what} did not finish within {timeout:g} s") from None
    except OSError as e:
        raise DeviceMissing(f"{what} could not start: {e}") from None


def first_error(text: str) -> str:
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    errs = [x for x in lines if "error" in x.lower()]
    return (errs or lines or ["no output"])[0][:300]


def device_info(target: str, index: int, workdir: Path) -> Toolchain:
    """The compiler, and GPU ``index`` as its runtime describes it."""
    compiler, version = find_compiler(target)
    src = workdir / ("query.cu" if target == "cuda" else "query.hip")
    src.write_text(QUERY % QUERY_PARTS[target])
    exe = workdir / "query"
    cmd = [compiler, "-O1", str(src), "-o", str(exe)]
    built = run_checked(cmd, f"{TARGETS[target]} (the device query)", COMPILE_SECONDS, tool_env(target))
    if built.returncode != 0:
        raise DeviceMissing(f"{TARGETS[target]} cannot build a {target.upper()} program here: "
                            f"{first_error(built.stderr + built.stdout)}")
    ran = run_checked([str(exe), str(index)], "the device query", 120.0, tool_env(target))
    try:
        info = json.loads(ran.stdout)
    except json.JSONDecodeError:
        raise DeviceMissing(f"no {target.upper()} runtime: the device query ended with status "
                            f"{ran.returncode}: {first_error(ran.stderr) or 'no output'}") from None
    return _toolchain(target, index, compiler, version, info)


def _toolchain(target: str, index: int, compiler: str, version: str, info: dict) -> Toolchain:
    vendor = "NVIDIA" if target == "cuda" else "AMD"
    if info["error"] == NO_DRIVER:
        raise DeviceMissing(f"no {vendor} driver that this {target.upper()} runtime can use: "
                            f"{info['error_text']}")
    if info["error"] == NO_DEVICE:
        raise DeviceMissing(f"no {vendor} GPU: the {target.upper()} runtime finds none "
                            f"({info['error_text']})")
    if info["error"]:
        raise DeviceMissing(f"no {target.upper()} device: {info['error_text']} "
                            f"(error {info['error']})")
    if index >= info["count"] or "name" not in info:
        raise DeviceMissing(f"no {target.upper()} device {index}: the runtime sees {info['count']}")
    arch = f"{info['major']}.{info['minor']}" if target == "cuda" else info["arch"]
    tc = Toolchain(target, compiler, version, index, info["name"], arch,
                   _version(target, info["runtime"]), _version(target, info["driver"]))
    tc.extra.update(driver_release(target))
    return tc


def _version(target: str, n: int) -> str:
    if target == "cuda":
        return f"{n // 1000}.{(n % 1000) // 10}"
    return str(n)


def driver_release(target: str) -> dict:
    """The kernel driver's own version where the system says it: nvidia-smi's
    driver_version, or the amdgpu module's."""
    if target == "cuda" and shutil.which("nvidia-smi"):
        try:
            out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                 capture_output=True, text=True, timeout=60).stdout.split()
        except (OSError, subprocess.TimeoutExpired):
            out = []
        return {"driver_release": out[0]} if out else {}
    amd = Path("/sys/module/amdgpu/version")
    if target == "hip" and amd.is_file():
        return {"driver_release": amd.read_text().strip()}
    return {}


# ---------------------------------------------------------------------------
# Compiling a probe for the device (or for the host mode)
# ---------------------------------------------------------------------------

def cuda_archs(nvcc: str) -> list[int]:
    """The compute capabilities nvcc builds code for (75, 80, ... 120)."""
    out = run_checked([nvcc, "--list-gpu-arch"], "nvcc --list-gpu-arch", 60.0).stdout
    return sorted({int(m) for m in re.findall(r"compute_(\d+)\b", out)})


def arch_flags(tc: Toolchain, ins: Instruction) -> list[list[str]]:
    """The architecture options to build the probe with, in the order to try."""
    if tc.target == "hip":
        if tc.index is None:       # gfx940 runs gfx942's instructions; Debian's clang 15 knows only it
            extra = ["gfx940"] if "gfx942" in ins.archs and "gfx940" not in ins.archs else []
            return [[f"--offload-arch={a}"] for a in ins.archs + tuple(extra)]
        gfx = tc.arch_word
        if gfx not in ins.archs:
            raise DeviceMissing(f"{tc.label} cannot run {ins.name}: it runs on {', '.join(ins.archs)}")
        return [[f"--offload-arch={gfx}"]]
    if ins.arch.endswith("a"):
        cc = ins.arch.removeprefix("sm_")
        if tc.index is not None and tc.arch_word != ins.arch.removesuffix("a"):
            raise DeviceMissing(f"{tc.label} cannot run {ins.name}: it needs exactly {ins.arch}")
        return [["-gencode", f"arch=compute_{cc},code=sm_{cc}"]]
    if tc.index is None:
        have = [a for a in cuda_archs(tc.compiler) if a >= ins.min_sm]
        cc = str(have[0]) if have else str(ins.min_sm)
    else:
        cc = tc.arch.replace(".", "")
        if int(cc) < ins.min_sm:
            raise DeviceMissing(f"{tc.label} cannot run {ins.name}: it needs sm_{ins.min_sm} or newer")
    return [["-gencode", f"arch=compute_{cc},code=sm_{cc}"]]


def compile_probe(tc: Toolchain, ins: Instruction, src: Path, exe: Path) -> str:
    """Build the probe; the command that built it."""
    err = ""
    for flags in arch_flags(tc, ins):
        cmd = [tc.compiler, "-O2", *flags, str(src), "-o", str(exe)]
        done = run_checked(cmd, f"{TARGETS[tc.target]} (the probe)", COMPILE_SECONDS, tc.env())
        if done.returncode == 0:
            return " ".join([Path(tc.compiler).name, *cmd[1:-3], src.name, "-o", exe.name])
        err = first_error(done.stderr + done.stdout)
    raise UserError(f"{TARGETS[tc.target]} could not build the probe for {ins.name}: {err}")
