"""What each ``persyk-session`` command may import: every command runs in a fresh
interpreter, and the modules loaded after its run are compared with its pin.

One line per command: what it must import (so that a run that failed before reaching its
operation cannot pass) and what it must not. ``validate`` loads no search, realtime, media or
dsh module, and in readable mode (operations/_mode.py) neither orjson nor jsonschema_rs; each
``dsh`` operation loads the base and ``persyk_dsh`` only, and in readable mode
(persyk_dsh.operations chooses the codec) neither orjson nor jsonschema_rs either.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

P = "persyk_session."
# The dsh-v0 backend, under its own name and its former one (re-exported by persyk_session/dsh.py).
DSH = ("persyk_dsh", f"{P}dsh")
# Subpackages no session-file command needs (the dsh profile, search, the realtime machinery).
NOT_OTHERS = (*DSH, f"{P}search", f"{P}realtime", f"{P}adapter")
HEAVY = ("numpy", "soundfile", "regex")
READ_ONLY = (*NOT_OTHERS, f"{P}media", f"{P}write._append", f"{P}write._recovery", *HEAVY)


@dataclass(frozen=True)
class Pin:
    argv: tuple[str, ...]
    needs: str  # the module that does the command's work: proof that it ran
    forbidden: tuple[str, ...]
    mode: str = "fast"
    stdin: bytes = b""


# What a command module of this package imports in readable mode is never a fast path.
FAST = ("orjson", "jsonschema_rs", "msgspec")
# The dsh profile shares nothing with the v1 reference but the durable writes
# (persyk_dsh/__init__.py).
NOT_V1 = (f"{P}read", f"{P}write", f"{P}media", f"{P}search", f"{P}realtime", f"{P}operations",
          *HEAVY)
DSH_TURN_START = b'{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}\n'

# What validate and info of a small session do not need: leaf selection and
# context, paging with its read cache and the live index, the typed lane of large files (msgspec,
# fast/_lanes.TYPED_LANE_MIN_BYTES), and a version lookup through the installed metadata.
NOT_SMALL_READ = (f"{P}read._context", f"{P}read._paging", f"{P}read._read_cache",
                  f"{P}read._live", f"{P}fast._messages_typed", "msgspec", "importlib.metadata")

PINS: dict[str, Pin] = {
    "validate": Pin(("validate", "{s}"), f"{P}operations._read",
                    (*READ_ONLY, *NOT_SMALL_READ, "jsonschema", "referencing")),
    "validate readable": Pin(("validate", "{s}"), f"{P}operations._read",
                             (*READ_ONLY, *NOT_SMALL_READ, *FAST), mode="readable"),
    "context": Pin(("context", "{s}"), f"{P}operations._read", READ_ONLY),
    "context readable": Pin(("context", "{s}"), f"{P}operations._read", (*READ_ONLY, *FAST),
                            mode="readable"),
    "info": Pin(("info", "{s}"), f"{P}operations._read", (*READ_ONLY, *NOT_SMALL_READ)),
    "read": Pin(("read", "{s}", "--page-size", "5"), f"{P}operations._read", READ_ONLY),
    "create": Pin(("create", "{new}"), f"{P}operations._write",
                  (*NOT_OTHERS, f"{P}media", *HEAVY)),
    "append": Pin(("append", "{s}", "--records", "-"), f"{P}operations._write",
                  (*NOT_OTHERS, f"{P}media", *HEAVY),
                  stdin=b'{"type":"session_info","id":"i1","parentId":null,'
                        b'"timestamp":"2026-01-01T00:00:01.000Z","name":"n"}\n'),
    "remove": Pin(("remove", "{s}", "--target", "x", "--id", "r1", "--timestamp",
                   "2026-01-01T00:00:02.000Z", "--leaf-null"), f"{P}operations._write",
                  (*NOT_OTHERS, f"{P}media", *HEAVY)),
    "recover": Pin(("recover", "{s}"), f"{P}write._recovery",
                   (*NOT_OTHERS, f"{P}media", *HEAVY)),
    "capture": Pin(("capture", "{s}", "--recording", "r1", "--leaf-null", "--rate", "16000"),
                   f"{P}media._capture", (*NOT_OTHERS, *HEAVY)),
    "recover-recording": Pin(("recover-recording", "{s}", "--recording", "r9"),
                             f"{P}media._capture", (*NOT_OTHERS, *HEAVY)),
    "asset": Pin(("asset", "verify", "{s}", "--path", "assets/none"), f"{P}media._assets",
                 (*NOT_OTHERS, *HEAVY)),
    "delete": Pin(("delete", "{s}"), f"{P}media._delete", (*NOT_OTHERS, *HEAVY)),
    "sanitize": Pin(("sanitize",), f"{P}realtime._sanitize",
                    (*DSH, f"{P}search", f"{P}media", f"{P}write",
                     f"{P}realtime._replay_run", *HEAVY), stdin=b'{"a": 1}'),
    "replay": Pin(("replay", "{s}", "--script", "{absent}", "--leaf-null"),
                  f"{P}realtime._replay_run", (*DSH, f"{P}search", *HEAVY)),
    "discover": Pin(("discover", "--root", "{root}"), f"{P}search._discovery",
                    (*DSH, f"{P}realtime", f"{P}media", f"{P}write._append", *HEAVY)),
    "search": Pin(("search", "hello", "--root", "{root}"), f"{P}search._discovery",
                  (*DSH, f"{P}realtime", f"{P}media", f"{P}write._append", "numpy",
                   "soundfile")),
    "open-result": Pin(("open-result", "{}"), f"{P}operations._search",
                       (*DSH, f"{P}realtime", f"{P}media", f"{P}write._append",
                        "numpy", "soundfile")),
    "dsh list": Pin(("dsh", "list", "--root", "{dsh}", "--json"), "persyk_dsh.operations",
                    (*NOT_V1, "jsonschema_rs", "jsonschema")),
    "dsh list readable": Pin(("dsh", "list", "--root", "{dsh}", "--json"), "persyk_dsh.operations",
                             (*NOT_V1, *FAST, "jsonschema"), mode="readable"),
    "dsh create": Pin(("dsh", "create", "--root", "{dsh}", "--id", "d2", "--json"),
                      "persyk_dsh.operations", (*NOT_V1, "jsonschema_rs", "jsonschema")),
    "dsh create readable": Pin(("dsh", "create", "--root", "{dsh}", "--id", "d2", "--json"),
                               "persyk_dsh.operations", (*NOT_V1, *FAST, "jsonschema"),
                               mode="readable"),
    # append and load check the data of the types recovery reads (DSH-12): jsonschema-rs in the
    # fast mode, python-jsonschema in the readable one.
    "dsh append": Pin(("dsh", "append", "--root", "{dsh}", "--id", "d3", "--json"),
                      "persyk_dsh._encode", (*NOT_V1, "jsonschema"), stdin=DSH_TURN_START),
    "dsh append readable": Pin(("dsh", "append", "--root", "{dsh}", "--id", "d4", "--json"),
                               "persyk_dsh._encode", (*NOT_V1, *FAST), mode="readable",
                               stdin=DSH_TURN_START),
    "dsh load": Pin(("dsh", "load", "--root", "{dsh}", "--id", "d1", "--json"), "persyk_dsh._scan",
                    (*NOT_V1, "jsonschema")),
    "dsh load readable": Pin(("dsh", "load", "--root", "{dsh}", "--id", "d1", "--json"),
                             "persyk_dsh._scan", (*NOT_V1, *FAST), mode="readable"),
    "adapter": Pin(("adapter",), f"{P}adapter",
                   (*DSH, f"{P}search", f"{P}realtime", f"{P}media", f"{P}write._append",
                    *HEAVY),
                   stdin=b'{"cmd":"hello"}\n{"cmd":"stop"}\n'),
    "--help": Pin(("--help",), f"{P}cli",
                  (f"{P}read", f"{P}write", f"{P}operations", *NOT_OTHERS, f"{P}media",
                   *FAST, "jsonschema")),
}

# Runs one command in this interpreter, then writes the names of the loaded modules.
_RUN = """
import json, sys
from persyk_session.cli import main
try:
    main(sys.argv[2:])
