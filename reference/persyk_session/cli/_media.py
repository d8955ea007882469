"""The ``persyk-session`` commands of the assets and capture capabilities: ``capture``,
``recover-recording``, ``asset verify|write`` and ``delete`` (in the table of :mod:`.cli`).

``capture`` streams raw little-endian 16-bit PCM from standard input into a capture: the WAV and
``recording.started`` are durable before the first frame is read (CAP-1), the asset lock is held
while it runs (CAP-19), and at the end of input -- or on SIGTERM -- the sizes are fixed, fsynced
and ``recording.finished`` is appended (CAP-22). A killed capture leaves a WAV that
``recover-recording`` repairs (CAP-23..CAP-27). Exit status as everywhere: 0 done, 1 refused by
the contract, 2 usage or I/O (:func:`persyk_session._exit.exit_status`).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import Any

from .._errors import Code, ContractError, UsageError
from ..media._capture import finish_capture, start_capture, write_frames
from ..operations import op_asset_verify, op_asset_write, op_delete_session, op_recover_recording
from ..read._context import LeafSelector
from ._shared import report

__all__ = [
    "args_asset", "args_capture", "args_delete", "args_recover_recording", "cmd_asset",
    "cmd_capture", "cmd_delete", "cmd_recover_recording",
]

_READ_SIZE = 1 << 16


# --- capture -----------------------------------------------------------------------------------


def args_capture(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="the session directory")
    parser.add_argument("--recording", required=True, metavar="ID", help="the recording id")
    leaf = parser.add_mutually_exclusive_group(required=True)
    leaf.add_argument("--leaf", metavar="ID", help="the parent of recording.started")
    leaf.add_argument("--leaf-null", action="store_true", help="recording.started is a root")
    parser.add_argument("--rate", type=int, default=24000, help="sample rate (CAP-21)")
    parser.add_argument("--channels", type=int, default=1, help="1 or 2")


class _Stopped(Exception):
    """SIGTERM arrived while the capture waited for input."""


def cmd_capture(args: argparse.Namespace) -> int:
    leaf = LeafSelector.null() if args.leaf_null else LeafSelector.explicit(args.leaf)
    try:
        capture, _started = start_capture(args.path, args.recording, leaf=leaf, rate=args.rate,
                                          channels=args.channels)
    except ContractError as error:
        return report({"error": error.diagnostics[0].to_json()}, True, "")
    waiting = [False]

    def on_term(signum: int, frame: object) -> None:
        if waiting[0]:
            raise _Stopped

    previous = signal.signal(signal.SIGTERM, on_term)
    failed: dict[str, Any] | None = None
    try:
        while True:
            waiting[0] = True
            chunk = os.read(sys.stdin.fileno(), _READ_SIZE)
            waiting[0] = False
            if not chunk:
                break
            try:
                write_frames(capture, chunk)
            except ContractError as error:  # CAP-12: halt visibly, then finish as incomplete
                failed = {"error": error.diagnostics[0].to_json()}
                break
    except _Stopped:
        pass
    finally:
        waiting[0] = False
        signal.signal(signal.SIGTERM, previous)
    try:
        result = finish_capture(capture)
    except ContractError as error:
        return report({"error": error.diagnostics[0].to_json()}, True, "")
    if failed is not None:
        result = {**result, **failed}
    return report(result, True, "")


# --- recover-recording, asset, delete ----------------------------------------------------------


def args_recover_recording(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="the session directory")
    parser.add_argument("--recording", required=True, metavar="ID", help="the recording id")
    parser.add_argument("--json", action="store_true", help="print the JSON result")


def cmd_recover_recording(args: argparse.Namespace) -> int:
    result = op_recover_recording({"session": args.path, "recordingId": args.recording})
    summary = f"{result.get('action')}: {result.get('frames')} frame(s) kept"
    return report(result, args.json, summary)


def args_asset(parser: argparse.ArgumentParser) -> None:
    # Two subcommands, so that `asset verify --help` shows verify's options and `asset write
    # --help` write's (one parser listing both hid which option belongs to which).
    actions = parser.add_subparsers(dest="action", required=True, metavar="verify|write")
    verify = actions.add_parser(
        "verify", help="check an asset's bytes (AST-9..AST-12)",
        description="Check an asset of the session: it exists under assets/ without a link, "
                    "and its bytes (or the byte range) have the SHA-256 given.")
    verify.add_argument("path", help="the session directory")
    verify.add_argument("--path", dest="asset", metavar="assets/NAME", required=True,
                        help="the asset")
    verify.add_argument("--sha256", help="the expected SHA-256 (64 lower-case hex)")
    verify.add_argument("--range", metavar="START:END", help="bytes START..END-1 only")
    verify.add_argument("--json", action="store_true", help="print the JSON result")
    write = actions.add_parser(
        "write", help="write stdin as a protocol asset",
        description="Write stdin as assets/protocol-<uuid>.bin of the session, fsynced with "
                    "its directory before the answer (AST-18); prints the asset reference.")
    write.add_argument("path", help="the session directory")
    write.add_argument("--mime-type", default="application/octet-stream",
                       help="the asset's media type")
    write.add_argument("--json", action="store_true", help="print the JSON result")


def cmd_asset(args: argparse.Namespace) -> int:
    if args.action == "write":
        import base64

        data = base64.b64encode(sys.stdin.buffer.read()).decode("ascii")
        result = op_asset_write({"session": args.path, "data": data, "mimeType": args.mime_type})
        return report(result, args.json, result.get("asset", {}).get("path", ""))
    if args.asset is None:
        raise UsageError(Code.USAGE, "asset verify needs --path assets/NAME")
    op_args: dict[str, Any] = {"session": args.path, "path": args.asset}
    if args.sha256 is not None:
        op_args["sha256"] = args.sha256
    if args.range is not None:
        start, _, end = args.range.partition(":")
        if not (start.isdigit() and end.isdigit()):
            raise UsageError(Code.USAGE, "--range must be START:END (decimal byte offsets)")
        op_args["byteRange"] = {"start": int(start), "end": int(end)}
    result = op_asset_verify(op_args)
    return report(result, args.json, f"{result.get('size')} bytes, sha256 {result.get('sha256')}")


def args_delete(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="the session directory (never a symbolic link)")
    parser.add_argument("--confirm", action="store_true", help="required: really delete")
    parser.add_argument("--json", action="store_true", help="print the JSON result")


def cmd_delete(args: argparse.Namespace) -> int:
    result = op_delete_session({"session": args.path, "confirm": bool(args.confirm)})
    return report(result, args.json, str(result.get("action")))
