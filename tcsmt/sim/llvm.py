"""LLVM IR (tcsmt.interp.kernel_cpu) compiled to machine code for this
CPU with llvmlite, cached on disk, and called through ctypes.

A module's object code is written to ``cache_dir()/tcsmt_cpu_SHA.o``, SHA
the sha256 of the IR text, the CPU and its features and llvmlite's
version: an unchanged datapath loads the object instead of compiling it
(milliseconds), a changed one is a new file. Nothing in the IR depends on
K, M or N, so neither does the cache. Calls release the GIL (ctypes), so
threads run kernels side by side.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import importlib.util
import os
import threading
from pathlib import Path

from tcsmt import environment
from tcsmt.errors import BadOption
from tcsmt.fileio import write_atomic

_LOCK = threading.Lock()


def cache_dir() -> Path:
    """$TCSMT_KERNEL_CACHE, else ~/.cache/tcsmt/kernels."""
    env = environment.kernel_cache()
    return Path(env) if env else Path.home() / ".cache" / "tcsmt" / "kernels"


def writable_cache() -> Path:
    """cache_dir(), made if missing; BadOption (naming TCSMT_KERNEL_CACHE
    when it is set) when it is not a folder this process can write."""
    folder = cache_dir()
    what = "TCSMT_KERNEL_CACHE" if environment.kernel_cache() else "the kernel cache"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise BadOption(f"{what} {folder}: not a folder tcsmt can make or write "
                        f"({e.strerror or e})") from None
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise BadOption(f"{what} {folder}: not a folder tcsmt can write")
    return folder


def have_llvm() -> bool:
    return importlib.util.find_spec("llvmlite") is not None


@functools.lru_cache(maxsize=1)
def _llvm():
    import llvmlite.binding as llvm
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    return llvm


def _machine():
    llvm = _llvm()
    return llvm.Target.from_default_triple().create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(), opt=3, jit=True)


@functools.lru_cache(maxsize=1)
def target() -> str:
    """The CPU the object code is made for, and the compiler's version."""
    import llvmlite
    llvm = _llvm()
    features = llvm.get_host_cpu_features().flatten()
    return f"{llvm.get_host_cpu_name()} {features} llvmlite {llvmlite.__version__}"


def digest(text: str) -> str:
    return hashlib.sha256((target() + "\n" + text).encode()).hexdigest()[:24]


def compile_object(text: str) -> bytes:
    """The IR optimised (LLVM's -O3 pipeline) and compiled to object code."""
    llvm, tm = _llvm(), _machine()
    mod = llvm.parse_assembly(text)
    mod.verify()
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
    return tm.emit_object(mod)


class Library:
    """The functions of one compiled module, by name, as ctypes functions
    taking pointers and 64-bit ints. ``compiled``: whether this process
    compiled it (else it was loaded from the cache)."""

    def __init__(self, text: str, name: str):
        with _LOCK:               # LLVM's context is one per process: one thread at a time
            self._load(text, name)
        self.name = name
        self._fns: dict = {}

    def _load(self, text: str, name: str) -> None:
        llvm = _llvm()
        path = cache_dir() / f"tcsmt_cpu_{digest(text)}.o"
        obj = path.read_bytes() if path.exists() else None
        self.compiled = obj is None
        if obj is None:
            obj = compile_object(text)
            write_atomic(writable_cache() / path.name, lambda f: f.write(obj), binary=True)
        engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), _machine())
        engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        engine.finalize_object()
        self._engine = engine

    def function(self, name: str, nargs: int):
        fn = self._fns.get(name)
        if fn is None:
            with _LOCK:
                fn = self._function(name, nargs)
        return fn

    def _function(self, name: str, nargs: int):
        fn = self._fns.get(name)
        if fn is None:
            addr = self._engine.get_function_address(name)
            proto = ctypes.CFUNCTYPE(None, *([ctypes.c_int64] * nargs))
            fn = self._fns[name] = proto(addr)
        return fn
