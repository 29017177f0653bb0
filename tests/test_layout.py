"""The package's rooms and the way data flows through them: a lower room
never imports a higher one (the model does not import the searches, SMT
does not import result files), no module imports itself back through others
(no import circle, inside a room either), and tcsmt/ keeps few top-level
modules."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "tcsmt"

# lowest first; rooms on one line may not import each other either
ORDER = [
    {"version"}, {"errors"}, {"environment"}, {"enums"}, {"processes"}, {"streams"},
    {"schemas"},                # the JSON Schemas of the files (package data), checked by fileio's writer
    {"fileio"}, {"budget"}, {"invocation"},
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
    {"instructions"},           # the matrix instructions a probe runs: tables, layouts
    {"observed"},               # what units returned: recorded data, observations, vector files
    {"probes"},                 # writing CUDA and HIP probes
    {"judge"},                  # rows against models: check, conformance
    {"testing"},                # a kernel author's pytest: D against a model, explained as check does
    {"peer"},                   # MMA-Sim, the peer simulator: its instruction map, agreement
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


def _type_checking_only(tree: ast.AST) -> set[int]:
    """ids of the import nodes under ``if TYPE_CHECKING:`` (names for type
    hints, never imported when the program runs)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            out |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return out


def imports(path: Path):
    """(module, line) of every import in a file, at the top or inside a
    function alike; imports for type checking only are left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    hints = _type_checking_only(tree)
    for node in ast.walk(tree):
        if id(node) in hints:
            continue
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


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def import_graph() -> dict[str, set[str]]:
    """module -> the tcsmt modules it imports (``from tcsmt.x import y``
    counts as importing tcsmt.x.y where that is a module, else tcsmt.x)."""
    paths = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {m: set() for m in paths}
    for m, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        hints = _type_checking_only(tree)
        for node in ast.walk(tree):
            if id(node) in hints:
                continue
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for a in node.names:
                    full = f"{node.module}.{a.name}"
                    target = full if full in paths else node.module
                    if target in paths:
                        graph[m].add(target)
            elif isinstance(node, ast.Import):
                graph[m] |= {a.name for a in node.names if a.name in paths}
        graph[m].discard(m)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: strongly connected groups of more than one module."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circle():
    """No module imports itself back through others, the package face
    (tcsmt/__init__.py) included: a module that needs the version imports
    tcsmt.version, not tcsmt."""
    assert circles(import_graph()) == []


def test_the_circle_check_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_every_room_ships():
    """`pip install .` installs the packages pyproject.toml lists: a room left
    out of the list would be missing from every non-editable install."""
    import tomllib
    config = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    rooms = {module_name(p.parent) for p in PACKAGE.rglob("__init__.py")}
    assert rooms <= listed, f"add to [tool.setuptools] packages: {sorted(rooms - listed)}"


# What a command may import besides tcsmt.api: the command line's own modules,
# the error kinds and enums, the option constants, and what prints a document.
COMMAND_IMPORTS = {
    "tcsmt.api", "tcsmt.cli", "tcsmt.errors", "tcsmt.enums", "tcsmt.version",
    "tcsmt.invocation",                                      # the command line, as result files record it
    "tcsmt.smt.service",                                     # DEFAULT_TIMEOUT, SOLVERS (option choices)
    "tcsmt.search.domain",                                   # --nonzero, --signs...: the Domain they build
    "tcsmt.runner",                                          # --scheduler: where jobs run
    "tcsmt.environment",                                     # the limits of options (--jobs)
}
RENDERERS = ("_lines", "_table", "_csv", "dumps", "all_matched", "_summary", "print_")
"""Names a command may import from any room: functions that turn a document
into text (and all_matched, which reads a check document's verdict). From
tcsmt.report, which renders documents, anything but a writer."""


def test_commands_only_parse_call_and_print():
    """Every command parses its options, calls tcsmt.api (one call per
    command, returning the document it prints) and prints; the work is in
    the rooms, reachable from Python."""
    bad = []
    for path in (PACKAGE / "cli").glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or not node.module or not node.module.startswith("tcsmt"):
                continue
            if any(node.module == m or node.module.startswith(m + ".") for m in COMMAND_IMPORTS):
                continue
            names = [a.name for a in node.names]
            if node.module == "tcsmt" and set(names) <= {"api", "runner", "invocation"}:
                continue
            if node.module.startswith("tcsmt.report.") and not any(n.startswith("write") for n in names):
                continue                                     # the report room renders documents
            if all(n.endswith(RENDERERS) or n.startswith("print_") for n in names):
                continue
            bad.append(f"cli/{path.name}:{node.lineno} imports {', '.join(names)} from {node.module}")
    assert not bad, "\n".join(bad)


def test_no_module_reaches_into_another_s_private_names():
    """A name with a leading underscore is private to its module: no other
    module imports it (``from tcsmt.x import _y``) or reads it through the
    module (``x._y``)."""
    bad = []
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        modules = set()                        # names bound to tcsmt modules in this file
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tcsmt"):
                for a in node.names:
                    if a.name.startswith("_") and not a.name.startswith("__"):
                        where = f"{path.relative_to(PACKAGE)}:{node.lineno}"
                        bad.append(f"{where} imports {node.module}.{a.name}")
                    modules.add(a.asname or a.name)
            elif isinstance(node, ast.Import):
                modules |= {a.asname for a in node.names if a.asname and a.name.startswith("tcsmt")}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in modules and node.attr.startswith("_")
                    and not node.attr.startswith("__")):
                bad.append(f"{path.relative_to(PACKAGE)}:{node.lineno} reads {node.value.id}.{node.attr}")
    assert not bad, "\n".join(bad)
