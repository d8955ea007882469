"""One side of a contract comparison, loaded from wherever it lives.

``persyk-conformance diff BASE [HEAD]`` compares two versions of the contract. Each side is one of:

* a directory holding a checkout of this repository (``fixtures/v1``, ``schemas/``,
  ``contract/persyk_contract/rules.json``, ``docs/changes.md``);
* a release archive (``persyk-contract-X.Y.Z.tar.gz``, built by ``persyk-conformance release``)
  or the directory it unpacks to (it holds ``MANIFEST.json``);
* a git revision of the checkout given by ``--repo`` (default: the current directory), exported
  with ``git archive`` into a temporary directory.

A side is read into a :class:`ContractSide`: plain values (cases with their bytes, rules, codes,
retired ids, schemas, the changes log), so the comparison itself (``_diff``) does no I/O.
Where the side carries the reference implementation's source, ``code_site`` is a directory that,
put on ``PYTHONPATH``, imports that version of ``persyk_session``; the diff runs it as the
"conforming implementation" of that side.
"""

from __future__ import annotations

import hashlib
import os
import re
import resource
import shutil
import subprocess
import tarfile
import tempfile
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from persyk_conformance._bounded import (
    ArchiveLimits,
    Refused,
    extract_tar,
    read_json,
    read_regular,
    refuse_special,
)

__all__ = ["CaseSnapshot", "ContractSide", "SideError", "load_side"]

CASE_GROUPS = ("golden", "rejection", "scenario")


class SideError(Exception):
    """A side cannot be read: not a checkout, not an archive, not a git revision."""


# A side's files are read whole into memory (the comparison is pure): bounded per file and in all.
_FILE_BYTES = 64 << 20
_SIDE_BYTES = 512 << 20
_ARCHIVE = ArchiveLimits()
# package-dir names are dotted Python identifiers (a key is joined as a path below the site).
_PACKAGE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


@dataclass(frozen=True, slots=True)
class CaseSnapshot:
    """One case as it is on one side: its manifest and the bytes of its tree."""

    id: str
    group: str
    folder: str
    manifest: Mapping[str, Any]
    tree: Mapping[str, bytes]  # path below tree/ -> bytes

    @property
    def tree_digest(self) -> str:
        digest = hashlib.sha256()
        for path in sorted(self.tree):
            digest.update(path.encode() + b"\0" + hashlib.sha256(self.tree[path]).digest())
        return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class ContractSide:
    """Everything the comparison needs from one version of the contract."""

    label: str
    version: str
    rules: Mapping[str, Mapping[str, Any]]
    codes: Mapping[str, Mapping[str, Any]]
    cases: Mapping[str, CaseSnapshot]
    retired: Mapping[str, str]
    schemas: Mapping[str, bytes]  # path below schemas/ -> bytes
    changes: str | None  # docs/changes.md, when the side has it
    fixtures_root: Path  # the directory holding golden/, rejection/, scenario/
    code_site: Path | None = None  # PYTHONPATH entry importing this side's reference
    tree_root: Path | None = None  # the side's own tree: what its reference may read
    scratch: tuple[Path, ...] = field(default=(), compare=False)

    def discard(self) -> None:
        """Remove the temporary directories this side was unpacked into."""
        for path in self.scratch:
            shutil.rmtree(path, ignore_errors=True)


# -- locating a side ---------------------------------------------------------------------------


def load_side(spec: str, repo: Path) -> ContractSide:
    """Read the side named by ``spec``: a directory, an archive, or a git revision of ``repo``.

    Raises SideError, or Refused for a link, device, oversized or malformed input; either way
    every temporary directory made on the way is removed first.
    """
    path = Path(spec)
    if path.is_dir() and not path.is_symlink():
        return _load_directory(path.resolve(), label=spec, scratch=())
    if path.is_symlink():
        raise Refused("LINK_REFUSED", path, "a side given as a symbolic link is not followed")
    if path.is_file() and spec.endswith((".tar.gz", ".tgz")):
        return _in_scratch(lambda unpacked: _load_archive(path, unpacked, spec))
    if path.exists():
        raise SideError(f"{spec}: neither a directory nor a .tar.gz release archive")
    return _load_revision(spec, repo)


