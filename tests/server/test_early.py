"""The early answers: a handshake client's first requests, answered over real pipes before the server is up."""

from __future__ import annotations

import json
import os
import select
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from webmcp.server.early import EarlyAnswers, Handover, compute_answers, recorded_answers

HELLO = {"capabilities": {}, "clientInfo": {"name": "client", "version": "1"}}
_ENVELOPE = {
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "client", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
}
"""What a 2026-07-28 request carries instead of a session (the `mcp` SDK's client sends this)."""
_STREAM = "io.modelcontextprotocol/subscriptionId"


def _message(request_id: int | str | None, method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if request_id is not None:
        message["id"] = request_id
    if params is not None:
        message["params"] = params
    return (json.dumps(message) + "\n").encode()


@dataclass
class Pipes:
    early: EarlyAnswers
    to_bridge: int
    from_bridge: int
    bridge_in: int

    def send(self, data: bytes) -> None:
        os.write(self.to_bridge, data)

    def answers(self, count: int, timeout: float = 5.0) -> list[dict[str, Any]]:
        """The next `count` lines the early answers wrote."""
        data = b""
        while data.count(b"\n") < count:
            ready, _, _ = select.select([self.from_bridge], [], [], timeout)
            assert ready, f"no answer within {timeout} s (had {data!r})"
            data += os.read(self.from_bridge, 1 << 16)
        return [json.loads(line) for line in data.splitlines()]

    def nothing_written(self, wait: float = 0.3) -> bool:
        ready, _, _ = select.select([self.from_bridge], [], [], wait)
        return not ready


def _rest(pipes: Pipes, size: int) -> bytes:
    """`size` bytes the early answers left unread in the bridge's stdin."""
    left = b""
    while len(left) < size:
        ready, _, _ = select.select([pipes.bridge_in], [], [], 10)
        assert ready, f"{len(left)} of {size} bytes"
        left += os.read(pipes.bridge_in, size - len(left))
    return left


@contextmanager
def _pipes() -> Iterator[Pipes]:
    bridge_in, to_bridge = os.pipe()
    from_bridge, bridge_out = os.pipe()
    early = EarlyAnswers.start(bridge_in, bridge_out)
    assert early is not None, "both ends are pipes"
    try:
        yield Pipes(early, to_bridge, from_bridge, bridge_in)
    finally:
        early.stop()
        for fd in (bridge_in, to_bridge, from_bridge, bridge_out):
            os.close(fd)


@pytest.mark.anyio
async def test_the_recorded_answers_are_what_the_server_answers() -> None:
    # If this fails, the server's initialize or app-level tools changed: python -m webmcp.server.early --write
    assert await compute_answers() == recorded_answers()


def test_initialize_ping_and_a_first_tools_list_are_answered_as_the_server_would() -> None:
    recorded = recorded_answers()["by_version"]["2025-06-18"]
    with _pipes() as pipes:
        pipes.send(_message(0, "initialize", {"protocolVersion": "2025-06-18", **HELLO}))
        (initialized,) = pipes.answers(1)
        assert initialized == {"jsonrpc": "2.0", "id": 0, "result": recorded["initialize"]}
        assert initialized["result"]["protocolVersion"] == "2025-06-18"
        pipes.send(_message(None, "notifications/initialized") + _message("a", "tools/list") + _message(2, "ping"))
        listed, pinged = pipes.answers(2)
        assert listed == {"jsonrpc": "2.0", "id": "a", "result": recorded["tools/list"]}
        assert [t["name"] for t in listed["result"]["tools"]] == ["app__open_tab"]
        assert pinged == {"jsonrpc": "2.0", "id": 2, "result": {}}
        pipes.send(
            _message(3, "resources/list")
            + _message(4, "resources/templates/list")
            + _message(5, "resources/subscribe", {"uri": "app://windows"})
        )
        resources, templates, subscribed = pipes.answers(3)
        assert resources["result"] == recorded["resources/list"]
        assert "app://windows" in [r["uri"] for r in resources["result"]["resources"]]
        assert templates["result"] == recorded["resources/templates/list"]
        assert subscribed == {"jsonrpc": "2.0", "id": 5, "result": {}}
        handover = pipes.early.stop()
    assert set(handover.answered) == {0, "a", 2, 3, 4, 5}
    # Every byte read goes on to the server's session, the answered requests too.
    assert handover.pending.count(b"\n") == 7 and handover.pending.startswith(
        b'{"jsonrpc": "2.0", "method": "initialize"'
    )
    assert handover.eof is False


def test_a_version_the_server_does_not_speak_gets_its_latest() -> None:
    recorded = recorded_answers()
    with _pipes() as pipes:
        pipes.send(_message(1, "initialize", {"protocolVersion": "2099-01-01", **HELLO}))
        (answer,) = pipes.answers(1)
    assert answer["result"] == recorded["by_version"][recorded["latest"]]["initialize"]


@pytest.mark.parametrize(
    "first",
    [
        # 2026-07-28 requests the SDK could refuse, or whose change no stream would tell.
        _message(1, "tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
        _message(
            1,
            "server/discover",
            {"_meta": {**_ENVELOPE["_meta"], "io.modelcontextprotocol/protocolVersion": "2099-01-01"}},
        ),
        _message(1, "server/discover", {"_meta": {**_ENVELOPE["_meta"], "io.modelcontextprotocol/other": 1}}),
        _message(1, "server/discover", {"_meta": {**_ENVELOPE["_meta"], "io.modelcontextprotocol/clientInfo": "c"}}),
        _message(1, "server/discover", {**_ENVELOPE, "cursor": "x"}),
        _message(1, "tools/list", _ENVELOPE),  # no stream would tell this client that the list grew
        _message(1, "subscriptions/listen", {**_ENVELOPE, "notifications": {"toolsListChanged": "yes"}}),
        _message(1, "subscriptions/listen", {**_ENVELOPE, "notifications": {"toolsListChanged": True, "x": True}}),
        _message(1, "subscriptions/listen", {**_ENVELOPE, "notifications": {"resourceSubscriptions": "app://windows"}}),
        _message(1, "subscriptions/listen", _ENVELOPE),  # no filter
        _message(1, "tools/call", {**_ENVELOPE, "name": "app__open_tab"}),
        _message(1, "server/discover", {"_meta": 5}),
        _message(1, "server/discover", {"_meta": ["io.modelcontextprotocol/protocolVersion"]}),
        _message(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}),  # no clientInfo
        _message(1, "initialize", {"protocolVersion": 20251125, **HELLO}),
        _message(1, "initialize", {"protocolVersion": "2025-11-25", "extra": True, **HELLO}),
        _message(None, "notifications/initialized"),  # before initialize
        _message(1, "resources/read", {"uri": "app://windows"}),
        b"not json\n",
        b'{"jsonrpc": "1.0", "id": 1, "method": "initialize"}\n',
        b"[1, 2]\n",
    ],
)
def test_what_it_cannot_answer_is_left_whole_to_the_server(first: bytes) -> None:
    with _pipes() as pipes:
        pipes.send(first + _message(9, "ping"))
        assert pipes.nothing_written()
        handover = pipes.early.stop()
    assert handover.answered == {}
    assert handover.pending == first + _message(9, "ping"), "every byte read is handed over, in order"


def test_a_tools_list_before_initialized_and_all_after_it_are_left_to_the_server() -> None:
    with _pipes() as pipes:
        pipes.send(_message(0, "initialize", {"protocolVersion": "2025-11-25", **HELLO}))
        pipes.answers(1)
        later = _message(1, "tools/list") + _message(None, "notifications/initialized") + _message(2, "ping")
        pipes.send(later)
        assert pipes.nothing_written()
        handover = pipes.early.stop()
    assert set(handover.answered) == {0}
    assert handover.pending.endswith(later)


def test_a_request_id_used_twice_is_not_answered_twice() -> None:
    with _pipes() as pipes:
        pipes.send(_message(0, "initialize", {"protocolVersion": "2025-11-25", **HELLO}))
        pipes.answers(1)
        pipes.send(_message(None, "notifications/initialized") + _message(0, "ping"))
        assert pipes.nothing_written()


def test_a_flood_of_pings_is_answered_only_so_far_and_the_rest_left_to_the_server() -> None:
    with _pipes() as pipes:
        pipes.send(_message(0, "initialize", {"protocolVersion": "2025-11-25", **HELLO}))
        pipes.answers(1)
        pings = b"".join(_message(n, "ping") for n in range(1, 200))
        pipes.send(pings)
        assert len(pipes.answers(63)) == 63
        assert pipes.nothing_written()
        handover = pipes.early.stop()
        # What it read is handed over, answered or not; what it did not read waits in the pipe.
        sent = _message(0, "initialize", {"protocolVersion": "2025-11-25", **HELLO}) + pings
        assert handover.pending + _rest(pipes, len(sent) - len(handover.pending)) == sent
    assert len(handover.answered) == 64


def test_a_line_without_end_is_read_only_so_far() -> None:
    endless = b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"x": "' + b"a" * (3 << 20)
    with _pipes() as pipes:
        writer = threading.Thread(target=pipes.send, args=(endless,))  # blocks while the pipe is full
        writer.start()
        pipes.early._thread.join(10)
        assert not pipes.early._thread.is_alive(), "it stops reading past its limit"
        handover = pipes.early.stop()
        assert (1 << 20) < len(handover.pending) < (2 << 20) and handover.answered == {}
        left = _rest(pipes, len(endless) - len(handover.pending))  # the rest waits in the pipe, for the server
        writer.join(10)
    assert handover.pending + left == endless


def test_a_line_half_read_and_the_end_of_input_are_handed_over() -> None:
    bridge_in, to_bridge = os.pipe()
    from_bridge, bridge_out = os.pipe()
    early = EarlyAnswers.start(bridge_in, bridge_out)
    assert early is not None
    try:
        half = _message(0, "initialize", {"protocolVersion": "2025-11-25", **HELLO})[:30]
        os.write(to_bridge, half)
        os.close(to_bridge)
        to_bridge = -1
        early._thread.join(5)  # it ends at the end of input
        assert not early._thread.is_alive()
        handover = early.stop()
    finally:
        for fd in (bridge_in, to_bridge, from_bridge, bridge_out):
            if fd >= 0:
                os.close(fd)
    assert handover.pending == half and handover.eof is True and handover.answered == {}


def test_stop_says_so_when_the_client_does_not_read_its_answers() -> None:
    bridge_in, to_bridge = os.pipe()
    from_bridge, bridge_out = os.pipe()
    os.set_blocking(bridge_out, False)
    try:
        while True:  # the client's end is full: the next answer cannot be written
            os.write(bridge_out, b"x" * 4096)
    except BlockingIOError:
        pass
    os.set_blocking(bridge_out, True)
    early = EarlyAnswers.start(bridge_in, bridge_out)
    assert early is not None
    try:
        os.write(to_bridge, _message(0, "initialize", {"protocolVersion": "2025-11-25", **HELLO}))
        deadline = time.monotonic() + 5
        while not early._read and time.monotonic() < deadline:  # read, and now blocked writing its answer
            time.sleep(0.01)
        with pytest.raises(TimeoutError, match="does not read"):
            early.stop(timeout=0.5)
    finally:
        os.close(from_bridge)  # the blocked write fails, and the thread ends
        early.stop(timeout=5)
        for fd in (bridge_in, to_bridge, bridge_out):
            os.close(fd)


def test_nothing_starts_where_stdin_or_stdout_is_not_a_pipe(tmp_path: Any) -> None:
    regular = os.open(tmp_path / "file", os.O_RDWR | os.O_CREAT)
    reader, writer = os.pipe()
    try:
        assert EarlyAnswers.start(regular, writer) is None
        assert EarlyAnswers.start(reader, regular) is None
    finally:
        for fd in (regular, reader, writer):
            os.close(fd)


def test_the_server_s_answers_to_what_was_answered_early_are_not_sent_again() -> None:
    tools = {"tools": [{"name": "app__open_tab"}]}
    handover = Handover(
        answered={0: ("initialize", {"protocolVersion": "x"}), 1: ("tools/list", tools), 2: ("ping", {})}
    )
    assert handover.in_place_of({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "x"}}) == []
    assert handover.in_place_of({"jsonrpc": "2.0", "id": 2, "result": {}}) == []
    # The start tabs joined since: the client is told to list again, in place of the list it did not get.
    joined = {"tools": [{"name": "app__open_tab"}, {"name": "tab-1__focus"}]}
    assert handover.in_place_of({"jsonrpc": "2.0", "id": 1, "result": joined}) == [
        {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    ]
    assert handover.answered == {}
    # Anything else goes as it is: a later request's answer, a notification.
    later = {"jsonrpc": "2.0", "id": 1, "result": joined}
    assert handover.in_place_of(later) == [later]
    note = {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "app://windows"}}
    assert Handover(answered={1: ("ping", {})}).in_place_of(note) == [note]


