"""What prose names must exist: files, modules, names in backticks, rule, case and check ids.

Pure: a text and what the checkout holds (:class:`Known`) in, the stale references out. The
prose is README.md, the pages under docs/ and the comments and docstrings of the Python code;
``prose_of_python`` takes those out of a module's source. tests/repo/test_prose_references.py reads
the checkout and runs this over every page and module.

What counts as a reference:

* a path ending in ``.py``, or a path under a top-level folder of the checkout (``docs/…``,
  ``tests/…``): some tracked file is that path or ends with it (``read/_store.py``);
* a dotted name under one of our packages (``persyk_conformance.run._runner``, with an attribute
  after the module allowed when the module defines it);
* a private name alone in backticks (``_grammar``, ``_floors.conforming_capture``): a module
  of that name exists, or the name is defined in the same package (anywhere, for a page);
* an id whose prefix is one the contract, the cases or the harness use, or a phase of the rules
  (``READ-`` and a number): a rule of either profile, a case (live or retired), or a harness
  check; a glob (``H-15*``) is no id, and the ends of a range of case ids need not be cases.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

__all__ = ["Known", "Stale", "prose_of_python", "stale_references"]


@dataclass(frozen=True, slots=True)
class Known:
    files: frozenset[str]  # every tracked path, relative to the checkout
    modules: frozenset[str]  # dotted module names of our packages
    stems: frozenset[str]  # the last part of every module and package name
    defined: Mapping[str, frozenset[str]]  # top package ('' for all) -> names defined in it
    ids: frozenset[str]  # rules of both profiles, cases (live and retired), harness checks
    id_prefixes: frozenset[str]  # prefixes an id may have; any other is not an id
    rule_prefixes: frozenset[str]  # of those, the rules' (a range of rules names two rules)


@dataclass(frozen=True, slots=True)
class Stale:
    line: int
    kind: str  # "path", "module", "name" or "id"
    text: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.kind} {self.text!r} does not exist"


_SUFFIXES = (".py", ".md", ".json", ".yml", ".yaml", ".sh", ".mjs", ".js", ".toml", ".txt", ".html")
_PATH = re.compile(r"(?<![\w./~$*-])((?:[\w.-]+/)*[\w.-]+(?:" + "|".join(
    re.escape(s) for s in _SUFFIXES) + r"))(?![\w/-])")
_DOTTED = re.compile(r"(?<![\w.])(persyk_(?:conformance|session|contract)(?:\.\w+)+)")
_BACKTICKED = re.compile(r"``?(_[A-Za-z]\w*(?:\.\w+)*)(?:\(\))?``?")
_ID = re.compile(r"(?<![\w-])([A-Z]{1,6})-(\d{1,4})(?![\w*-])")
# A tracked tree's top-level folders: a path under one of them is a path into the checkout.
_EXTENSIONS = frozenset(s.lstrip(".") for s in _SUFFIXES) | {"jsonl"}
_TOP = ("benchmarks/", "ci/", "conformance/", "contract/", "docs/", "examples/", "fixtures/",
        "peers/", "reference/", "schemas/", "tests/", "tools/")
_PACKAGES = {"persyk_conformance": "persyk_conformance", "persyk_session": "persyk_session",
             "persyk_contract": "persyk_contract"}


def prose_of_python(source: str) -> Iterator[tuple[int, str]]:
    """The comments and docstrings of a module, each with the line it starts on."""
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    starts = (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING, tokenize.NL)
    for index, token in enumerate(tokens):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
        elif token.type == tokenize.STRING:
            before = tokens[index - 1].type if index else tokenize.NEWLINE
            after = tokens[index + 1].type if index + 1 < len(tokens) else tokenize.NEWLINE
            if before in starts and after in (tokenize.NEWLINE, tokenize.ENDMARKER):
                yield token.start[0], token.string


def _path_exists(path: str, known: Known) -> bool:
    path = path.removeprefix("./")
    if path in known.files:
        return True
    tail = "/" + path
    return any(f.endswith(tail) for f in known.files)


def _stale_path(path: str, known: Known) -> bool:
    if any(c in path for c in "*<>{}$%…"):
        return False
    if not (path.endswith(".py") or path.startswith(_TOP)):
        return False
    if path.startswith("/") or path.startswith((".venv/", "node_modules/")):
        return False
    if "/" in path and not path.startswith(_TOP) and path.split("/")[0] not in known.stems:
        return False  # another project's file (pip/_internal/...), named as a model to read
    return not _path_exists(path, known)


def _stale_dotted(name: str, known: Known) -> bool:
    parts = name.split(".")
    longest = 0
    for end in range(1, len(parts) + 1):
        if ".".join(parts[:end]) in known.modules:
            longest = end
    if longest == len(parts):
        return False
    if longest == 0:
        return True
    top = _PACKAGES.get(parts[0], "")
    rest = parts[longest:]
    # An attribute of the module (a function, class or constant it defines) may follow it; a
    # resource folder of a package (persyk_conformance.fixtures/v1) is cut at the slash already.
    return rest[0] not in known.defined.get(top, frozenset())


def _stale_backticked(name: str, package: str, known: Known) -> bool:
    parts = name.split(".")
    if parts[-1] in _EXTENSIONS:
        return False  # a file name: the path check has it
    scope = known.defined.get(package, frozenset())
    if parts[0] not in known.stems and parts[0] not in scope:
        return True
    return any(part not in known.defined.get("", frozenset()) for part in parts[1:])


def stale_references(text: str, known: Known, *, package: str = "", first_line: int = 1
                     ) -> list[Stale]:
    """Every reference in ``text`` that names nothing the checkout holds. ``package``: the top
    package the text belongs to ('' for a page), where a private name in backticks is looked
    up; ``first_line``: the line ``text`` starts on, for the report."""
    found: list[Stale] = []
    for offset, line in enumerate(text.split("\n")):
        number = first_line + offset
        for match in _PATH.finditer(line):
            if _stale_path(match.group(1), known):
                found.append(Stale(number, "path", match.group(1)))
        for match in _DOTTED.finditer(line):
            if _stale_dotted(match.group(1), known):
                found.append(Stale(number, "module", match.group(1)))
        for match in _BACKTICKED.finditer(line):
            if _stale_backticked(match.group(1), package, known):
                found.append(Stale(number, "name", match.group(1)))
        for match in _ID.finditer(line):
            if match.group(1) not in known.id_prefixes or match.group(0) in known.ids:
                continue
            bound = line[match.end():match.end() + 2] == ".." or line[:match.start()].endswith("..")
            if bound and match.group(1) not in known.rule_prefixes:
                continue  # a range of case ids (S-950..S-994) need not start or end on a case
            found.append(Stale(number, "id", match.group(0)))
    return found
