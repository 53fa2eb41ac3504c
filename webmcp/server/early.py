"""A client's first requests answered while the bridge is still starting (issue 40 item 4).

Until the `mcp` SDK is imported (its ~390 wire models: half a second or more) and the browser
is up, a client over stdio would wait for its `initialize`. From the moment the command line is
read, `EarlyAnswers` reads stdin in a thread of its own and answers what needs neither:
* a handshake client's `initialize`, `ping`, the first `tools/list`, which holds the app-level
  tools (no window exists yet), `resources/list`, `resources/templates/list` and
  `resources/subscribe`;
* a 2026-07-28 client's `server/discover`, its `subscriptions/listen` (the acknowledgement, the
  stream's first frame; the SDK's session then holds the stream), and the lists above, but only
  those a stream acknowledged here will tell it of when they change: a client that lists before
  it listens could learn of the start tab's tools only by listing again, so its list waits for
  the SDK, with them in it.
The answers are the SDK's own, recorded per protocol version in `early_answers.json`
(`python -m webmcp.server.early --write` makes it; a test checks it against the SDK). The first
message it cannot answer (a resource read, a call, params it does not expect) ends its part:
that message and every later one wait for the SDK, as they always did.

This module imports only the standard library: it runs before the rest of the bridge is loaded.

When MCP is served, `stop()` hands over (`Handover`): every byte read, answered or not, goes to
the SDK's session first, in order, so that the session is initialized as the client was told;
the SDK's answers to the requests already answered are not sent again, nor its acknowledgement of
a stream acknowledged here. Where the SDK's list differs from the early one (the start tabs' tools
have joined), its `list_changed` notification goes out in its place (for a 2026-07-28 client, on
its stream): the client lists again.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import select
import signal
import stat
import sys
import threading
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

__all__ = ["ACKNOWLEDGED", "EarlyAnswers", "Handover", "compute_answers", "is_pipe", "recorded_answers"]

logger = logging.getLogger(__name__)

_DATA = "early_answers.json"
_READ_CHUNK = 1 << 16
_READ_LIMIT = 1 << 20
"""Bytes read at most: past them (a line that long, a flood) the rest waits in the pipe for the SDK."""
_ANSWERED_LIMIT = 64
"""Requests answered at most (a client's start needs a handful)."""
_CHANGED = {
    "tools/list": "notifications/tools/list_changed",
    "resources/list": "notifications/resources/list_changed",
    "resources/templates/list": "notifications/resources/list_changed",
}
"""The lists answered early (as the server answers them with no window yet), and what tells a
client that the server's list is another now."""
_LISTS = tuple(_CHANGED)
_FLAG = {"tools/list": "toolsListChanged", "resources/list": "resourcesListChanged"}
_FLAG["resources/templates/list"] = _FLAG["resources/list"]
"""Which flag of a 2026-07-28 stream's filter asks for the notification `_CHANGED` names."""
_MODERN_LISTS = ("server/discover", *_LISTS)
"""What is recorded per 2026-07-28 version."""
_KEY = "io.modelcontextprotocol/"
_VERSION, _CLIENT_INFO, _CAPABILITIES = (_KEY + k for k in ("protocolVersion", "clientInfo", "clientCapabilities"))
_SUBSCRIPTION = _KEY + "subscriptionId"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
_FILTER_FLAGS = ("toolsListChanged", "promptsListChanged", "resourcesListChanged")


@dataclass
class Handover:
    """What the early answers leave to the SDK's session: the bytes read and the requests answered."""

    pending: bytes = b""
    """Every byte read from stdin, in order: the answered requests' too (the session replays them)."""
    eof: bool = False
    """The client closed stdin meanwhile."""
    answered: dict[Any, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    """By request id, the method and the result the client was sent."""
    streams: dict[Any, dict[str, Any]] = field(default_factory=dict)
    """By `subscriptions/listen` request id, the filter acknowledged (2026-07-28 clients)."""
    acked: set[Any] = field(default_factory=set)
    """The streams whose acknowledgement by the SDK's session is not to be sent again."""
    modern: bool = False
    """The client spoke 2026-07-28: a change is told on a stream that asked for it, or not at all."""
    told: set[str] = field(default_factory=set)
    """The `list_changed` notifications sent in place of an answer: one tells every earlier list."""

    def in_place_of(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        """What to send instead of the SDK's `message` (a JSON-RPC message as on the wire): the message
        itself, nothing (the client has it already), or `list_changed` notifications."""
        if "method" in message:
            if message["method"] == ACKNOWLEDGED and self.acked:
                stream = ((message.get("params") or {}).get("_meta") or {}).get(_SUBSCRIPTION)
                if stream in self.acked:
                    self.acked.discard(stream)
                    return []
            return [message]
        if message.get("id") not in self.answered:
            return [message]
        method, sent = self.answered.pop(message["id"])
        result = message.get("result")
        if method in _CHANGED and result is not None and result != sent:
            if _CHANGED[method] in self.told:
                return []  # a client that listed again and again is told once
            self.told.add(_CHANGED[method])
            if not self.modern:
                return [{"jsonrpc": "2.0", "method": _CHANGED[method]}]
            # A 2026-07-28 client hears it on each stream that asked for it (its list was answered
            # here only because one did), as the server tells every such stream.
            return [
                {"jsonrpc": "2.0", "method": _CHANGED[method], "params": {"_meta": {_SUBSCRIPTION: stream}}}
                for stream, wanted in self.streams.items()
                if wanted.get(_FLAG[method])
            ]
        if result != sent:
            # The recorded answers no longer match the SDK (the test that checks them was not run).
            logger.warning("the early answer to %s differs from the server's; the client has the early one", method)
        return []


class EarlyAnswers:
    """Reads stdin from a thread and answers a handshake client's first requests (see the module)."""

    def __init__(self, answers: dict[str, Any], stdin_fd: int = 0, stdout_fd: int = 1) -> None:
        self._answers = answers
        self._in, self._out = stdin_fd, stdout_fd
        self._wake_r, self._wake_w = os.pipe()
        self._read = bytearray()
        self._scanned = 0
        self._handover = Handover()
        self._version: str | None = None
        self._initialized = False
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="webmcp-early-answers", daemon=True)

    @classmethod
    def start(cls, stdin_fd: int = 0, stdout_fd: int = 1) -> EarlyAnswers | None:
        """Start answering, when stdin and stdout are pipes (as under every MCP client); else None."""
        if not (is_pipe(stdin_fd) and is_pipe(stdout_fd)):
            return None
        try:
            answers = recorded_answers()
        except (OSError, ValueError):  # an install without the data: the SDK answers everything
            logger.warning("the early answers could not be read; the MCP server answers once it is up")
            return None
        early = cls(answers, stdin_fd, stdout_fd)
        # Made with the stop signals blocked, which it keeps: a signal is the main thread's to take
        # (webmcp.cli holds them until the bridge's own handling is on; taken here, SIGTERM's default
        # action would end the process at once, its browser left running).
        held = signal.pthread_sigmask(signal.SIG_BLOCK, (signal.SIGTERM, signal.SIGINT, signal.SIGHUP))
        try:
            early._thread.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        return early

    def stop(self, timeout: float = 10.0) -> Handover:
        """Stop answering and hand over what was read (see `Handover`).

        Raises:
            TimeoutError: the thread is still writing an answer after `timeout` s (the client
                does not read its stdout).
        """
        if self._stopped:
            return self._handover
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise TimeoutError("the MCP client does not read the server's answers")
        self._stopped = True
        for fd in (self._wake_r, self._wake_w):
            os.close(fd)
        self._handover.pending = bytes(self._read)
        return self._handover

    # --- the thread ---------------------------------------------------------------------

    def _run(self) -> None:
        try:
            while True:
                ready, _, _ = select.select([self._in, self._wake_r], [], [])
                if self._wake_r in ready:
                    return
                chunk = os.read(self._in, _READ_CHUNK)
                if not chunk:
                    self._handover.eof = True
                    return
                self._read += chunk
                if not self._answer_lines():
                    return
        except OSError:  # stdin or stdout failed: whatever comes next is the SDK's to meet
            logger.debug("early answers ended by an I/O error", exc_info=True)

    def _answer_lines(self) -> bool:
        """Answer each complete line read; False at the first that is not answered here."""
        while True:
            end = self._read.find(b"\n", self._scanned)
            if end < 0:
                return len(self._read) <= _READ_LIMIT
            line = bytes(self._read[self._scanned : end])
            if line.strip():
                answer = self._answer(line)
                if answer is None:
                    return False
                if answer:
                    self._write(answer)
            self._scanned = end + 1

    def _answer(self, line: bytes) -> bytes | None:
        """The bytes to write for one message (b"" for a notification that needs none), or None."""
        try:
            message = json.loads(line)
        except ValueError:
            return None
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return None
        method, params, request_id = message.get("method"), message.get("params"), message.get("id")
        if "id" not in message:
            if method == "notifications/initialized" and self._version is not None and not self._initialized:
                self._initialized = True
                return b""
            if method == "notifications/cancelled" and isinstance(params, dict):
                # A stream the client ends hears nothing more; the SDK, replaying it, ends it too.
                ended = params.get("requestId")
                if isinstance(ended, int | str):
                    self._handover.streams.pop(ended, None)
            return None
        if isinstance(request_id, bool) or not isinstance(request_id, int | str):
            return None
        known = self._handover.answered.keys() | self._handover.streams.keys()
        if request_id in known or len(known) >= _ANSWERED_LIMIT:
            return None
        if isinstance(params, dict) and isinstance(params.get("_meta"), dict) and _VERSION in params["_meta"]:
            return self._answer_modern(request_id, str(method), params)
        result: dict[str, Any] | None = None
        if self._handover.modern:
            pass  # a handshake request on a 2026-07-28 connection: the SDK's to refuse
        elif method == "initialize" and self._version is None:
            self._version = self._negotiated(params)
            result = self._answers["by_version"][self._version]["initialize"] if self._version else None
        elif method == "ping" and self._version is not None and not params:
            result = {}
        elif method in _LISTS and self._initialized and not params:
            result = self._answers["by_version"][self._version][method]
        elif method == "resources/subscribe" and self._initialized and _only_a_uri(params):
            result = {}  # the session replays it, and so holds the subscription
        if result is None:
            return None
        self._handover.answered[request_id] = (str(method), result)
        reply = {"jsonrpc": "2.0", "id": request_id, "result": result}
        return (json.dumps(reply, ensure_ascii=False, separators=(",", ":")) + "\n").encode()

    def _answer_modern(self, request_id: Any, method: str, params: dict[str, Any]) -> bytes | None:
        """The answer to a 2026-07-28 request (see the module), or None: the SDK's to answer."""
        version = _modern_version(params["_meta"], self._answers.get("modern", {}))
        if version is None or self._version is not None:
            return None
        recorded: dict[str, Any] = self._answers["modern"][version]
        extra = set(params) - {"_meta"}
        frame: dict[str, Any]
        if method == "subscriptions/listen" and extra == {"notifications"}:
            honored = _honored(params["notifications"])
            if honored is None:
                return None
            self._handover.streams[request_id] = honored
            self._handover.acked.add(request_id)
            # The stream's first frame; the session the SDK replays it to holds the stream.
            notice = {"_meta": {_SUBSCRIPTION: request_id}, "notifications": honored}
            frame = {"jsonrpc": "2.0", "method": ACKNOWLEDGED, "params": notice}
        elif method not in _MODERN_LISTS or extra:
            return None
        elif method != "server/discover" and not any(s.get(_FLAG[method]) for s in self._handover.streams.values()):
            return None  # the client would not hear that the list grew: the SDK answers it, complete
        else:
            self._handover.answered[request_id] = (method, recorded[method])
            frame = {"jsonrpc": "2.0", "id": request_id, "result": recorded[method]}
        self._handover.modern = True
        return (json.dumps(frame, ensure_ascii=False, separators=(",", ":")) + "\n").encode()

    def _negotiated(self, params: Any) -> str | None:
        """The protocol version the SDK would answer `initialize` with; None for params it may refuse."""
        if not isinstance(params, dict) or not set(params) <= {"protocolVersion", "capabilities", "clientInfo"}:
            return None
        requested, capabilities, client = (
            params.get("protocolVersion"),
            params.get("capabilities"),
            params.get("clientInfo"),
        )
        if not isinstance(requested, str) or not isinstance(capabilities, dict) or not isinstance(client, dict):
            return None
        if not isinstance(client.get("name"), str) or not isinstance(client.get("version"), str):
            return None
        by_version: dict[str, Any] = self._answers["by_version"]
        return requested if requested in by_version else str(self._answers["latest"])

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._out, view) :]