def test_a_resource_list_that_changed_since_is_told_with_its_own_notification() -> None:
    handover = Handover(answered={3: ("resources/list", {"resources": []})})
    assert handover.in_place_of({"jsonrpc": "2.0", "id": 3, "result": {"resources": [{"uri": "x"}]}}) == [
        {"jsonrpc": "2.0", "method": "notifications/resources/list_changed"}
    ]


def test_a_client_that_listed_again_and_again_is_told_once() -> None:
    tools = {"tools": [{"name": "app__open_tab"}]}
    handover = Handover(answered=dict.fromkeys(range(5), ("tools/list", tools)) | {9: ("resources/list", {})})
    joined = {"tools": [{"name": "app__open_tab"}, {"name": "tab-1__focus"}]}
    told = [handover.in_place_of({"jsonrpc": "2.0", "id": n, "result": joined}) for n in range(5)]
    assert told == [[{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}], [], [], [], []]
    # Another list is told with its own notification.
    assert handover.in_place_of({"jsonrpc": "2.0", "id": 9, "result": {"resources": [{"uri": "x"}]}}) == [
        {"jsonrpc": "2.0", "method": "notifications/resources/list_changed"}
    ]


def test_the_same_tool_list_needs_no_notification() -> None:
    tools = {"tools": [{"name": "app__open_tab"}]}
    handover = Handover(answered={1: ("tools/list", tools)})
    assert handover.in_place_of({"jsonrpc": "2.0", "id": 1, "result": dict(tools)}) == []


