"""Start one contract side's own reference, confined for reads as well as writes.

``persyk-conformance diff`` runs each side's reference as the "conforming implementation" of
that side. A side is whatever a pull request or an archive holds, so its code is untrusted: the
runner that judges it is the installed one (``_evidence``), and the reference itself starts here,
as the adapter command of that run::

    python -I -m persyk_maintainers.gate._confine --site SITE --read ROOT [--trusted]

which, where the kernel has Landlock, restricts this process and everything it starts to

* **read** beneath the side's tree (``--read``, ``--site``), the interpreter (its prefixes, the
  standard library, site-packages, the shared libraries), /dev and the run's sandbox;
* **write** beneath the sandbox only (and existing files under /dev);
* **no network**: no TCP bind or connect (Landlock ABI 4), no abstract unix socket (ABI 6);

then ``exec``s ``python -s -P -m persyk_session.cli adapter`` with the side's code first on
``sys.path``. The sandbox is the parent of ``TMPDIR`` that the runner gives every adapter
(``run._workspace.Sandbox.adapter_env``). ``--trusted`` (``diff --trust-head``) skips the read
rules, for projects whose reference needs more than its tree; writes stay confined by the runner.
Without Landlock the reference runs write-watched only, and the diff report says so.
"""

from __future__ import annotations

import argparse
import os
import site
import sys
from collections.abc import Sequence
from pathlib import Path

from persyk_conformance.adapters._processes import Confinement, confinement_available

__all__ = ["launcher_argv", "main", "readable_for_interpreter"]

# Shared libraries and the loader's cache: the interpreter's extension modules link to them.
_SYSTEM = ("/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib", "/etc/ld.so.cache")


def launcher_argv(site_dir: Path, root: Path, *, trusted: bool) -> list[str]:
    """The adapter command that starts a side's reference through this module."""
    argv = [sys.executable, "-I", "-m", "persyk_maintainers.gate._confine",
            "--site", str(site_dir), "--read", str(root)]
    return [*argv, "--trusted"] if trusted else argv


def readable_for_interpreter() -> list[Path]:
    """What the interpreter needs to start and import the installed dependencies."""
    found = {Path(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    found.add(Path(os.path.realpath(sys.executable)).parent)
    found.update(Path(p) for p in site.getsitepackages())
    found.update(Path(p) for p in _SYSTEM)
    return sorted(found)


def _sandbox() -> Path | None:
    tmp = os.environ.get("TMPDIR")
    if not tmp:
        return None
    root = Path(tmp).resolve().parent
    return root if (root / "cases").is_dir() and (root / "home").is_dir() else None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="persyk-conformance-confined-reference")
    parser.add_argument("--site", type=Path, required=True)
    parser.add_argument("--read", type=Path, action="append", default=[])
    parser.add_argument("--trusted", action="store_true")
    args = parser.parse_args(argv)
    sandbox = _sandbox()
    if not args.trusted and confinement_available():
        if sandbox is None:
            print("persyk-conformance: no sandbox in TMPDIR; the side's reference is not started",
                  file=sys.stderr)
            return 2
        confinement = Confinement(
            sandbox,
            readable=[args.site, *args.read],
            executable=readable_for_interpreter(),
            network=False,
        )
        confinement.apply()
        confinement.close()
    env = dict(os.environ, PYTHONPATH=str(args.site))
    command = [sys.executable, "-s", "-P", "-m", "persyk_session.cli", "adapter"]
    os.execve(sys.executable, command, env)
    return 0  # not reached: execve replaces this process


if __name__ == "__main__":
    raise SystemExit(main())
