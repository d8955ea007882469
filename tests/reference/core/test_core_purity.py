"""The core has no mode: no core module imports a fast twin, its libraries or the edge.

The core is every module of ``persyk_session`` but the fast engine (``fast/``), the dsh-v0
profile (``dsh/``, which keeps its own switch) and the edge that chooses the engine
(``operations/``, ``cli/``, ``adapter.py`` and ``_mode_name.py``, which reads
``PERSYK_SESSION_MODE``). Imports are read with ``ast`` (relative ones resolved), so a comment
or a docstring naming a module is no import, and an import inside a function is one.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from _paths import CHECKOUT

PACKAGE = CHECKOUT / "reference" / "persyk_session"
P = "persyk_session"
# Top-level folders and modules that are not core.
FAST_AND_PROFILE = ("fast", "dsh")
EDGE = ("operations", "cli", "adapter.py", "_mode_name.py")

# What the core never imports: the fast engine and the libraries only it uses, and the edge.
FORBIDDEN = (f"{P}.fast", "orjson", "jsonschema_rs", "msgspec", f"{P}.operations", f"{P}.cli",
             f"{P}.adapter", f"{P}._mode_name")
# UAX #29 grapheme clusters (SRCH-33, SRCH-34) have no standard-library implementation on
# Python 3.11 (``unicodedata`` has no Grapheme_Cluster_Break), so search's text matching alone
# may import ``regex``.
REGEX_ALLOWED = frozenset({"search/_textmatch.py"})


def module_name(path: Path) -> str:
    parts = [P, *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(source: str, module: str, is_package: bool) -> set[str]:
    """Every module ``source`` (of ``module``) imports, relative imports made absolute."""
    names: set[str] = set()
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            names.add(target)
            # ``from . import _x`` imports the module _x.
            names.update(f"{target}.{alias.name}" for alias in node.names)
    return names


def forbidden_imports(source: str, module: str, is_package: bool, relative: str) -> list[str]:
    allowed_regex = relative in REGEX_ALLOWED
    found = []
    for name in sorted(imported_names(source, module, is_package)):
        bad = [f for f in FORBIDDEN if name == f or name.startswith(f + ".")]
        if bad or (name.split(".")[0] == "regex" and not allowed_regex):
            found.append(name)
    return found


def core_modules() -> list[Path]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        top = path.relative_to(PACKAGE).parts[0]
        if top not in FAST_AND_PROFILE and top not in EDGE:
            found.append(path)
    return found


CORE = core_modules()


def test_core_modules_were_found() -> None:
    names = {p.relative_to(PACKAGE).as_posix() for p in CORE}
    assert {"read/_engine.py", "read/_store.py", "write/_append_plan.py",
            "search/_discovery.py", "__init__.py"} <= names
    assert not any(n.startswith(("fast/", "dsh/", "operations/", "cli/")) for n in names)
    assert len(CORE) > 40


@pytest.mark.parametrize("path", CORE, ids=[p.relative_to(PACKAGE).as_posix() for p in CORE])
def test_core_module_imports_no_fast_path_and_no_edge(path: Path) -> None:
    relative = path.relative_to(PACKAGE).as_posix()
    source = path.read_text("utf-8")
    assert forbidden_imports(source, module_name(path), path.name == "__init__.py",
                             relative) == []


@pytest.mark.parametrize("path", CORE, ids=[p.relative_to(PACKAGE).as_posix() for p in CORE])
def test_core_module_reads_no_mode(path: Path) -> None:
    # The mode's name appears in core code only in prose: no string constant names it.
    tree = ast.parse(path.read_text("utf-8"))
    assert not [n for n in ast.walk(tree)
                if isinstance(n, ast.Constant) and n.value == "PERSYK_SESSION_MODE"]


def test_no_readable_flag_is_left() -> None:
    # ``READABLE`` as a word: the error codes ROOT_UNREADABLE and SESSION_UNREADABLE and the
    # name READABLE_ENGINE are other words.
    word = re.compile(r"\bREADABLE\b")
    hits = [f"{p.relative_to(PACKAGE)}:{n}" for p in sorted(PACKAGE.rglob("*.py"))
            if p.relative_to(PACKAGE).parts[0] != "dsh"
            for n, text in enumerate(p.read_text("utf-8").splitlines(), 1) if word.search(text)]
    assert hits == []


PLANTED = [
    ("from ..fast import FAST_ENGINE\n", "persyk_session.read._store", False, "read/_store.py"),
    ("from ..fast._records_fast import parse_record\n", "persyk_session.read._store", False,
     "read/_store.py"),
    ("def late():\n    import orjson\n", "persyk_session.read._records", False,
     "read/_records.py"),
    ("from persyk_session import fast\n", "persyk_session.write._append", False,
     "write/_append.py"),
    ("from .. import fast\n", "persyk_session.search", True, "search/__init__.py"),
    ("import msgspec.json\n", "persyk_session.read._feed", False, "read/_feed.py"),
    ("from jsonschema_rs import validator_for\n", "persyk_session.read._schema", False,
     "read/_schema.py"),
    ("from ..operations._mode import chosen_engine\n", "persyk_session.read._store", False,
     "read/_store.py"),
    ("import regex\n", "persyk_session.read._records", False, "read/_records.py"),
]


@pytest.mark.parametrize(("source", "module", "is_package", "relative"), PLANTED,
                         ids=[f"{p[3]}:{p[0].strip().splitlines()[-1].strip()}" for p in PLANTED])
def test_a_planted_fast_import_is_caught(
    source: str, module: str, is_package: bool, relative: str
) -> None:
    assert forbidden_imports(source, module, is_package, relative) != []


def test_regex_is_allowed_only_where_grapheme_clusters_are_cut() -> None:
    assert forbidden_imports("import regex\n", "persyk_session.search._textmatch", False,
                             "search/_textmatch.py") == []
