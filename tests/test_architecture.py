"""Guard tests for the rules written in docs/architecture.md.

- every module is in the layer table, imports go to the same or a lower layer, with no cycle;
- imports inside functions only as the allow-list says;
- ``mcpkit.__all__`` is sorted and matches the package's public names;
- ``import mcpkit`` loads no CLI or HTTP code, prints nothing and configures no logging.

The rules are read from the doc's two machine-readable tables, so the doc and the code cannot
drift apart: change the doc and the test follows.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import logging
import re
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE_DIR = ROOT / "mcpkit"
DOC = ROOT / "docs" / "architecture.md"
DOC_NAME = "docs/architecture.md"

LAYER_HEADER = ("layer", "modules")
ALLOW_HEADER = ("function-level import allow-list",)
MODULE_NAME = re.compile(r"mcpkit(\.\w+)*")
IMPORTER_PATTERN = re.compile(r"[A-Za-z_]\w*(\.\w+)*(\.\*)?")
ANY_MODULE = re.compile(r"[A-Za-z_]\w*(\.\w+)*")

# Modules `import mcpkit` must not load (each with its submodules).
FORBIDDEN_ON_IMPORT = (
    "click",
    "uvicorn",
    "starlette",
    "httpx",
    "anyio",
    "jsonschema",
    "jwt",
    "cryptography",
    "redis",
    "watchfiles",
    "mcpkit._explicit_schema",
    "mcpkit.protocol.fleet.redis_fleet",
    "opentelemetry",
    "mcpkit.protocol.spans",
    "mcpkit.protocol.fleet.redis_store",
    "mcpkit.cli",
    "mcpkit.transports.http",
    "mcpkit.transports.stdio",
    "pydantic",  # waits for the first need (a validator, the warm-up)
    "pydantic_core",  # the JSON codec: its first use (json reads and writes till the warm-up)
    "mcpkit._pydantic",
    "mcpkit._pydantic_compat",
)
# The highest layer `import mcpkit` may load.
IMPORT_LAYER_CEILING = 3

AllowList = list[tuple[str, tuple[str, ...]]]


# ---------------------------------------------------------------------------------------------
# Reading the doc's tables


def split_row(line: str) -> list[str]:
    """The cells of one Markdown table row, stripped."""
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def table_rows(text: str, header: Sequence[str]) -> list[list[str]]:
    """The body rows of the Markdown table whose header row starts with the cells ``header``."""
    lines = iter(text.splitlines())
    for line in lines:
        if line.startswith("|") and split_row(line)[: len(header)] == list(header):
            break
    else:
        row = " | ".join(header)
        raise AssertionError(f"{DOC_NAME} has no table with the header row | {row} |")
    next(lines, None)  # the |---| separator
    rows: list[list[str]] = []
    for line in lines:
        if not line.startswith("|"):
            break
        rows.append(split_row(line))
    return rows


def backticked(cell: str, pattern: re.Pattern[str]) -> list[str]:
    """The `names` in a cell, each checked against ``pattern``."""
    names = re.findall(r"`([^`]*)`", cell)
    bad = [name for name in names if not pattern.fullmatch(name)]
    assert not bad, f"{DOC_NAME}: {bad} in {cell!r} are not dotted module names"
    return names


def parse_layers(text: str) -> dict[str, int]:
    """The ``| layer | modules |`` table: module name -> layer number."""
    layers: dict[str, int] = {}
    for label, modules, *_ in table_rows(text, LAYER_HEADER):
        found = re.fullmatch(r"L(\d+)", label)
        assert found, f"{DOC_NAME}: layer label {label!r} is not L<number>"
        for module in backticked(modules, MODULE_NAME):
            assert module not in layers, f"{DOC_NAME}: {module} is listed in two layers"
            layers[module] = int(found.group(1))
    assert layers, f"{DOC_NAME}: the layer table lists no modules"
    return layers


def parse_allow_list(text: str) -> AllowList:
    """The allow-list table: (importer pattern, modules it may import inside functions)."""
    allow: AllowList = []
    for importer, imported, *_ in table_rows(text, ALLOW_HEADER):
        patterns = backticked(importer, IMPORTER_PATTERN)
        assert len(patterns) == 1, f"{DOC_NAME}: name one importer per allow-list row: {importer!r}"
        allow.append((patterns[0], tuple(backticked(imported, ANY_MODULE))))
    return allow


# ---------------------------------------------------------------------------------------------
# Reading the package's imports


@dataclass(frozen=True)
class Import:
    """One imported module, as seen from the module that imports it."""

    importer: str
    target: str
    line: int
    module_level: bool  # runs when the importer is imported
    type_only: bool  # under `if TYPE_CHECKING:`


def module_name(path: Path) -> str:
    """The dotted name of a file (``mcpkit/cli/commands.py`` -> ``mcpkit.cli.commands``; a
    package's ``__init__`` is the package)."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_modules() -> dict[str, Path]:
    """Every module file under ``mcpkit/``, by dotted name."""
    return {module_name(path): path for path in sorted(PACKAGE_DIR.rglob("*.py"))}


def is_type_checking(test: ast.expr) -> bool:
    """``if TYPE_CHECKING:`` or ``if typing.TYPE_CHECKING:``."""
    name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", None)
    return name == "TYPE_CHECKING"


def resolve_from(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module an ``from ... import`` statement reads from."""
    if node.level == 0:
        return node.module or ""
    parts = (importer if is_package else importer.rpartition(".")[0]).split(".")
    base = parts[: len(parts) - node.level + 1]
    assert base, f"{importer}: relative import beyond the top-level package (line {node.lineno})"
    return ".".join([*base, node.module] if node.module else base)


class ImportCollector(ast.NodeVisitor):
    """Collects every import of one module, with where it happens."""

    def __init__(self, importer: str, is_package: bool, known: set[str]) -> None:
        self.importer = importer
        self.is_package = is_package
        self.known = known
        self.nesting = 0  # inside def / class bodies
        self.type_only = False
        self.imports: list[Import] = []

    def nested(self, node: ast.AST) -> None:
        self.nesting += 1
        self.generic_visit(node)
        self.nesting -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = nested

    def visit_If(self, node: ast.If) -> None:
        if not is_type_checking(node.test):
            self.generic_visit(node)
            return
        outer, self.type_only = self.type_only, True
        for stmt in node.body:
            self.visit(stmt)
        self.type_only = outer
        for stmt in node.orelse:
            self.visit(stmt)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.record(alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = resolve_from(self.importer, self.is_package, node)
        for alias in node.names:
            candidate = f"{base}.{alias.name}"
            self.record(candidate if candidate in self.known else base, node)

    def record(self, target: str, node: ast.stmt) -> None:
        self.imports.append(
            Import(self.importer, target, node.lineno, self.nesting == 0, self.type_only)
        )


def collect_imports(importer: str, source: str, is_package: bool, known: set[str]) -> list[Import]:
    """Every import in ``source``, the text of module ``importer``."""
    collector = ImportCollector(importer, is_package, known)
    collector.visit(ast.parse(source))
    return collector.imports


def all_imports(modules: dict[str, Path], known: set[str]) -> list[Import]:
    """Every import of every module under ``mcpkit/``."""
    found: list[Import] = []
    for name, path in modules.items():
        source = path.read_text(encoding="utf-8")
        found += collect_imports(name, source, path.name == "__init__.py", known)
    return found


def is_mcpkit(module: str) -> bool:
    return module == "mcpkit" or module.startswith("mcpkit.")


def covers(name: str, module: str) -> bool:
    """``name`` is ``module`` or a package above it."""
    return module == name or module.startswith(name + ".")


def allowed(imp: Import, allow: AllowList) -> bool:
    """The allow-list permits this function-level import."""
    for importer, targets in allow:
        if importer.endswith(".*"):
            matches = covers(importer[:-2], imp.importer)
        else:
            matches = imp.importer == importer
        if matches and any(covers(target, imp.target) for target in targets):
            return True
    return False


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as ``[a, b, ..., a]``, or None."""
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return None
        for successor in sorted(graph.get(node, ())):
            cycle = visit(successor, [*path, node])
            if cycle:
                return cycle
        done.add(node)
        return None

    for start in sorted(graph):
        cycle = visit(start, [])
        if cycle:
            return cycle
    return None


def where(imp: Import) -> str:
    return f"{imp.importer} (line {imp.line}) imports {imp.target}"


# ---------------------------------------------------------------------------------------------
# Fixtures


@pytest.fixture(scope="module")
def doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def layers(doc_text: str) -> dict[str, int]:
    return parse_layers(doc_text)


@pytest.fixture(scope="module")
def allow_list(doc_text: str) -> AllowList:
    return parse_allow_list(doc_text)


@pytest.fixture(scope="module")
def modules() -> dict[str, Path]:
    return package_modules()


@pytest.fixture(scope="module")
def imports(modules: dict[str, Path], layers: dict[str, int]) -> list[Import]:
    return all_imports(modules, set(modules) | set(layers))


# ---------------------------------------------------------------------------------------------
# The machinery, on small inputs (so that a bug here cannot make the guards pass vacuously)

KNOWN = {"mcpkit", "mcpkit.app", "mcpkit.tools", "mcpkit.protocol", "mcpkit.protocol.jsonrpc"}


@pytest.mark.parametrize(
    ("importer", "is_package", "source", "expected"),
    [
        ("mcpkit.tools", False, "import json", ("json", True, False)),
        ("mcpkit.tools", False, "from . import app", ("mcpkit.app", True, False)),
        ("mcpkit.tools", False, "from .app import App", ("mcpkit.app", True, False)),
        ("mcpkit.tools", False, "from mcpkit import App", ("mcpkit", True, False)),
        ("mcpkit", True, "from .app import App", ("mcpkit.app", True, False)),
        (
            "mcpkit.protocol",
            True,
            "from . import jsonrpc",
            ("mcpkit.protocol.jsonrpc", True, False),
        ),
        ("mcpkit.protocol.jsonrpc", False, "from ..tools import x", ("mcpkit.tools", True, False)),
        ("mcpkit.tools", False, "if True:\n    import a", ("a", True, False)),
        (
            "mcpkit.tools",
            False,
            "try:\n    import a\nexcept ImportError:\n    pass",
            ("a", True, False),
        ),
        ("mcpkit.tools", False, "def f():\n    import a", ("a", False, False)),
        ("mcpkit.tools", False, "class C:\n    import a", ("a", False, False)),
        ("mcpkit.tools", False, "async def f():\n    from a import b", ("a", False, False)),
        ("mcpkit.tools", False, "if TYPE_CHECKING:\n    import a", ("a", True, True)),
        ("mcpkit.tools", False, "if typing.TYPE_CHECKING:\n    import a", ("a", True, True)),
        (
            "mcpkit.tools",
            False,
            "if TYPE_CHECKING:\n    pass\nelse:\n    import a",
            ("a", True, False),
        ),
    ],
    ids=[
        "absolute",
        "relative-submodule",
        "relative-name",
        "package-name",
        "relative-in-init",
        "relative-submodule-in-subpackage",
        "two-dots",
        "top-level-if",
        "top-level-try",
        "in-function",
        "in-class",
        "in-async-function",
        "type-checking",
        "typing-dot-type-checking",
        "type-checking-else",
    ],
)
def test_collect_imports(
    importer: str, is_package: bool, source: str, expected: tuple[str, bool, bool]
) -> None:
    (found,) = collect_imports(importer, source, is_package, KNOWN)
    assert (found.target, found.module_level, found.type_only) == expected


def test_relative_import_beyond_the_package_is_reported() -> None:
    with pytest.raises(AssertionError, match="beyond the top-level package"):
        collect_imports("mcpkit.tools", "from ... import x", False, KNOWN)


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": {"b"}, "b": {"c"}}, None),
        ({"a": {"b"}, "b": {"a"}}, ["a", "b", "a"]),
        ({"a": {"b"}, "b": {"c"}, "c": {"b"}}, ["b", "c", "b"]),
        ({"a": {"b", "c"}, "b": {"d"}, "c": {"d"}}, None),
    ],
    ids=["chain", "two-cycle", "cycle-below-start", "diamond"],
)
def test_find_cycle(graph: dict[str, set[str]], expected: list[str] | None) -> None:
    assert find_cycle(graph) == expected


