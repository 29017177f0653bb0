"""The package's rooms and the way data flows through them: a lower room
never imports a higher one (the model does not import the searches, SMT
does not import result files), and tcsmt/ keeps few top-level modules."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "tcsmt"

# lowest first; rooms on one line may not import each other either
ORDER = [
    {"version"}, {"errors"}, {"enums"}, {"processes"}, {"fileio"}, {"invocation"},
    {"runner"},                 # independent jobs: local processes or a Dask cluster
    {"model"},
    {"datapath"},
    {"interp"},
    {"sim", "smt"},
    {"quant"},                  # rounding and block-scaled quantisation, before a unit reads operands
    {"torch"},                  # a unit's arithmetic under PyTorch: through the simulators
    {"accuracy"},               # the error of a unit's results against exact sums
    {"search"},
    {"report"},
    {"properties"},
    {"hardware"},
    {"identify"},
    {"cases"},
    {"regen"},
    {"api"},
    {"cli"},
]
LEVEL = {room: i for i, rooms in enumerate(ORDER) for room in rooms}


def room_of(module: str) -> str | None:
    """tcsmt.search.find -> search; tcsmt.errors -> errors."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "tcsmt" else None


def imports(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "tcsmt":
                for a in node.names:
                    yield f"tcsmt.{a.name}", node.lineno
            else:
                yield node.module, node.lineno
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, node.lineno


def test_every_room_is_placed():
    rooms = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    modules = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"}
    assert rooms | modules <= set(LEVEL), f"place these in ORDER: {(rooms | modules) - set(LEVEL)}"


def test_no_room_imports_a_room_above_it():
    bad = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE)
        if rel.name == "__init__.py" and len(rel.parts) == 1:
            continue                    # the package face re-exports from every room
        own = rel.parts[0].removesuffix(".py")
        for module, line in imports(path):
            other = room_of(module)
            if other is None or other not in LEVEL or other == own:
                continue
            if LEVEL[other] >= LEVEL[own]:
                bad.append(f"{rel}:{line} ({own}) imports {module} ({other})")
    assert not bad, "\n".join(bad)


def test_few_modules_at_the_top():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= 12, top