def _in_scratch(load: Callable[[Path], ContractSide]) -> ContractSide:
    """``load`` a side into a fresh temporary directory, removed if loading fails."""
    scratch = Path(tempfile.mkdtemp(prefix="persyk-diff-"))
    try:
        return load(scratch)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise


def _load_archive(archive: Path, into: Path, label: str) -> ContractSide:
    _unpack_archive(archive, into)
    return _load_directory(_single_child(into), label=label, scratch=(into,))


def _load_revision(revision: str, repo: Path) -> ContractSide:
    check = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}"],
        capture_output=True, text=True, check=False,
    )
    if check.returncode != 0:
        raise SideError(
            f"{revision}: not a directory, an archive, or a git revision of {repo}"
        )
    commit = check.stdout.strip()

    def export(exported: Path) -> ContractSide:
        tar_file = exported / "revision.tar"
        tree = exported / "tree"
        tree.mkdir()
        with tar_file.open("wb") as sink:
            # The revision's tree is the head's to choose: its size is bounded like an archive's.
            archive = subprocess.run(
                ["git", "-C", str(repo), "archive", "--format=tar", commit],
                stdout=sink, stderr=subprocess.PIPE, check=False,
                preexec_fn=_file_size_limit(_ARCHIVE.total_bytes + (64 << 20)),
            )
        if archive.returncode != 0:
            raise SideError(f"git archive {revision} failed: "
                            f"{archive.stderr.decode(errors='replace')[-500:]}")
        with tarfile.open(tar_file) as tar:
            extract_tar(tar, tree, None, revision, _ARCHIVE)
        tar_file.unlink()
        return _load_directory(tree, label=f"{revision} ({commit[:12]})", scratch=(exported,))

    return _in_scratch(export)