@pytest.mark.parametrize(
    ("importer", "target", "expected"),
    [
        ("mcpkit.cli.commands", "uvicorn", True),
        ("mcpkit.cli.commands", "uvicorn.config", True),
        ("mcpkit.cli", "uvicorn", True),
        ("mcpkit.cli.commands", "json", False),
        ("mcpkit.app", "mcpkit.transports.http", True),
        ("mcpkit.app.sub", "mcpkit.transports.http", False),
        ("mcpkit.tools", "mcpkit.transports.http", False),
        ("mcpkit.clix", "uvicorn", False),
    ],
)
def test_allowed(importer: str, target: str, expected: bool) -> None:
    allow: AllowList = [("mcpkit.app", ("mcpkit.transports.http",)), ("mcpkit.cli.*", ("uvicorn",))]
    assert allowed(Import(importer, target, 1, False, False), allow) is expected


def test_table_rows_without_the_table_fails() -> None:
    with pytest.raises(AssertionError, match=r"header row \| layer \| modules \|"):
        table_rows("# nothing here\n", LAYER_HEADER)


def test_parse_layers_rejects_a_module_in_two_layers() -> None:
    text = "| layer | modules |\n|---|---|\n| L0 | `mcpkit.a` |\n| L1 | `mcpkit.a` |\n"
    with pytest.raises(AssertionError, match="listed in two layers"):
        parse_layers(text)


