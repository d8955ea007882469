"""One side of a contract comparison, loaded from wherever it lives.

``persyk-conformance diff BASE [HEAD]`` compares two versions of the contract. Each side is one of:

* a directory holding a checkout of this repository (``fixtures/v1``, ``schemas/``,
  ``contract/persyk_contract/rules.json``, ``docs/changes.md``);
* a release archive (``persyk-contract-X.Y.Z.tar.gz``, built by ``persyk-conformance release``)
  or the directory it unpacks to (it holds ``MANIFEST.json``);
* a git revision of the checkout given by ``--repo`` (default: the current directory), exported
  with ``git archive`` into a temporary directory.

A side is read into a :class:`ContractSide`: plain values (cases with their bytes, rules, codes,
retired ids, schemas, the changes log), so the comparison itself (``_contract_diff``) does no I/O.
Where the side carries the reference implementation's source, ``code_site`` is a directory that,
put on ``PYTHONPATH``, imports that version of ``persyk_session``; the diff runs it as the
"conforming implementation" of that side.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import subprocess
import tarfile
import tempfile
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CaseSnapshot", "ContractSide", "SideError", "load_side"]

CASE_GROUPS = ("golden", "rejection", "scenario")


class SideError(Exception):
    """A side cannot be read: not a checkout, not an archive, not a git revision."""


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
    scratch: tuple[Path, ...] = field(default=(), compare=False)

    def discard(self) -> None:
        """Remove the temporary directories this side was unpacked into."""
        for path in self.scratch:
            shutil.rmtree(path, ignore_errors=True)


# -- locating a side ---------------------------------------------------------------------------


def load_side(spec: str, repo: Path) -> ContractSide:
    """Read the side named by ``spec``: a directory, an archive, or a git revision of ``repo``."""
    path = Path(spec)
    if path.is_dir():
        return _load_directory(path.resolve(), label=spec, scratch=())
    if path.is_file() and spec.endswith((".tar.gz", ".tgz")):
        unpacked = Path(tempfile.mkdtemp(prefix="persyk-diff-"))
        _unpack_archive(path, unpacked)
        return _load_directory(_single_child(unpacked), label=spec, scratch=(unpacked,))
    if path.exists():
        raise SideError(f"{spec}: neither a directory nor a .tar.gz release archive")
    return _load_revision(spec, repo)


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
    exported = Path(tempfile.mkdtemp(prefix="persyk-diff-"))
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", "--format=tar", commit],
        capture_output=True, check=False,
    )
    if archive.returncode != 0:
        shutil.rmtree(exported, ignore_errors=True)
        raise SideError(f"git archive {revision} failed: {archive.stderr.decode(errors='replace')}")
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(exported, filter="data")
    return _load_directory(exported, label=f"{revision} ({commit[:12]})", scratch=(exported,))


def _unpack_archive(archive: Path, into: Path) -> None:
    try:
        with tarfile.open(archive, "r:gz") as tar:
            tar.extractall(into, filter="data")
    except (tarfile.TarError, OSError) as exc:
        raise SideError(f"{archive}: not a readable release archive ({exc})") from None


def _single_child(directory: Path) -> Path:
    children = [p for p in directory.iterdir() if p.is_dir()]
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
    if (root / "MANIFEST.json").is_file():  # a release (docs/maintainers.md, "Releases")
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
    layout = _layout(root, more)
    rules_doc = _json_file(layout.rules)
    codes_doc = _json_file(layout.errors)
    return ContractSide(
        label=label,
        version=str(rules_doc.get("contractVersion", "1.0.0")),
        rules={r["id"]: r for r in rules_doc["rules"]},
        codes={c["code"]: c for c in codes_doc["codes"]},
        cases=_cases(layout.fixtures),
        retired=_retired(layout.fixtures / "RETIRED.txt"),
        schemas=_files_below(layout.schemas, suffix=".json"),
        changes=layout.changes.read_text("utf-8") if layout.changes.is_file() else None,
        fixtures_root=layout.fixtures,
        code_site=layout.code_site,
        scratch=(*scratch, *more),
    )


def _json_file(path: Path) -> dict[str, Any]:
    try:
        loaded = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise SideError(f"{path}: cannot be read as JSON ({exc})") from None
    if not isinstance(loaded, dict):
        raise SideError(f"{path}: not a JSON object")
    return loaded


def _cases(fixtures: Path) -> dict[str, CaseSnapshot]:
    cases: dict[str, CaseSnapshot] = {}
    for group in CASE_GROUPS:
        folder = fixtures / group
        if not folder.is_dir():
            continue
        for case_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
            manifest = _json_file(case_dir / "case.json")
            case_id = str(manifest["id"])
            if case_id in cases:
                raise SideError(f"case id {case_id} appears twice under {fixtures}")
            cases[case_id] = CaseSnapshot(
                id=case_id,
                group=group,
                folder=f"{group}/{case_dir.name}",
                manifest=manifest,
                tree=_files_below(case_dir / "tree"),
            )
    if not cases:
        raise SideError(f"no case under {fixtures}")
    return cases


def _files_below(directory: Path, suffix: str = "") -> dict[str, bytes]:
    if not directory.is_dir():
        return {}
    return {
        path.relative_to(directory).as_posix(): path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_file() and not path.is_symlink() and path.name.endswith(suffix)
    }


def _retired(path: Path) -> dict[str, str]:
    """``RETIRED.txt``: one ``id<TAB>reason`` line per retired case; ``#`` starts a comment."""
    if not path.is_file():
        return {}
    retired: dict[str, str] = {}
    for line in path.read_text("utf-8").splitlines():
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
    same modules without installing anything.
    """
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():
        return None
    setuptools = tomllib.loads(pyproject.read_text("utf-8")).get("tool", {}).get("setuptools", {})
    package_dir: Mapping[str, str] = setuptools.get("package-dir", {})
    if "persyk_session" not in package_dir:
        return None
    site = Path(tempfile.mkdtemp(prefix="persyk-site-"))
    scratch.append(site)
    # Parents before children: a child package is linked inside its parent's real folder.
    for package in sorted(package_dir, key=lambda name: name.count(".")):
        source = root / package_dir[package]
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
        for entry in source.iterdir():
            if entry.name != "__pycache__":
                (target / entry.name).symlink_to(entry)
    return site