def _modern_version(meta: Any, recorded: dict[str, Any]) -> str | None:
    """The 2026-07-28 version of a request's `_meta` if the SDK would take it as it is, else None."""
    if not isinstance(meta, dict) or not set(meta) <= {_VERSION, _CLIENT_INFO, _CAPABILITIES}:
        return None
    version, info, capabilities = meta.get(_VERSION), meta.get(_CLIENT_INFO), meta.get(_CAPABILITIES)
    if not isinstance(capabilities, dict) or not isinstance(version, str):
        return None
    if info is not None and not (
        isinstance(info, dict) and isinstance(info.get("name"), str) and isinstance(info.get("version"), str)
    ):
        return None
    return version if version in recorded else None


def _honored(wanted: Any) -> dict[str, Any] | None:
    """The filter the SDK acknowledges for `wanted` (every kind asked for; nothing false or empty echoed),
    or None where it could refuse it."""
    if not isinstance(wanted, dict) or not set(wanted) <= {*_FILTER_FLAGS, "resourceSubscriptions"}:
        return None
    honored: dict[str, Any] = {}
    for flag in _FILTER_FLAGS:
        value = wanted.get(flag)
        if value is not None and not isinstance(value, bool):
            return None
        if value:
            honored[flag] = True
    uris = wanted.get("resourceSubscriptions")
    if uris is not None:
        if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
            return None
        if uris:
            honored["resourceSubscriptions"] = uris
    return honored