# ---------------------------------------------------------------------------------------------
# Layers, cycles and function-level imports


def test_layer_table_is_well_formed(layers: dict[str, int], allow_list: AllowList) -> None:
    assert "mcpkit" in layers
    assert allow_list, f"{DOC_NAME}: the allow-list table is empty"
    for importer, _ in allow_list:
        assert importer.removesuffix(".*") in layers, f"allow-list names unknown module {importer}"


def test_every_module_is_in_the_layer_table(
    modules: dict[str, Path], layers: dict[str, int]
) -> None:
    missing = sorted(set(modules) - set(layers))
    assert not missing, (
        f"add these modules to the `| layer | modules |` table in {DOC_NAME}: {', '.join(missing)}"
    )


def test_imports_go_to_the_same_or_a_lower_layer(
    imports: list[Import], layers: dict[str, int], allow_list: AllowList
) -> None:
    # The allow-listed lazy imports (App.run/App.asgi loading a transport) are the one
    # sanctioned way up the layers: they run on call, never at import; the same pairs may
    # also be imported for typing only (App.asgi's signature names HttpApp's types).
    wrong = {
        f"{where(imp)}: L{layers.get(imp.importer)} -> "
        f"{'L' + str(layers[imp.target]) if imp.target in layers else 'a module not in the table'}"
        for imp in imports
        if imp.importer in layers
        and is_mcpkit(imp.target)
        and layers.get(imp.target, 99) > layers[imp.importer]
        and ((imp.module_level and not imp.type_only) or not allowed(imp, allow_list))
    }
    assert not wrong, f"imports against the layers of {DOC_NAME}:\n" + "\n".join(sorted(wrong))


