"""The suite's own packages beside the contract archive: ``release --packages``.

From a checkout it writes, into one folder, the contract archive (``_release.py``), the suite's
sdist and its wheel built *from that sdist* (as ``python -m build`` does: what the sdist lacks,
the wheel lacks, so a short sdist cannot go unnoticed), ``BUILDINFO.json`` (the time stamp used
and where it came from, the build backend's versions) and ``SHA256SUMS`` over all of them.

Byte for byte reproducible from the same checkout:

- ``SOURCE_DATE_EPOCH`` is the environment's when set, else the last commit's date, else a
  fixed 1980-01-01 (the earliest a zip entry can hold); BUILDINFO.json records which;
- the backend (``build-system`` of pyproject.toml, installed by pip into a folder of its own, as
  pip's build isolation does) gets it, and setuptools' wheel then stamps every zip entry with it;
- the sdist's tar is repacked: sorted members, owner 0 and no names, normalised modes, every
  time stamp the epoch, a gzip header without time or name (setuptools stamps the build's time
  in the gzip header and the files' own times in the tar);
- the backend builds from a staged copy of the files the build reads (pyproject.toml, the
  readme, the package-dir folders), so nothing in the checkout is written to and no stale
  ``build/`` folder can add a module; a link or special file in them is refused.

The pure parts (choosing the epoch, repacking a tar, the sums) take and return bytes and values;
the edges (pip, the backend's hooks, files) are the functions that say so.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from persyk_conformance._bounded import read_regular, refuse_special

from ._release import ReleaseError, build_release

__all__ = ["BuildFailed", "Packages", "SourceDate", "build_packages", "build_wheel_from_sdist",
           "choose_source_date", "prepare_build_env", "repack_sdist", "sha256sums"]

BUILDINFO_FORMAT = 1
# The earliest time a zip entry can hold (DOS dates start in 1980): a wheel cannot be older.
FIXED_EPOCH = 315_532_800
_PIP_TIMEOUT = 300.0  # the build requirements come from the index pip is configured with
_HOOK_TIMEOUT = 300.0
_SKIPPED = frozenset({"__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache"})
_PYPROJECT_BYTES = 1 << 20
_SDIST_BYTES = 512 << 20

# Runs one PEP 517 hook of the backend named in argv[1] and writes what it returns to argv[4];
# the arguments are read first: setuptools' hooks overwrite sys.argv.
_HOOK = """
import importlib, json, sys
reference, hook, arguments, answer = sys.argv[1:5]
module, _, attribute = reference.partition(":")
backend = importlib.import_module(module)
for name in filter(None, attribute.split(".")):
    backend = getattr(backend, name)
result = getattr(backend, hook)(*json.loads(arguments))
with open(answer, "w", encoding="utf-8") as out:
    json.dump(result, out)
"""


class BuildFailed(ReleaseError):
    """pip could not install the build requirements, or the backend failed: its output says why."""


@dataclass(frozen=True)
class SourceDate:
    """The time stamp of every file of the release, and where it came from."""

    epoch: int
    origin: str  # "environment" (SOURCE_DATE_EPOCH), "git" (the last commit) or "fixed"


@dataclass(frozen=True)
class Packages:
    """What ``build_packages`` wrote: each path, in the order SHA256SUMS lists them."""

    contract: Path
    sdist: Path
    wheel: Path
    buildinfo: Path
    sums: Path


def choose_source_date(environment: str | None, commit_time: str | None) -> SourceDate:
    """SOURCE_DATE_EPOCH as set by the caller, else the last commit's time, else FIXED_EPOCH.

    A value before 1980 is raised to it: a zip entry cannot hold an earlier time, and the
    backend would stamp the wheel with the build's own time instead."""
    for value, origin in ((environment, "environment"), (commit_time, "git")):
        text = (value or "").strip()
        if text.isdecimal():
            return SourceDate(max(int(text), FIXED_EPOCH), origin)
        if origin == "environment" and text:
            raise ReleaseError(f"SOURCE_DATE_EPOCH={value!r}: not a number of seconds")
    return SourceDate(FIXED_EPOCH, "fixed")


