"""Both command lines explain themselves: a version, a description for every command, and the
values an option accepts."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest
from persyk_conformance.cli import build_parser as conformance_parser
from persyk_contract import contract_version
from persyk_session.cli import build_parser as session_parser
from persyk_session.cli import main as session_main


def commands(parser: argparse.ArgumentParser, prefix: str = "") -> Iterator[tuple[str, str]]:
    """Every (sub)command's name and description, nested ones included."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield f"{prefix}{name}", sub.description or ""
                yield from commands(sub, f"{prefix}{name} ")


@pytest.mark.parametrize("build", [session_parser, conformance_parser],
                         ids=["persyk-session", "persyk-conformance"])
def test_every_command_has_a_description(build: object) -> None:
    assert callable(build)
    found = dict(commands(build()))
    assert len(found) >= 4
    assert {name: text for name, text in found.items() if not text.strip()} == {}


def test_persyk_session_prints_its_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        session_main(["--version"])
    assert stopped.value.code == 0
    assert f"(contract {contract_version()})" in capsys.readouterr().out


def test_context_help_lists_the_target_values(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        session_main(["context", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "anthropic-messages, openai-chat (default: openai-chat)" in out
