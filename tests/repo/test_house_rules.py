"""House rules of the code (docs/maintainers/architecture.md, "House rules"): no module over 600
lines, no function over 60 lines, no import cycle among the modules of a package."""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from _paths import CHECKOUT

ROOT = CHECKOUT
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 60

# Each package: its import name and its folder in the checkout.
PACKAGES: Mapping[str, Path] = {
    "persyk_contract": ROOT / "contract" / "persyk_contract",
    "persyk_session": ROOT / "reference" / "persyk_session",
    "persyk_dsh": ROOT / "reference" / "persyk_dsh",
    "persyk_conformance": ROOT / "conformance" / "persyk_conformance",
    "persyk_maintainers": ROOT / "conformance" / "persyk_maintainers",
    "_cases": ROOT / "fixtures" / "_cases",
}
# Modules outside a package that the rules cover too: the fixture builders and their helpers.
SCRIPTS = tuple(sorted((ROOT / "fixtures").glob("*.py")))

# Known exceptions: "path" or "path:function" -> why it is allowed for now. Every run shows them
# (a warning each). An exception that no longer breaks the rule is reported too (a warning:
# drop it); a new offender fails.
KNOWN_EXCEPTIONS: Mapping[str, str] = {}


def _modules() -> Iterator[Path]:
    for folder in PACKAGES.values():
        yield from sorted(folder.rglob("*.py"))
    yield from SCRIPTS


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _too_long() -> dict[str, str]:
    """Every module and function over its limit: name -> how long it is."""
    found: dict[str, str] = {}
    for path in _modules():
        text = path.read_text("utf-8")
        lines = len(text.splitlines())
        if lines > MAX_MODULE_LINES:
            found[_rel(path)] = f"{lines} lines (limit {MAX_MODULE_LINES})"
        for node, name in _functions(ast.parse(text), ""):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                found[f"{_rel(path)}:{name}"] = f"{length} lines (limit {MAX_FUNCTION_LINES})"
    return found


def _functions(
    node: ast.AST, prefix: str
) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield child, f"{prefix}{child.name}"
            yield from _functions(child, f"{prefix}{child.name}.")
        elif isinstance(child, ast.ClassDef):
            yield from _functions(child, f"{prefix}{child.name}.")
        else:
            yield from _functions(child, prefix)


def test_no_module_or_function_is_over_its_limit() -> None:
    found = _too_long()
    unexpected = {name: why for name, why in found.items() if name not in KNOWN_EXCEPTIONS}
    assert not unexpected, "\n".join(f"{name}: {why}" for name, why in sorted(unexpected.items()))
    for name, why in sorted(KNOWN_EXCEPTIONS.items()):
        if name in found:
            warnings.warn(f"house-rule exception {name} ({found[name]}): {why}", stacklevel=1)
        else:
            warnings.warn(f"{name} is within the limits now: drop it from KNOWN_EXCEPTIONS",
                          stacklevel=1)


# --- import cycles ---------------------------------------------------------------------------


def _module_name(package: str, folder: Path, path: Path) -> str:
    parts = [package, *path.relative_to(folder).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that module ``name`` imports, at any depth of its code (an
    import inside a function is a dependency too), except under ``if TYPE_CHECKING:``."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and ast.unparse(child.test).endswith("TYPE_CHECKING"):
                for other in child.orelse:
                    visit(other)
                continue
            if isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = _absolute(name, is_package, child.module, child.level)
                for alias in child.names:
                    sub = f"{base}.{alias.name}"
                    found.add(sub if sub in known else base)
            visit(child)

    visit(ast.parse(path.read_text("utf-8")))
    return {module for module in found if module in known and module != name}


def _absolute(name: str, is_package: bool, module: str | None, level: int) -> str:
    if level == 0:
        return module or ""
    parts = name.split(".") if is_package else name.split(".")[:-1]
    parts = parts[: len(parts) - level + 1]
    return ".".join([*parts, module] if module else parts)


def import_graph() -> dict[str, set[str]]:
    paths = {
        _module_name(package, folder, path): path
        for package, folder in PACKAGES.items()
        for path in folder.rglob("*.py")
    }
    known = set(paths)
    return {name: _imports(name, path, known) for name, path in paths.items()}


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def test_no_import_cycle_among_the_modules_of_the_packages() -> None:
    found = cycles(import_graph())
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_cycle_check_finds_a_cycle_and_the_size_check_a_long_function(
    tmp_path: Path,
) -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    source = "def f():\n" + "    x = 1\n" * MAX_FUNCTION_LINES
    (tree_path := tmp_path / "m.py").write_text(source, encoding="utf-8")
    [(node, name)] = list(_functions(ast.parse(tree_path.read_text()), ""))
    assert name == "f" and node.end_lineno == MAX_FUNCTION_LINES + 1


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_every_package_is_found(package: str) -> None:
    assert any(PACKAGES[package].glob("*.py")), f"{package}: no module found"