def test_the_thread_leaves_the_stop_signals_to_the_main_thread() -> None:
    before = signal.pthread_sigmask(signal.SIG_BLOCK, ())
    with _pipes() as pipes:
        thread_id = pipes.early._thread.native_id
        status = Path(f"/proc/self/task/{thread_id}/status").read_text()
        blocked = int(next(line for line in status.splitlines() if line.startswith("SigBlk:")).split()[1], 16)
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            assert blocked & (1 << (signum - 1)), signum
    assert signal.pthread_sigmask(signal.SIG_BLOCK, ()) == before, "the caller's own mask is as it was"


# --- 2026-07-28 clients -----------------------------------------------------------------------


def _listen(request_id: Any, **wanted: Any) -> bytes:
    return _message(request_id, "subscriptions/listen", {**_ENVELOPE, "notifications": wanted})


def test_a_2026_client_s_discover_stream_and_first_lists_are_answered_as_the_server_would() -> None:
    recorded = recorded_answers()["modern"]["2026-07-28"]
    with _pipes() as pipes:
        pipes.send(_message(1, "server/discover", _ENVELOPE))
        (discovered,) = pipes.answers(1)
        assert discovered == {"jsonrpc": "2.0", "id": 1, "result": recorded["server/discover"]}
        assert discovered["result"]["supportedVersions"] == ["2026-07-28"]
        pipes.send(
            _listen(
                "listen-1", toolsListChanged=True, promptsListChanged=False, resourceSubscriptions=["app://windows"]
            )
            + _message(2, "tools/list", _ENVELOPE)
        )
        acknowledged, listed = pipes.answers(2)
        # The stream's first frame: what it will be told, as the SDK acknowledges it (nothing false echoed).
        assert acknowledged == {
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {
                "_meta": {_STREAM: "listen-1"},
                "notifications": {"toolsListChanged": True, "resourceSubscriptions": ["app://windows"]},
            },
        }
        assert listed == {"jsonrpc": "2.0", "id": 2, "result": recorded["tools/list"]}
        assert [t["name"] for t in listed["result"]["tools"]] == ["app__open_tab"]
        # Its resource lists: no stream asked for their changes, so the server answers them.
        pipes.send(_message(3, "resources/list", _ENVELOPE))
        assert pipes.nothing_written()
        handover = pipes.early.stop()
    assert set(handover.answered) == {1, 2}
    assert handover.streams == {"listen-1": {"toolsListChanged": True, "resourceSubscriptions": ["app://windows"]}}
    assert handover.acked == {"listen-1"} and handover.modern
    assert handover.pending.count(b"\n") == 4, "the stream's request too goes on to the server, which holds it"


