"""How a probe is built: the compiler command for its instruction's target."""

from __future__ import annotations

from tcsmt.instructions.instruction import AMD_APIS, Instruction


def build_command(ins: Instruction, source: str = "probe.cu", exe: str = "probe") -> str:
    if ins.api in AMD_APIS:
        archs = " ".join(f"--offload-arch={a}" for a in ins.archs)
        return f"hipcc -O2 {archs} {source} -o {exe}"
    if ins.arch.endswith("a"):       # arch-specific features: no PTX for other GPUs
        cc = ins.arch.removeprefix("sm_")
        return f"nvcc -O2 -gencode arch=compute_{cc},code=sm_{cc} {source} -o {exe}"
    return f"nvcc -O2 -arch={ins.arch} {source} -o {exe}"