def last_commit_time(source: Path) -> str | None:
    """``git log -1 --format=%ct`` of the checkout, or None outside a git checkout."""
    if not (source / ".git").exists():
        return None
    try:
        done = subprocess.run(["git", "-C", str(source), "log", "-1", "--format=%ct"],
                              capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _normalised(member: tarfile.TarInfo, epoch: int) -> tarfile.TarInfo:
    if not (member.isfile() or member.isdir()):  # setuptools packs neither links nor devices
        raise ReleaseError(f"{member.name}: the sdist holds a link or special file")
    info = tarfile.TarInfo(member.name)
    info.type, info.size, info.mtime = member.type, member.size, epoch
    info.mode = 0o755 if member.isdir() or member.mode & 0o111 else 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def repack_sdist(packed: bytes, epoch: int) -> bytes:
    """The same members in name order, with owner, mode and time normalised, gzipped without a
    time stamp or file name in the header: equal content gives equal bytes."""
    members: list[tuple[tarfile.TarInfo, bytes | None]] = []
    with tarfile.open(fileobj=io.BytesIO(packed), mode="r:gz") as tar:
        for member in tar.getmembers():
            data = tar.extractfile(member) if member.isfile() else None
            members.append((_normalised(member, epoch), None if data is None else data.read()))
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as out:
        for info, content in sorted(members, key=lambda pair: pair[0].name):
            out.addfile(info, None if content is None else io.BytesIO(content))
    result = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=result, mtime=0) as compressed:
        compressed.write(buffer.getvalue())
    return result.getvalue()


def sha256sums(files: Sequence[Path]) -> str:
    """SHA256SUMS in the format ``sha256sum -c`` reads, by file name (they share one folder)."""
    lines = (f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.name}\n" for p in files)
    return "".join(sorted(lines, key=lambda line: line.split("  ", 1)[1]))


@dataclass(frozen=True)
class _Project:
    backend: str
    requires: tuple[str, ...]
    inputs: tuple[str, ...]  # what the build reads, relative to the checkout


def _read_project(source: Path) -> _Project:
    path = source / "pyproject.toml"
    try:
        data = tomllib.loads(read_regular(path, _PYPROJECT_BYTES).decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ReleaseError(f"{path}: cannot be read ({exc}); release needs a checkout") from None
    system = data.get("build-system", {})
    if "backend-path" in system:  # an in-tree backend would run code of the checkout's choice
        raise ReleaseError(f"{path}: an in-tree build backend (backend-path) is not supported")
    readme = data.get("project", {}).get("readme")
    readme_file = readme.get("file") if isinstance(readme, dict) else readme
    folders = data.get("tool", {}).get("setuptools", {}).get("package-dir", {}).values()
    inputs = {"pyproject.toml"} | {str(folder).split("/", 1)[0] for folder in folders}
    if isinstance(readme_file, str):
        inputs.add(readme_file)
    inputs |= {name for name in ("MANIFEST.in", "setup.py", "setup.cfg", "LICENSE")
               if (source / name).exists()}
    return _Project(str(system.get("build-backend", "setuptools.build_meta:__legacy__")),
                    tuple(system.get("requires", ["setuptools"])), tuple(sorted(inputs)))


def _stage(source: Path, inputs: Sequence[str], staging: Path) -> None:
    """Copy what the build reads, caches left out, refusing a link or special file."""
    for name in inputs:
        for path in refuse_special(source / name):
            relative = path.relative_to(source)
            if _SKIPPED & set(relative.parts) or path.suffix == ".pyc":
                continue
            target = staging / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)


def _pip_install(requirements: Sequence[str], target: Path) -> None:
    if not requirements:
        return
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
               "--no-warn-script-location", "--target", str(target), *requirements]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=_PIP_TIMEOUT,
                              check=False)
    except subprocess.TimeoutExpired:
        raise BuildFailed(f"pip install {' '.join(requirements)}: over {_PIP_TIMEOUT:.0f} s"
                          ) from None
    if done.returncode != 0:
        raise BuildFailed(f"pip install {' '.join(requirements)} failed:\n{done.stderr[-4000:]}")


def prepare_build_env(source: Path, target: Path) -> Path:
    """Install the checkout's ``build-system.requires`` into ``target`` (as pip's build isolation
    does) and return it; a folder made once can serve several builds of the same checkout."""
    _pip_install(_read_project(source).requires, target)
    return target


def _hook_environment(build_env: Path, date: SourceDate) -> dict[str, str]:
    environment = dict(os.environ)
    environment.update(PYTHONPATH=str(build_env), PYTHONNOUSERSITE="1",
                       PYTHONDONTWRITEBYTECODE="1", SOURCE_DATE_EPOCH=str(date.epoch))
    return environment