def test_no_import_cycles(imports: list[Import], allow_list: AllowList) -> None:
    """Type-only imports count: a loop hidden behind ``if TYPE_CHECKING:`` is still a loop in
    the design (the server's handlers once took the whole ``Server`` that way). The one
    exception is the allow-listed edge itself: ``App.asgi`` names the ``HttpApp`` type it loads
    on call, the same upward edge the allow-list already grants."""
    graph: dict[str, set[str]] = {}
    for imp in imports:
        if imp.type_only and allowed(imp, allow_list):
            continue
        if imp.module_level and is_mcpkit(imp.target) and imp.target != imp.importer:
            graph.setdefault(imp.importer, set()).add(imp.target)
    cycle = find_cycle(graph)
    assert cycle is None, "module-level import cycle: " + " -> ".join(cycle or [])


def test_function_level_imports_are_on_the_allow_list(
    imports: list[Import], allow_list: AllowList
) -> None:
    wrong = {
        where(imp)
        for imp in imports
        if not imp.module_level and not imp.type_only and not allowed(imp, allow_list)
    }
    assert not wrong, (
        f"imports inside functions that the allow-list in {DOC_NAME} does not permit "
        "(move them to the top of the module; never import late to dodge a cycle):\n"
        + "\n".join(sorted(wrong))
    )