def test_a_2026_client_s_resource_lists_are_answered_when_a_stream_asks_for_their_changes() -> None:
    recorded = recorded_answers()["modern"]["2026-07-28"]
    with _pipes() as pipes:
        pipes.send(_listen(7, resourcesListChanged=True) + _message(8, "resources/templates/list", _ENVELOPE))
        _, templates = pipes.answers(2)
        assert templates["result"] == recorded["resources/templates/list"]
        pipes.send(_message(9, "tools/list", _ENVELOPE))  # that stream does not tell of the tools
        assert pipes.nothing_written()


def test_a_handshake_request_on_a_2026_connection_and_the_reverse_are_left_to_the_server() -> None:
    with _pipes() as pipes:
        pipes.send(_message(1, "server/discover", _ENVELOPE))
        pipes.answers(1)
        pipes.send(_message(2, "initialize", {"protocolVersion": "2025-11-25", **HELLO}))
        assert pipes.nothing_written()
    with _pipes() as pipes:
        pipes.send(_message(1, "initialize", {"protocolVersion": "2025-11-25", **HELLO}))
        pipes.answers(1)
        pipes.send(_message(2, "server/discover", _ENVELOPE))
        assert pipes.nothing_written()


def test_a_stream_the_client_ends_before_the_server_is_up_is_told_nothing() -> None:
    with _pipes() as pipes:
        pipes.send(_listen("s", toolsListChanged=True) + _message(2, "tools/list", _ENVELOPE))
        pipes.answers(2)
        pipes.send(_message(None, "notifications/cancelled", {"requestId": "s"}))
        assert pipes.nothing_written()
        handover = pipes.early.stop()
    assert handover.streams == {} and handover.acked == {"s"}
    joined = {"tools": [{"name": "app__open_tab"}, {"name": "tab-1__focus"}]}
    assert handover.in_place_of({"jsonrpc": "2.0", "id": 2, "result": joined}) == []


