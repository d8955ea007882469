"""The command table of ``persyk-conformance``: each command's name, one-line help and the module
that defines it, so that the command line imports only the chosen command's module (the pip
model: ``pip/_internal/commands/__init__.py``). tests/repo/test_import_pins_runner.py pins what
``--help`` and each command may import.

A command module exposes ``register(sub, command)``: it adds the parser of ``command`` (with
``command.help``) and sets ``run`` to a function returning a ``_status.Verdict``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from dataclasses import dataclass
from typing import Protocol, TypeAlias

__all__ = ["COMMANDS", "REFERENCE_ADAPTER", "Command", "CommandModule", "SubParsers"]

# argparse's type is generic in the stubs only, hence the string.
SubParsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

# The built-in implementation, reached through its own adapter as a subprocess by default: the
# same road every other implementation takes, so a pass proves the protocol too.
REFERENCE_ADAPTER: tuple[str, ...] = (sys.executable, "-m", "persyk_session.cli", "adapter")


class CommandModule(Protocol):
    def register(self, sub: SubParsers, command: Command) -> None: ...


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    help: str
    module: str  # relative to this package: "._run"; or absolute (_MAINTAINERS)

    def load(self) -> CommandModule:
        module: CommandModule = importlib.import_module(self.module, __package__)
        return module


# The commands maintainers and publishers run live in persyk_maintainers, which imports the
# runner; the runner names them here and never imports them itself (tests/repo/test_layers.py).
_MAINTAINERS = "persyk_maintainers.cli."

# In the order `persyk-conformance --help` lists them.
COMMANDS: tuple[Command, ...] = (
    Command("run", "run the suite against an implementation", "._run"),
    Command("list", "list the cases", "._cases"),
    Command("show", "print one case: manifest, input bytes, expectations, rule texts", "._cases"),
    Command("check-fixtures", "sanity-check the fixtures and run them against the reference",
            "._cases"),
    Command("diff", "classify a contract change as compatible or breaking",
            _MAINTAINERS + "_gate"),
    Command("release", "build or verify a release archive of the contract",
            _MAINTAINERS + "_gate"),
    Command("bench", "time fixed workloads through one or more adapters",
            _MAINTAINERS + "_bench"),
    Command("merge", "join the shard reports of one run (run --shard K/N) into one report",
            "._merge"),
    Command("compare", "several implementations side by side, from their JSON reports",
            _MAINTAINERS + "_compare"),
    Command("fuzz", "compare an implementation with the reference on generated sessions",
            "._fuzz"),
    Command("site", "a static site of run reports: badges, matrix, a page per case",
            _MAINTAINERS + "_site"),
)