# ---------------------------------------------------------------------------------------------
# The public API: mcpkit.__all__


def runtime_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements run at import: the body and its top-level if/try/with blocks."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.If):
            if not is_type_checking(stmt.test):
                yield from runtime_statements(stmt.body)
            yield from runtime_statements(stmt.orelse)
        elif isinstance(stmt, ast.With):
            yield from runtime_statements(stmt.body)
        elif isinstance(stmt, ast.Try):
            for block in (stmt.body, stmt.orelse, stmt.finalbody):
                yield from runtime_statements(block)
            for handler in stmt.handlers:
                yield from runtime_statements(handler.body)


def bound_names(stmt: ast.stmt, known: set[str]) -> list[str]:
    """The names ``stmt`` binds in the package namespace, submodules and ``__future__`` aside."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    if isinstance(stmt, ast.Assign):
        return [target.id for target in stmt.targets if isinstance(target, ast.Name)]
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return [stmt.target.id]
    if isinstance(stmt, ast.ImportFrom) and stmt.module != "__future__":
        base = resolve_from("mcpkit", True, stmt)
        return [
            alias.asname or alias.name
            for alias in stmt.names
            if f"{base}.{alias.name}" not in known
        ]
    return []


def public_names(source: str, known: set[str]) -> set[str]:
    """Names without a leading ``_`` that a package ``__init__`` defines or re-exports."""
    statements = runtime_statements(ast.parse(source).body)
    names = {name for stmt in statements for name in bound_names(stmt, known)}
    return {name for name in names if not name.startswith("_")}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from __future__ import annotations", set()),
        ("from mcpkit.app import App\nfrom .tools import Tool as Tool", {"App", "Tool"}),
        ("from . import tools\nfrom mcpkit import app\nimport json", set()),
        ("from ._version import __version__\n_private = 1\n__all__ = ['X']", set()),
        ("def helper(): pass\nclass Thing: pass\nX: int = 1\nY = 2", {"helper", "Thing", "X", "Y"}),
        ("if TYPE_CHECKING:\n    from .app import App", set()),
        ("try:\n    from .app import App\nexcept ImportError:\n    pass", {"App"}),
    ],
    ids=["future", "re-exports", "submodules", "private", "definitions", "type-checking", "try"],
)
def test_public_names(source: str, expected: set[str]) -> None:
    assert public_names(source, KNOWN) == expected


@pytest.fixture(scope="module")
def package_all() -> list[str]:
    assert (PACKAGE_DIR / "__init__.py").is_file(), "mcpkit/__init__.py is missing"
    names = getattr(importlib.import_module("mcpkit"), "__all__", None)
    assert isinstance(names, list), "mcpkit/__init__.py must define __all__ as a list"
    assert all(isinstance(name, str) for name in names)
    return [str(name) for name in names]


def test_all_is_sorted_without_duplicates(package_all: list[str]) -> None:
    assert package_all == sorted(set(package_all)), "sort mcpkit.__all__ and drop duplicates"


def test_all_matches_the_public_names(
    package_all: list[str], modules: dict[str, Path], layers: dict[str, int]
) -> None:
    source = (PACKAGE_DIR / "__init__.py").read_text(encoding="utf-8")
    lazy = set(importlib.import_module("mcpkit")._HOMES)  # served by the package's __getattr__
    public = public_names(source, set(modules) | set(layers)) | lazy | {"__version__"}
    assert not public - set(package_all), f"add to __all__: {sorted(public - set(package_all))}"
    assert not set(package_all) - public, (
        f"not bound in __init__: {sorted(set(package_all) - public)}"
    )


def test_all_names_exist(package_all: list[str]) -> None:
    package = importlib.import_module("mcpkit")
    missing = [name for name in package_all if not hasattr(package, name)]
    assert not missing


def test_version_is_in_all(package_all: list[str]) -> None:
    version = importlib.import_module("mcpkit._version").__version__
    assert getattr(importlib.import_module("mcpkit"), "__version__", None) == version
    assert "__version__" in package_all


# ---------------------------------------------------------------------------------------------
# Import hygiene: `import mcpkit` in a fresh interpreter

HYGIENE_SCRIPT = """
import json, logging, sys
import mcpkit
bare = sorted(name for name in sys.modules if name.partition(".")[0] == "mcpkit")
from mcpkit import *  # every public name: what the checks below are about
report = {
    "bare": bare,
    "modules": sorted(sys.modules),
    "root_handlers": [type(h).__name__ for h in logging.root.handlers],
    "root_level": logging.root.level,
    "mcpkit_handlers": [type(h).__name__ for h in logging.getLogger("mcpkit").handlers],
}
with open(sys.argv[1], "w", encoding="utf-8") as out:
    json.dump(report, out)
