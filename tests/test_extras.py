"""A missing optional extra is one line naming the pip command that
installs it, on every path that needs it, and writes nothing; the
documentation names the extras each task needs.

The extras are installed here (the dev extra), so each case hides the
modules of one extra from a fresh interpreter (sys.modules[name] = None
makes their import fail as a missing package's does) and runs the command
line in it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from checkout import ROOT

PLOT = ("matplotlib", "matplotlib.pyplot")
CLUSTER = ("dask", "dask.array", "distributed")

CASES = {
    "error --plot": (PLOT, "plot", ["error", "volta", "--m", "2", "--n", "2", "--k", "16",
                                    "--plot", "err.png", "-o", "err.json"], {}),
    "gemm --scheduler": (CLUSTER, "cluster", ["gemm", "--arch", "hopper", "A.npy", "B.npy", "-o", "D.npy",
                                              "--scheduler", "tcp://127.0.0.1:9"], {}),
    "gemm with TCSMT_SCHEDULER": (CLUSTER, "cluster", ["gemm", "--arch", "hopper", "A.npy", "B.npy",
                                                       "-o", "D.npy"],
                                  {"TCSMT_SCHEDULER": "tcp://127.0.0.1:9"}),
    "agreement --scheduler": (CLUSTER, "cluster", ["agreement", "volta", "--scheduler", "tcp://127.0.0.1:9",
                                                   "-o", "agreement.json"], {}),
    "gemm --backend cuda": (("numba.cuda",), "cuda", ["gemm", "--arch", "hopper", "--backend", "cuda",
                                                      "A.npy", "B.npy", "-o", "D.npy"], {}),
}


def _run_hiding(hidden, argv, cwd, env=None):
    code = textwrap.dedent(f"""
        import sys
        for name in {list(hidden)!r}:
            sys.modules[name] = None
        from tcsmt.cli import main
        sys.argv = ["tcsmt"] + {list(argv)!r}
        main()
    """)
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env={**os.environ, **(env or {})})


@pytest.mark.parametrize("case", list(CASES))
def test_a_missing_extra_is_one_line_naming_its_pip_command(case, tmp_path):
    hidden, extra, argv, env = CASES[case]
    np.save(tmp_path / "A.npy", np.ones((4, 16), np.float16))
    np.save(tmp_path / "B.npy", np.ones((16, 4), np.float16))
    before = sorted(p.name for p in tmp_path.iterdir())
    run = _run_hiding(hidden, argv, tmp_path, env)
    err = run.stderr.strip()
    assert run.returncode == 2, (run.returncode, run.stdout, run.stderr)
    assert err.count("\n") == 0 and "Traceback" not in err, err
    assert f"pip install 'tcsmt[{extra}]'" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == before, "a refused command wrote a file"


def test_tcsmt_torch_without_torch_names_its_extra():
    code = "import sys; sys.modules['torch'] = None\nimport tcsmt.torch"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode != 0
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("ModuleNotFoundError: tcsmt.torch needs PyTorch"), last
    assert "pip install 'tcsmt[torch]'" in last, last


# the pages that say what a task needs, and the extras each names
EVERY = ("torch", "torchao", "plot", "cluster", "cuda", "mmasim", "docs", "test", "dev")
NEEDS = {
    "docs/getting-started.md": EVERY,
    "README.md": EVERY,
    "docs/how-to/gemm.md": ("torch", "plot", "cuda", "cluster"),
    "docs/cluster.md": ("cluster",),
    "docs/gpu.md": ("cuda",),
    "docs/ml-engineers.md": ("torch", "torchao"),
}


@pytest.mark.parametrize("page", list(NEEDS))
def test_the_docs_name_the_extras_a_task_needs(page):
    text = (ROOT / page).read_text(encoding="utf-8")
    for extra in NEEDS[page]:
        assert any(form in text for form in (f"[{extra}]", f"[{extra},", f",{extra}]")), \
            f"{page} does not name the pip command of the extra {extra}"