def test_a_cancellation_that_names_no_request_ends_nothing() -> None:
    with _pipes() as pipes:
        pipes.send(_listen("s", toolsListChanged=True))
        pipes.answers(1)
        pipes.send(_message(None, "notifications/cancelled", {"requestId": {"not": "an id"}}))
        assert pipes.nothing_written()
        handover = pipes.early.stop()
    assert handover.streams == {"s": {"toolsListChanged": True}}


def test_the_server_s_acknowledgement_of_a_stream_answered_early_is_not_sent_again() -> None:
    tools = {"tools": [{"name": "app__open_tab"}]}
    handover = Handover(
        answered={2: ("tools/list", tools)},
        streams={
            "listen-1": {"toolsListChanged": True},
            5: {"resourceSubscriptions": ["x"]},
            6: {"toolsListChanged": True},
        },
        acked={"listen-1", 5, 6},
        modern=True,
    )
    ack = {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {"_meta": {_STREAM: "listen-1"}, "notifications": {"toolsListChanged": True}},
    }
    assert handover.in_place_of(ack) == []
    assert handover.in_place_of(ack) == [ack], "only the one the client had already"
    other = {**ack, "params": {**ack["params"], "_meta": {_STREAM: "listen-2"}}}
    assert handover.in_place_of(other) == [other]
    # The start tabs joined since: the client hears it on each stream that asked, as the server tells it.
    joined = {"tools": [{"name": "app__open_tab"}, {"name": "tab-1__focus"}]}
    assert handover.in_place_of({"jsonrpc": "2.0", "id": 2, "result": joined}) == [
        {"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"_meta": {_STREAM: stream}}}
        for stream in ("listen-1", 6)
    ]