def _only_a_uri(params: Any) -> bool:
    return isinstance(params, dict) and set(params) == {"uri"} and isinstance(params["uri"], str)


def is_pipe(fd: int) -> bool:
    """True when `fd` is a pipe or a socket: a descriptor the event loop can wait on."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


# --- recording the SDK's answers ------------------------------------------------------------


class _NoWindows:
    """A desktop before the browser is up: no window, no secret."""

    def window_states(self) -> list[Any]:
        return []

    def window(self, window_id: str) -> None:
        return None

    def known_secrets(self) -> frozenset[str]:
        return frozenset()

    def on_change(self, listener: Any) -> None:
        pass


async def compute_answers() -> dict[str, Any]:
    """The SDK's answers to `initialize` and the first lists (`_LISTS`), per handshake protocol version,
    and to `server/discover` and the lists, per 2026-07-28 version, from the server `webmcp.serve`
    builds, with no window yet (what `early_answers.json` holds)."""
    import anyio  # noqa: PLC0415 - the SDK and the server, only to record their answers
    import mcp_types as types  # noqa: PLC0415
    from mcp.shared.message import SessionMessage  # noqa: PLC0415
    from mcp_types.version import (  # noqa: PLC0415
        HANDSHAKE_PROTOCOL_VERSIONS,
        LATEST_HANDSHAKE_VERSION,
        MODERN_PROTOCOL_VERSIONS,
    )

    from webmcp.server.app import build_server  # noqa: PLC0415
    from webmcp.server.transport import Broadcaster, initialization_options  # noqa: PLC0415
    from webmcp.uicontext.provider import UIContext, declare  # noqa: PLC0415

    async def answers_for(version: str, modern: bool) -> dict[str, Any]:
        desktop: Any = _NoWindows()
        server = build_server(desktop, Broadcaster(), extra_resources=UIContext(desktop))
        options = initialization_options(server, declare(server))
        to_server, server_reads = anyio.create_memory_object_stream[Any](8)
        server_writes, from_server = anyio.create_memory_object_stream[Any](8)
        envelope = {"_meta": {_VERSION: version, _CLIENT_INFO: {"name": "c", "version": "1"}, _CAPABILITIES: {}}}

        async def ask(request_id: int, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
            request = types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method, params=params)
            await to_server.send(SessionMessage(request))
            reply = await from_server.receive()
            wire: dict[str, Any] = json.loads(reply.message.model_dump_json(by_alias=True, exclude_unset=True))
            return dict(wire["result"])

        async with to_server, server_reads, server_writes, from_server, anyio.create_task_group() as tg:
            tg.start_soon(server.run, server_reads, server_writes, options)
            with anyio.fail_after(10):
                answers: dict[str, Any] = {}
                if modern:
                    for request_id, method in enumerate(_MODERN_LISTS, start=1):
                        answers[method] = await ask(request_id, method, envelope)
                else:
                    hello = {
                        "protocolVersion": version,
                        "capabilities": {},
                        "clientInfo": {"name": "c", "version": "1"},
                    }
                    answers["initialize"] = await ask(1, "initialize", hello)
                    notification = types.JSONRPCNotification(jsonrpc="2.0", method="notifications/initialized")
                    await to_server.send(SessionMessage(notification))
                    for request_id, method in enumerate(_LISTS, start=2):
                        answers[method] = await ask(request_id, method, None)
            await to_server.aclose()
        return answers

    by_version = {version: await answers_for(version, False) for version in HANDSHAKE_PROTOCOL_VERSIONS}
    modern = {version: await answers_for(version, True) for version in MODERN_PROTOCOL_VERSIONS}
    return {"latest": LATEST_HANDSHAKE_VERSION, "by_version": by_version, "modern": modern}


def recorded_answers() -> dict[str, Any]:
    """The answers `early_answers.json` holds (see `compute_answers`).

    Raises:
        OSError, ValueError: the file is missing or not JSON.
    """
    answers: dict[str, Any] = json.loads(resources.files(__package__).joinpath(_DATA).read_text(encoding="utf-8"))
    return answers


def data_path() -> str:
    return str(resources.files(__package__).joinpath(_DATA))


def main() -> int:
    """`python -m webmcp.server.early --write` records the SDK's answers; without it, checks them."""
    import anyio  # noqa: PLC0415

    import webmcp.server  # noqa: F401, PLC0415 - the SDK's pieces without its package __init__s

    answers = anyio.run(compute_answers)
    text = json.dumps(answers, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
    if sys.argv[1:] == ["--write"]:
        with open(data_path(), "w", encoding="utf-8") as out:
            out.write(text)
        return 0
    with open(data_path(), encoding="utf-8") as recorded:
        if json.load(recorded) == answers:
            return 0
    print(f"{data_path()} is not what the server answers: run python -m webmcp.server.early --write", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