except SystemExit:
    pass
with open(sys.argv[1], "w") as out:
    json.dump(sorted(sys.modules), out)
"""


def unwanted(modules: Iterable[str], forbidden: Iterable[str]) -> list[str]:
    """The loaded modules that a pin forbids: the module itself or anything inside it."""
    prefixes = tuple(forbidden)
    return sorted(m for m in modules if any(m == p or m.startswith(f"{p}.") for p in prefixes))


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    base = tmp_path_factory.mktemp("pins")
    root = base / "root"
    made = subprocess.run([sys.executable, "-m", "persyk_session.cli", "create",
                           str(root / "s"), "--id", "h1", "--timestamp",
                           "2026-01-01T00:00:00.000Z"], capture_output=True)
    assert made.returncode == 0, made.stderr
    dsh = base / "dsh"
    appended = subprocess.run([sys.executable, "-m", "persyk_session.cli", "dsh", "append",
                               "--root", str(dsh), "--id", "d1"], input=DSH_TURN_START,
                              capture_output=True)
    assert appended.returncode == 0, appended.stderr
    return {"s": str(root / "s"), "root": str(root), "new": str(base / "new"),
            "absent": str(base / "absent.script"), "base": str(base), "dsh": str(dsh)}


def loaded_by(pin: Pin, places: dict[str, str], name: str, prelude: str = "") -> list[str]:
    out = Path(places["base"]) / f"{name.replace(' ', '-')}.modules.json"
    argv = [arg.format(**places) if "{" in arg and arg != "{}" else arg for arg in pin.argv]
    env = {**os.environ, "PERSYK_SESSION_MODE": pin.mode}
    subprocess.run([sys.executable, "-c", prelude + _RUN, str(out), *argv], input=pin.stdin,
                   capture_output=True, env=env, timeout=60, check=False)
    modules: list[str] = json.loads(out.read_text())
    return modules


@pytest.mark.parametrize("name", sorted(PINS))
def test_each_command_imports_only_what_its_part_of_the_spec_needs(
    name: str, places: dict[str, str]
) -> None:
    pin = PINS[name]
    modules = loaded_by(pin, places, name)
    assert pin.needs in modules, f"{name} never reached {pin.needs}: the run is no evidence"
    assert unwanted(modules, pin.forbidden) == []


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(n for n, pin in PINS.items() if pin.mode == "fast"))
def test_no_command_loads_orjson_or_jsonschema_rs_in_readable_mode(
    name: str, places: dict[str, str]
) -> None:
    # operations/_mode.py and persyk_dsh.operations.mode_codec: readable mode runs the readable
    # core alone, in every command, not only in those with a readable pin above.
    pin = replace(PINS[name], mode="readable")
    modules = loaded_by(pin, places, f"{name} as readable")
    assert pin.needs in modules, f"{name} never reached {pin.needs}: the run is no evidence"
    assert unwanted(modules, FAST) == []


def test_every_command_of_the_table_has_a_pin() -> None:
    from persyk_session.cli import COMMANDS

    assert {c.name for c in COMMANDS} <= {name.split()[0] for name in PINS}


def test_the_pin_catches_a_command_that_loads_everything(places: dict[str, str]) -> None:
    # The broken variant: validate run after the parser of every command is built, as the CLI
    # once did (it added every command's options, importing each module up front).
    eager = "from persyk_session.cli import build_parser; build_parser()\n"
    modules = loaded_by(PINS["validate readable"], places, "eager", prelude=eager)
    found = unwanted(modules, PINS["validate readable"].forbidden)
    assert f"{P}search._discovery" in found and f"{P}media._capture" in found
    # Even with every command's module imported (dsh's included), readable mode loads no fast
    # path: dsh reads and writes through the codec its operations choose by the mode.
    assert "persyk_dsh._records" in found
    assert [m for m in found if m in FAST] == []


def test_unwanted_names_a_forbidden_module_and_its_submodules_only() -> None:
    modules = ["persyk_session.search", "persyk_session.search._judge", "persyk_session.searcher",
               "orjson", "orjsonx"]
    assert unwanted(modules, ["persyk_session.search", "orjson"]) == [
        "orjson", "persyk_session.search", "persyk_session.search._judge"]


# Every module of ours, and every package from outside the standard library, that a validate of
# a small session may load in the fast mode: the start-up target (docs/maintainers/performance.md)
# is met by loading no more. A new import on this path must be added here, on purpose.
SMALL_VALIDATE_MAY_LOAD = frozenset({
    "persyk_contract", "persyk_contract.schemas", "orjson", "jsonschema_rs",
    *(f"{P}{name}" for name in (
        "_errors", "_exit", "_fsutil", "_lines", "_mode_name", "_version", "cli", "cli._session",
        "cli._shared", "operations", "operations._args", "operations._mode", "operations._read",
        "read", "read._engine", "read._entries", "read._feed", "read._grammar", "read._graph",
        "read._index", "read._records", "read._schema", "read._store",
        # the fast engine (fast/__init__.py); its msgspec lanes load only for a large read
        "fast", "fast._batch", "fast._blocks", "fast._bodies_fast", "fast._entries_fast",
        "fast._feed_fast", "fast._json_fast", "fast._lanes", "fast._records_fast",
        "fast._schema_fast")),
    "persyk_session",
})


def outside_the_standard_library(modules: Iterable[str]) -> set[str]:
    """Our modules and the top-level packages from outside the standard library (site's own
    start-up hooks, whose names begin with an underscore or end in customize, left out)."""
    found: set[str] = set()
    for module in modules:
        top = module.partition(".")[0]
        if top in ("persyk_session", "persyk_contract"):
            found.add(module)
        elif not (top in sys.stdlib_module_names or top.startswith("_")
                  or top.endswith("customize")):
            found.add(top)
    return found


def test_a_small_validate_loads_only_its_pinned_modules(places: dict[str, str]) -> None:
    modules = loaded_by(PINS["validate"], places, "validate allow-list")
    assert PINS["validate"].needs in modules, "validate never ran: the run is no evidence"
    assert sorted(outside_the_standard_library(modules) - SMALL_VALIDATE_MAY_LOAD) == []


def test_the_pins_catch_a_validate_that_takes_the_typed_lane_at_any_size(
    places: dict[str, str],
) -> None:
    # The broken variant: the typed lane taken whatever the read's size.
    eager = ("import persyk_session.fast._lanes as lanes\n"
             "lanes.typed_lane_pays = lambda size: True\n")
    modules = loaded_by(PINS["validate"], places, "eager lane", prelude=eager)
    assert "msgspec" in unwanted(modules, PINS["validate"].forbidden)
    assert {"msgspec", f"{P}fast._messages_typed"} <= (
        outside_the_standard_library(modules) - SMALL_VALIDATE_MAY_LOAD)


def test_a_large_validate_takes_the_typed_lane(
    places: dict[str, str], tmp_path: Path,
) -> None:
    # The size gate must open: a session past TYPED_LANE_MIN_BYTES of plain messages is read
    # through the lane (its throughput is what it is for).
    from persyk_session.fast._lanes import TYPED_LANE_MIN_BYTES

    session = tmp_path / "large"
    session.mkdir()
    header = Path(places["s"], "session.jsonl").read_bytes()
    line = ('{"type":"message","id":"m%d","parentId":%s,"timestamp":"2026-01-01T00:00:01.000Z",'
            '"message":{"role":"user","content":[{"type":"text","text":"hello"}],'
            '"timestamp":1}}\n')
    count = TYPED_LANE_MIN_BYTES // len(line % (0, "null")) + 1
    body = "".join(line % (i, f'"m{i - 1}"' if i else "null") for i in range(count))
    (session / "session.jsonl").write_bytes(header + body.encode())
    modules = loaded_by(PINS["validate"], {**places, "s": str(session)}, "large validate")
    assert PINS["validate"].needs in modules
    assert f"{P}fast._messages_typed" in modules and "msgspec" in modules