def _call_hook(backend: str, hook: str, arguments: Sequence[object], cwd: Path,
               environment: Mapping[str, str]) -> object:
    """One PEP 517 hook in a fresh interpreter without site-packages (-S): only the standard
    library and the build folder, as in an isolated build."""
    with tempfile.TemporaryDirectory(prefix="persyk-hook-") as scratch:
        answer = Path(scratch) / "answer.json"
        command = [sys.executable, "-S", "-c", _HOOK, backend, hook, json.dumps(arguments),
                   str(answer)]
        try:
            done = subprocess.run(command, cwd=cwd, env=dict(environment), capture_output=True,
                                  text=True, timeout=_HOOK_TIMEOUT, check=False)
        except subprocess.TimeoutExpired:
            raise BuildFailed(f"{backend} {hook}: over {_HOOK_TIMEOUT:.0f} s") from None
        if done.returncode != 0:
            raise BuildFailed(f"{backend} {hook} failed:\n{done.stderr[-4000:]}")
        result: object = json.loads(answer.read_text("utf-8"))
        return result


def _build(project: _Project, hook: str, cwd: Path, out: Path,
           environment: Mapping[str, str], build_env: Path) -> Path:
    extra = _call_hook(project.backend, f"get_requires_for_{hook}", [], cwd, environment)
    if isinstance(extra, list) and extra:  # setuptools before 70.1 asks for `wheel` here
        _pip_install([str(item) for item in extra], build_env)
    name = _call_hook(project.backend, hook, [str(out)], cwd, environment)
    if not isinstance(name, str) or "/" in name:
        raise BuildFailed(f"{project.backend} {hook} returned {name!r}, not a file name")
    return out / name


def _installed(build_env: Path) -> list[str]:
    """``name==version`` of every distribution in the build folder."""
    found = []
    for info in sorted(build_env.glob("*.dist-info")):
        name, _, version = info.name.removesuffix(".dist-info").partition("-")
        found.append(f"{name}=={version}")
    return found


def build_wheel_from_sdist(sdist: Path, out_dir: Path, build_env: Path,
                           date: SourceDate) -> Path:
    """Unpack ``sdist`` and build the wheel from it into ``out_dir``; return its path."""
    with tempfile.TemporaryDirectory(prefix="persyk-wheel-") as scratch:
        unpacked, built = Path(scratch) / "unpacked", Path(scratch) / "built"
        unpacked.mkdir()
        built.mkdir()
        with tarfile.open(sdist, mode="r:gz") as tar:
            tar.extractall(unpacked, filter="data")
        [root] = unpacked.iterdir()
        project = _read_project(root)
        environment = _hook_environment(build_env, date)
        raw_wheel = _build(project, "build_wheel", root, built, environment, build_env)
        wheel = out_dir / raw_wheel.name
        shutil.copyfile(raw_wheel, wheel)
    return wheel


def build_packages(source: Path, out_dir: Path, *, build_env: Path | None = None,
                   environ: Mapping[str, str] = os.environ) -> Packages:
    """Write the contract archive, the sdist, the wheel built from it, BUILDINFO.json and
    SHA256SUMS into ``out_dir``. ``build_env``: a folder ``prepare_build_env`` made (else one is
    made and removed)."""
    project = _read_project(source)
    date = choose_source_date(environ.get("SOURCE_DATE_EPOCH"), last_commit_time(source))
    out_dir.mkdir(parents=True, exist_ok=True)
    contract = build_release(source, out_dir)
    with tempfile.TemporaryDirectory(prefix="persyk-packages-") as scratch:
        work = Path(scratch)
        if build_env is None:
            build_env = prepare_build_env(source, work / "build-env")
        staged, built = work / "source", work / "built"
        staged.mkdir()
        built.mkdir()
        _stage(source, project.inputs, staged)
        environment = _hook_environment(build_env, date)
        raw_sdist = _build(project, "build_sdist", staged, built, environment, build_env)
        sdist = out_dir / raw_sdist.name
        sdist.write_bytes(repack_sdist(read_regular(raw_sdist, _SDIST_BYTES), date.epoch))
        wheel = build_wheel_from_sdist(sdist, out_dir, build_env, date)
        requirements = _installed(build_env)
    buildinfo = out_dir / "BUILDINFO.json"
    buildinfo.write_text(json.dumps({
        "format": BUILDINFO_FORMAT,
        "sourceDateEpoch": date.epoch,
        "sourceDateEpochFrom": date.origin,
        "buildBackend": project.backend,
        "buildRequirements": requirements,
        # The compressor and the interpreter shape the bytes too: a rebuild elsewhere that
        # differs can be told apart from one that is wrong.
        "python": platform.python_version(),
        "zlib": zlib.ZLIB_RUNTIME_VERSION,
        "files": sorted(p.name for p in (contract, sdist, wheel)),
    }, indent=2) + "\n", "utf-8")
    sums = out_dir / "SHA256SUMS"
    sums.write_text(sha256sums([contract, sdist, wheel, buildinfo]), "utf-8")
    return Packages(contract, sdist, wheel, buildinfo, sums)
