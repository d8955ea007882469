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
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from persyk_conformance._bounded import (
    ArchiveLimits,
    Refused,
    extract_tar,
    read_json,
    read_regular,
    refuse_special,
    sha256_file,
)

__all__ = ["ArchiveUnreadable", "ReleaseError", "build_release", "verify_release"]

RELEASE_FORMAT = 1

# (folder of the checkout, folder in the archive, file-name suffixes kept)
_CONTENTS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("fixtures/v1", "cases/v1", ("",)),
    ("schemas", "schemas", (".json",)),
    ("reference/persyk_session", "reference-python/persyk_session", (".py", ".typed")),
    ("reference/persyk_dsh", "reference-python/persyk_dsh", (".py", ".typed")),
    ("contract/persyk_contract", "reference-python/persyk_contract", (".py", ".typed", ".json")),
    ("schemas", "reference-python/persyk_contract/schemas", (".py", ".json")),
)
_SINGLE_FILES: tuple[tuple[str, str], ...] = (
    ("contract/persyk_contract/rules.json", "rules.json"),
    ("contract/persyk_contract/errors.json", "errors.json"),
    ("contract/persyk_contract/capabilities.json", "capabilities.json"),
    ("docs/spec.md", "docs/spec.md"),
    ("docs/changes.md", "docs/changes.md"),
    ("docs/implementers/fixtures.md", "docs/implementers/fixtures.md"),
    ("docs/implementers/protocol.md", "docs/implementers/protocol.md"),
)
_README = """Persyk session format: contract {version}

cases/v1/      the conformance cases (docs/implementers/fixtures.md says how to read them)
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


_FILE_BYTES = 64 << 20  # the largest file a release packs (the contract's are under 1 MiB)
_ARCHIVE = ArchiveLimits()
_SMALL = 16 << 20  # SHA256SUMS


def _members(source: Path) -> Iterator[tuple[str, bytes]]:
    """What the release packs. A symbolic link, device, FIFO or socket anywhere in the packed
    folders is refused with its path: a link would pack what it points at."""
    for checkout_dir, archive_dir, suffixes in _CONTENTS:
        folder = source / checkout_dir
        if not folder.is_dir() or folder.is_symlink():
            raise ReleaseError(f"{folder}: missing; release needs a checkout")
        for path in sorted(refuse_special(folder)):
            if "__pycache__" in path.parts:
                continue
            if any(path.name.endswith(s) for s in suffixes):
                relative = path.relative_to(folder).as_posix()
                yield f"{archive_dir}/{relative}", read_regular(path, _FILE_BYTES)
    for checkout_file, archive_file in _SINGLE_FILES:
        path = source / checkout_file
        if not path.exists() and not path.is_symlink():
            raise ReleaseError(f"{path}: missing; release needs a checkout")
        yield archive_file, read_regular(path, _FILE_BYTES)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def build_release(source: Path, out_dir: Path) -> Path:
    """Write ``persyk-contract-<version>.tar.gz`` into ``out_dir``; return its path."""
    rules_file = source / "contract/persyk_contract/rules.json"
    if not rules_file.is_file():  # not a checkout: a usage problem, as a missing folder is
        raise ReleaseError(f"{rules_file}: missing; release needs a checkout")
    rules = read_json(rules_file)
    if not isinstance(rules, dict) or not isinstance(rules.get("contractVersion"), str):
        raise ReleaseError(f"{source}: rules.json names no contractVersion")
    version = rules["contractVersion"]
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


def _listed(manifest: Any, where: Path) -> Mapping[str, Mapping[str, Any]]:
    """MANIFEST.json's ``files``: each a member name with an integer size and a hex SHA-256."""
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(files, dict) or not isinstance(manifest.get("contract"), str) or not all(
        isinstance(entry, dict) and isinstance(entry.get("size"), int)
        and isinstance(entry.get("sha256"), str) and _is_member_name(name)
        for name, entry in files.items()
    ):
        raise Refused("MANIFEST_INVALID", where,
                      "'contract' and 'files' (member name -> size, sha256) are required")
    return files


def _is_member_name(name: str) -> bool:
    """A relative name inside the archive: no absolute path, no '..', no empty part."""
    parts = PurePosixPath(name).parts
    return bool(parts) and not PurePosixPath(name).is_absolute() and ".." not in parts \
        and "\\" not in name and "\0" not in name


def verify_release(archive: Path) -> str:
    """Check every file against MANIFEST.json and SHA256SUMS; return the contract version.

    Bounded: the archive is extracted within ArchiveLimits, every file's size is
    checked against MANIFEST.json before it is hashed as a stream, and SHA256SUMS may name
    only members of the archive."""
    with tempfile.TemporaryDirectory(prefix="persyk-release-") as scratch:
        try:
            archive_size = archive.stat().st_size
            opened = archive.open("rb")
        except OSError as exc:  # missing, unreadable: the caller's problem, not the archive's
            raise ArchiveUnreadable(f"{archive}: cannot be read ({exc})") from None
        try:
            with opened, tarfile.open(fileobj=opened, mode="r:gz") as tar:
                extract_tar(tar, Path(scratch), archive_size, archive, _ARCHIVE)
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise ReleaseError(f"{archive}: not a readable archive ({exc})") from None
        roots = list(Path(scratch).iterdir())
        if len(roots) != 1 or not (roots[0] / "MANIFEST.json").is_file():
            raise ReleaseError(f"{archive}: no single top-level folder with MANIFEST.json")
        root = roots[0]
        manifest = read_json(root / "MANIFEST.json")
        listed = _listed(manifest, root / "MANIFEST.json")
        present = {
            p.relative_to(root).as_posix() for p in refuse_special(root)
        } - {"MANIFEST.json", "SHA256SUMS"}
        problems = [f"{n}: not in MANIFEST.json" for n in sorted(present - set(listed))]
        problems += [f"{n}: listed but missing" for n in sorted(set(listed) - present)]
        for name in sorted(present & set(listed)):
            try:
                digest = sha256_file(root / name, listed[name]["size"])
            except Refused as exc:
                problems.append(f"{name}: {exc.detail}")
                continue
            if digest != listed[name]["sha256"]:
                problems.append(f"{name}: SHA-256 differs from MANIFEST.json")
        members = set(listed) | {"MANIFEST.json"}
        sums = read_regular(root / "SHA256SUMS", _SMALL).decode("utf-8", "replace")
        for line in sums.splitlines():
            digest, _, name = line.partition("  ")
            if name not in members:  # an absolute path or '..' is hashed nowhere
                problems.append(f"{name[:200]!r}: SHA256SUMS names no member of the archive")
                continue
            size = listed[name]["size"] if name in listed else None
            try:
                if sha256_file(root / name, size) != digest:
                    problems.append(f"{name}: SHA256SUMS does not match")
            except Refused as exc:
                problems.append(f"{name}: {exc.detail}")
        if problems:
            raise ReleaseError(f"{archive} does not verify:\n  " + "\n  ".join(problems))
        return str(manifest["contract"])