"""


def fresh_python(*args: str) -> subprocess.CompletedProcess[str]:
    """A new interpreter run in the repository (no stdin), its output captured."""
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@dataclass(frozen=True)
class Hygiene:
    stdout: str
    stderr: str
    bare: list[str]
    modules: list[str]
    root_handlers: list[str]
    root_level: int
    mcpkit_handlers: list[str]


@pytest.fixture(scope="module")
def hygiene(tmp_path_factory: pytest.TempPathFactory) -> Hygiene:
    report = tmp_path_factory.mktemp("hygiene") / "report.json"
    done = fresh_python("-W", "default", "-c", HYGIENE_SCRIPT, str(report))
    assert done.returncode == 0, f"`import mcpkit` failed:\n{done.stderr}"
    return Hygiene(done.stdout, done.stderr, **json.loads(report.read_text(encoding="utf-8")))


def test_bare_import_loads_only_the_version(hygiene: Hygiene) -> None:
    # The public names load on first use (the package's __getattr__), so the console script
    # can pause the garbage collector before mcpkit's modules load (mcpkit._collector).
    assert hygiene.bare == ["mcpkit", "mcpkit._version"]


def test_import_prints_nothing(hygiene: Hygiene) -> None:
    assert (hygiene.stdout, hygiene.stderr) == ("", "")


def test_import_loads_no_cli_or_http(hygiene: Hygiene) -> None:
    loaded = [m for m in hygiene.modules if any(covers(f, m) for f in FORBIDDEN_ON_IMPORT)]
    assert not loaded, "`import mcpkit` must load these only on use: " + ", ".join(loaded)


def test_import_loads_layers_0_to_3_only(hygiene: Hygiene, layers: dict[str, int]) -> None:
    above = [
        module
        for module in hygiene.modules
        if is_mcpkit(module) and layers.get(module, 99) > IMPORT_LAYER_CEILING
    ]
    assert not above, f"`import mcpkit` loads modules above L{IMPORT_LAYER_CEILING}: {above}"


def test_import_configures_no_logging(hygiene: Hygiene) -> None:
    assert hygiene.root_handlers == []
    assert hygiene.root_level == logging.WARNING
    assert set(hygiene.mcpkit_handlers) <= {"NullHandler"}


# ---------------------------------------------------------------------------------------------
# The seam between the protocol core and its transports

MAX_MODULE_LINES = 450
VERSION_DATE = re.compile(r"20\d\d-\d\d-\d\d")
# protocol/handlers.py moves to protocol/methods/ (issue 16, item 2), which uses the named
# gates (versions.structured_output, versions.arguments_fail_as_results); until it lands:
SEAM_WIDTH = {"mcpkit/transports/http": 6, "mcpkit/transports/stdio.py": 4}


def protocol_names(path: Path) -> set[str]:
    """The distinct ``mcpkit.protocol`` attributes a module references: names it imports from
    a protocol module, plus ``module.attr`` uses of a protocol module it imported."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules: dict[str, str] = {}  # local name -> the protocol module it stands for
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mcpkit.protocol"):
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if (ROOT / (full.replace(".", "/") + ".py")).exists():
                    modules[alias.asname or alias.name] = full
                else:
                    names.add(full)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("mcpkit.protocol.") and alias.asname:
                    modules[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
        ):
            names.add(f"{modules[node.value.id]}.{node.attr}")
    return names


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from mcpkit.protocol.server import Server, Session", {"server.Server", "server.Session"}),
        (
            "from mcpkit.protocol import jsonrpc\njsonrpc.encode(1)\njsonrpc.encode",
            {"jsonrpc.encode"},
        ),
        ("import mcpkit.protocol.jsonrpc as j\nj.decode(b'')", {"jsonrpc.decode"}),
        ("from mcpkit.exceptions import InvalidRequest", set()),
    ],
)
def test_protocol_names_counts_imports_and_module_attributes(
    tmp_path: Path, source: str, expected: set[str]
) -> None:
    module = tmp_path / "m.py"
    module.write_text(source)
    found = {name.removeprefix("mcpkit.protocol.") for name in protocol_names(module)}
    assert found == expected