def _file_size_limit(limit: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def _unpack_archive(archive: Path, into: Path) -> None:
    try:
        with tarfile.open(archive, "r:gz") as tar:
            extract_tar(tar, into, archive.stat().st_size, archive, _ARCHIVE)
    except (tarfile.TarError, OSError) as exc:
        raise SideError(f"{archive}: not a readable release archive ({exc})") from None


def _single_child(directory: Path) -> Path:
    children = [p for p in directory.iterdir() if p.is_dir() and not p.is_symlink()]
    if len(children) != 1:
        raise SideError("a release archive holds exactly one top-level directory")
    return children[0]


# -- the two layouts ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Layout:
    fixtures: Path
    schemas: Path
    rules: Path
    errors: Path
    changes: Path
    code_site: Path | None


def _layout(root: Path, scratch: list[Path]) -> _Layout:
    # a release (docs/maintainers/maintainers.md, "Releases")
    if (root / "MANIFEST.json").is_file():
        site = root / "reference-python"
        return _Layout(
            fixtures=root / "cases" / "v1",
            schemas=root / "schemas",
            rules=root / "rules.json",
            errors=root / "errors.json",
            changes=root / "docs" / "changes.md",
            code_site=site if (site / "persyk_session").is_dir() else None,
        )
    if (root / "fixtures" / "v1").is_dir() and (root / "schemas").is_dir():
        return _Layout(
            fixtures=root / "fixtures" / "v1",
            schemas=root / "schemas",
            rules=root / "contract" / "persyk_contract" / "rules.json",
            errors=root / "contract" / "persyk_contract" / "errors.json",
            changes=root / "docs" / "changes.md",
            code_site=_checkout_site(root, scratch),
        )
    raise SideError(f"{root}: neither a checkout (fixtures/v1, schemas/) nor a release archive")


def _load_directory(root: Path, label: str, scratch: tuple[Path, ...]) -> ContractSide:
    more: list[Path] = []
    try:
        layout = _layout(root, more)
        rules_doc = _json_file(layout.rules)
        codes_doc = _json_file(layout.errors)
        budget = _Budget()
        return ContractSide(
            label=label,
            version=str(rules_doc.get("contractVersion", "1.0.0")),
            rules=_table(rules_doc, "rules", "id", layout.rules),
            codes=_table(codes_doc, "codes", "code", layout.errors),
            cases=_cases(layout.fixtures, budget),
            retired=_retired(layout.fixtures / "RETIRED.txt"),
            schemas=_files_below(layout.schemas, budget, suffix=".json"),
            changes=_text(layout.changes),
            fixtures_root=layout.fixtures,
            code_site=layout.code_site,
            tree_root=root,
            scratch=(*scratch, *more),
        )
    except BaseException:
        for path in more:
            shutil.rmtree(path, ignore_errors=True)
        raise


class _Budget:
    """Bytes read from one side so far, against ``_SIDE_BYTES``."""

    def __init__(self) -> None:
        self.used = 0

    def read(self, path: Path) -> bytes:
        data = read_regular(path, _FILE_BYTES)
        self.used += len(data)
        if self.used > _SIDE_BYTES:
            raise Refused("SIDE_TOO_LARGE", path, f"the side holds more than {_SIDE_BYTES} bytes")
        return data


def _json_file(path: Path) -> dict[str, Any]:
    if not os.path.lexists(path):
        raise SideError(f"{path}: missing")
    loaded = read_json(path)
    if not isinstance(loaded, dict):
        raise SideError(f"{path}: not a JSON object")
    return loaded


def _table(
    document: Mapping[str, Any], member: str, key: str, where: Path
) -> dict[str, Mapping[str, Any]]:
    """``rules`` by id, ``codes`` by code: a malformed table is a SideError naming the file."""
    rows = document.get(member)
    if not isinstance(rows, list) or not all(
        isinstance(row, dict) and isinstance(row.get(key), str) for row in rows
    ):
        raise SideError(f"{where}: '{member}' is not a list of objects with a '{key}'")
    return {row[key]: row for row in rows}


def _text(path: Path) -> str | None:
    if not os.path.lexists(path):
        return None
    return read_regular(path, _FILE_BYTES).decode("utf-8", "replace")


def _cases(fixtures: Path, budget: _Budget) -> dict[str, CaseSnapshot]:
    cases: dict[str, CaseSnapshot] = {}
    for group in CASE_GROUPS:
        folder = fixtures / group
        if not folder.is_dir():
            continue
        for case_dir in sorted(folder.iterdir()):
            if case_dir.is_symlink() or not case_dir.is_dir():
                list(refuse_special(case_dir))  # a link or a device is refused, naming it
                continue  # a stray file beside the case folders
            manifest = _json_file(case_dir / "case.json")
            if not isinstance(manifest.get("id"), str):
                raise SideError(f"{case_dir / 'case.json'}: no string 'id'")
            case_id = manifest["id"]
            steps, rules = manifest.get("steps", []), manifest.get("rules", [])
            if not isinstance(steps, list) or not all(isinstance(s, dict) for s in steps) \
                    or not isinstance(rules, list):
                raise SideError(f"{case_dir / 'case.json'}: 'steps' must be a list of objects "
                                "and 'rules' a list")
            if case_id in cases:
                raise SideError(f"case id {case_id} appears twice under {fixtures}")
            cases[case_id] = CaseSnapshot(
                id=case_id,
                group=group,
                folder=f"{group}/{case_dir.name}",
                manifest=manifest,
                tree=_files_below(case_dir / "tree", budget),
            )
    if not cases:
        raise SideError(f"no case under {fixtures}")
    return cases


def _files_below(directory: Path, budget: _Budget, suffix: str = "") -> dict[str, bytes]:
    """Every file below ``directory``; a link, device, FIFO or socket is refused, not skipped
    (a skipped link would hide a change from the comparison)."""
    if not os.path.lexists(directory):
        return {}
    return {
        path.relative_to(directory).as_posix(): budget.read(path)
        for path in sorted(refuse_special(directory))
        if path.name.endswith(suffix) and "__pycache__" not in path.parts
    }


def _retired(path: Path) -> dict[str, str]:
    """``RETIRED.txt``: one ``id<TAB>reason`` line per retired case; ``#`` starts a comment."""
    text = _text(path)
    if text is None:
        return {}
    retired: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        case_id, _, reason = line.partition("\t")
        retired[case_id.strip()] = reason.strip()
    return retired


# -- running a checkout's own reference --------------------------------------------------------


def _checkout_site(root: Path, scratch: list[Path]) -> Path | None:
    """A directory of symbolic links that imports the checkout's packages as installed.

    pyproject.toml maps each package to a folder of the checkout (``package-dir``), so the
    checkout itself is not importable; linking each package where Python looks for it gives the
    same modules without installing anything. Every key and value is checked first:
    a key is a dotted package name, a value a relative folder inside the side that no link
    leads out of; anything else is refused, even with ``--no-run``.
    """
    pyproject = root / "pyproject.toml"
    if not os.path.lexists(pyproject):
        return None
    try:
        document = tomllib.loads(read_regular(pyproject, 1 << 20).decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        raise Refused("PYPROJECT_INVALID", pyproject, "not TOML") from None
    setuptools = document.get("tool", {}).get("setuptools", {})
    package_dir = setuptools.get("package-dir", {}) if isinstance(setuptools, dict) else {}
    if not isinstance(package_dir, dict):
        raise Refused("PACKAGE_DIR_REFUSED", pyproject, "package-dir is not a table")
    sources = {name: _package_source(root, pyproject, name, value)
               for name, value in package_dir.items()}
    if "persyk_session" not in sources:
        return None
    site = Path(tempfile.mkdtemp(prefix="persyk-site-"))
    scratch.append(site)
    # Parents before children: a child package is linked inside its parent's real folder.
    for package in sorted(sources, key=lambda name: name.count(".")):
        source = sources[package]
        if not source.is_dir():
            continue  # a side need not carry every package (a copy of the contract alone)
        target = site.joinpath(*package.split("."))
        if target.is_symlink():
            target.unlink()
        if "." in package:
            if not target.parent.is_dir():
                continue  # its parent package is not carried either
            target.symlink_to(source, target_is_directory=True)
            continue
        target.mkdir(parents=True, exist_ok=True)
        for entry in sorted(source.iterdir()):
            if entry.name != "__pycache__":
                (target / entry.name).symlink_to(entry)
    return site


def _package_source(root: Path, pyproject: Path, name: object, value: object) -> Path:
    """The folder of one package-dir entry, refused unless it is a relative name inside
    ``root`` reached through no link."""
    where = f"{pyproject} [tool.setuptools.package-dir] {str(name)[:80]!r}"
    if not isinstance(name, str) or not _PACKAGE.fullmatch(name):
        raise Refused("PACKAGE_DIR_REFUSED", where, "a key must be a dotted package name")
    if not isinstance(value, str) or not value or "\\" in value or "\0" in value:
        raise Refused("PACKAGE_DIR_REFUSED", where, "a value must be a relative folder name")
    relative = PurePosixPath(value)
    if relative.is_absolute() or ".." in relative.parts:
        raise Refused("PACKAGE_DIR_REFUSED", where,
                      "a value must stay inside the side (no absolute path, no '..')")
    source = root
    for part in relative.parts:
        source = source / part
        if source.is_symlink():
            raise Refused("LINK_REFUSED", where, f"{relative} passes through a symbolic link")
    if source.exists():
        list(refuse_special(source))  # no link, device or FIFO inside the package either
    return source
