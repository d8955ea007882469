"""A release archive of the contract that an implementer in any language can vendor.

``persyk-conformance release`` packs, from a checkout, everything that defines one contract
version: the cases, the schemas, the rule table, the error catalog, the capability table, the
spec and its changes log, and the Python reference (so that a later ``diff`` can run the
implementation of that version). ``MANIFEST.json`` lists every file with its size and SHA-256,
and ``SHA256SUMS`` repeats the hashes in the format ``sha256sum -c`` reads, so the archive can be
checked without Python. The archive is byte-for-byte reproducible: sorted members, no owners,
a fixed time stamp.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["ArchiveUnreadable", "ReleaseError", "build_release", "verify_release"]

RELEASE_FORMAT = 1

# (folder of the checkout, folder in the archive, file-name suffixes kept)
_CONTENTS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("fixtures/v1", "cases/v1", ("",)),
    ("schemas", "schemas", (".json",)),
    ("reference/persyk_session", "reference-python/persyk_session", (".py", ".typed")),
    ("contract/persyk_contract", "reference-python/persyk_contract", (".py", ".typed", ".json")),
    ("schemas", "reference-python/persyk_contract/schemas", (".py", ".json")),
)
_SINGLE_FILES: tuple[tuple[str, str], ...] = (
    ("contract/persyk_contract/rules.json", "rules.json"),
    ("contract/persyk_contract/errors.json", "errors.json"),
    ("contract/persyk_contract/capabilities.json", "capabilities.json"),
    ("docs/spec.md", "docs/spec.md"),
    ("docs/changes.md", "docs/changes.md"),
    ("docs/fixtures.md", "docs/fixtures.md"),
    ("docs/protocol.md", "docs/protocol.md"),
)
_README = """Persyk session format: contract {version}

cases/v1/      the conformance cases (docs/fixtures.md says how to read them)
schemas/       JSON Schema 2020-12: v1 records, the adapter protocol, case manifests
rules.json     the numbered rules of docs/spec.md, with level, phase and versions
errors.json    the error catalog; capabilities.json, the protocol's capabilities
docs/          the spec, its changes log, the fixture and protocol references
reference-python/  the Python reference of this version (for `persyk-conformance diff`)

Check the archive without Python:  sha256sum -c SHA256SUMS
"""


class ReleaseError(Exception):
    """The checkout is not complete, or an archive does not verify."""


class ArchiveUnreadable(ReleaseError):
    """The archive to verify cannot be read at all (missing, no permission): a usage problem of
    ``release --verify`` (exit 2), unlike an archive that is read and does not verify (exit 1)."""


def _members(source: Path) -> Iterator[tuple[str, bytes]]:
    for checkout_dir, archive_dir, suffixes in _CONTENTS:
        folder = source / checkout_dir
        if not folder.is_dir():
            raise ReleaseError(f"{folder}: missing; release needs a checkout")
        for path in sorted(folder.rglob("*")):
            if "__pycache__" in path.parts or not path.is_file():
                continue
            if any(path.name.endswith(s) for s in suffixes):
                yield f"{archive_dir}/{path.relative_to(folder).as_posix()}", path.read_bytes()
    for checkout_file, archive_file in _SINGLE_FILES:
        path = source / checkout_file
        if not path.is_file():
            raise ReleaseError(f"{path}: missing; release needs a checkout")
        yield archive_file, path.read_bytes()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def build_release(source: Path, out_dir: Path) -> Path:
    """Write ``persyk-contract-<version>.tar.gz`` into ``out_dir``; return its path."""
    rules_file = source / "contract/persyk_contract/rules.json"
    if not rules_file.is_file():  # not a checkout: a usage problem, as a missing folder is
        raise ReleaseError(f"{rules_file}: missing; release needs a checkout")
    rules = json.loads(rules_file.read_text("utf-8"))
    version = str(rules["contractVersion"])
    files = dict(_members(source))
    files["README.txt"] = _README.format(version=version).encode()
    manifest = {
        "format": RELEASE_FORMAT,
        "contract": version,
        "files": {
            name: {"sha256": _sha256(data), "size": len(data)}
            for name, data in sorted(files.items())
        },
    }
    files["MANIFEST.json"] = (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()
    files["SHA256SUMS"] = "".join(
        f"{_sha256(data)}  {name}\n" for name, data in sorted(files.items())
    ).encode()
    prefix = f"persyk-contract-{version}"
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{prefix}.tar.gz"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(f"{prefix}/{name}")
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    with open(target, "wb") as raw, gzip.GzipFile(
        filename="", mode="wb", fileobj=raw, mtime=0
    ) as packed:
        packed.write(buffer.getvalue())
    return target


def verify_release(archive: Path) -> str:
    """Check every file against MANIFEST.json and SHA256SUMS; return the contract version."""
    with tempfile.TemporaryDirectory(prefix="persyk-release-") as scratch:
        try:
            data = archive.read_bytes()
        except OSError as exc:  # missing, unreadable: the caller's problem, not the archive's
            raise ArchiveUnreadable(f"{archive}: cannot be read ({exc})") from None
        try:
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
                tar.extractall(scratch, filter="data")
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise ReleaseError(f"{archive}: not a readable archive ({exc})") from None
        roots = list(Path(scratch).iterdir())
        if len(roots) != 1 or not (roots[0] / "MANIFEST.json").is_file():
            raise ReleaseError(f"{archive}: no single top-level folder with MANIFEST.json")
        root = roots[0]
        manifest = json.loads((root / "MANIFEST.json").read_text("utf-8"))
        listed: dict[str, dict[str, object]] = manifest["files"]
        present = {
            p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()
        } - {"MANIFEST.json", "SHA256SUMS"}
        problems = [f"{n}: not in MANIFEST.json" for n in sorted(present - set(listed))]
        problems += [f"{n}: listed but missing" for n in sorted(set(listed) - present)]
        for name in sorted(present & set(listed)):
            if _sha256((root / name).read_bytes()) != listed[name]["sha256"]:
                problems.append(f"{name}: SHA-256 differs from MANIFEST.json")
        for line in (root / "SHA256SUMS").read_text("utf-8").splitlines():
            digest, _, name = line.partition("  ")
            if not (root / name).is_file() or _sha256((root / name).read_bytes()) != digest:
                problems.append(f"{name}: SHA256SUMS does not match")
        if problems:
            raise ReleaseError(f"{archive} does not verify:\n  " + "\n  ".join(problems))
        return str(manifest["contract"])