@pytest.mark.parametrize(("transport", "limit"), sorted(SEAM_WIDTH.items()))
def test_transports_use_few_protocol_names(transport: str, limit: int) -> None:
    where = ROOT / transport
    files = sorted(where.rglob("*.py")) if where.is_dir() else [where]
    names = set().union(*(protocol_names(path) for path in files))
    assert len(names) <= limit, f"{transport} uses {len(names)} protocol names: {sorted(names)}"


def test_no_version_date_outside_versions() -> None:
    """Version gates are named predicates in protocol/versions.py; no module spells a date."""
    found = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative == "mcpkit/protocol/versions.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
                continue
            if VERSION_DATE.fullmatch(node.value):
                found.append(f"{relative}:{node.lineno}: {node.value!r}")
    assert not found, "version dates outside protocol/versions.py:\n" + "\n".join(found)


def test_no_module_is_too_long() -> None:
    too_long = [
        f"{path.relative_to(ROOT)}: {count} lines"
        for base in ("mcpkit", "benchmarks")
        for path in sorted((ROOT / base).rglob("*.py"))
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    ]
    assert not too_long, f"split these by concern (at most {MAX_MODULE_LINES} lines):\n" + (
        "\n".join(too_long)
    )


def test_app_asgi_takes_exactly_the_http_app_options() -> None:
    from mcpkit.app import App
    from mcpkit.transports.http import HttpApp

    asgi = list(inspect.signature(App.asgi).parameters.values())[1:]
    http = list(inspect.signature(HttpApp.__init__).parameters.values())[2:]
    assert [(p.name, p.kind, p.default, p.annotation) for p in asgi] == [
        (p.name, p.kind, p.default, p.annotation) for p in http
    ]
    assert inspect.signature(App.asgi).return_annotation == "HttpApp"


# The JWT library (the `jwt` extra) loads only when `JWTVerifier` is first named: a server
# without JWT auth never pays for PyJWT and cryptography, nor needs them installed.
JWT_LIBRARIES = ("jwt", "cryptography", "mcpkit.transports.http._jwt")
HTTP_HYGIENE_SCRIPT = """
import json, sys
import mcpkit.transports.http
loaded = sorted(sys.modules)
from mcpkit.transports.http import JWTVerifier
print(json.dumps([loaded, sorted(sys.modules)]))
"""


def test_http_loads_the_jwt_library_only_when_jwt_verifier_is_named() -> None:
    done = fresh_python("-c", HTTP_HYGIENE_SCRIPT)
    assert done.returncode == 0, done.stderr
    before, after = json.loads(done.stdout)
    assert [m for m in before if any(covers(f, m) for f in JWT_LIBRARIES)] == []
    assert {"jwt", "cryptography", "mcpkit.transports.http._jwt"} <= set(after)
