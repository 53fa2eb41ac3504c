"""The event-loop stdio streams: framing, big messages, end of input, cancellation, fallbacks.

`MessageReader` / `MessageWriter` are what the server runs on when stdin and stdout are pipes;
`PipeStdin` / `PipeStdout` feed the SDK's own transport when only one of them is.

In-process over real pipes (`os.pipe`); the whole transport over a real stdio child, in
both protocol generations, is in test_transport.py.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator

import anyio
import anyio.lowlevel
import mcp_types as types
import pytest
from mcp.shared.message import SessionMessage

from webmcp.server.early import Handover
from webmcp.server.stdin import DaemonStdin
from webmcp.server.stdio import _HIGH_WATER, MessageReader, MessageWriter, PipeStdin, PipeStdout, is_pipe, stdio_streams


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    os.set_blocking(write_end, False)
    yield read_end, write_end
    for fd in (read_end, write_end):
        try:
            os.close(fd)
        except OSError:
            pass


async def _lines(fd: int) -> list[str]:
    return [line async for line in PipeStdin(fd)]


async def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            await anyio.wait_writable(fd)


async def _read_all(fd: int) -> bytes:
    chunks = bytearray()
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            await anyio.wait_readable(fd)
            continue
        if not chunk:
            return bytes(chunks)
        chunks += chunk


@pytest.mark.anyio
async def test_lines_are_split_whatever_the_reads_carry(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    lines: list[str] = []

    async def read() -> None:
        lines.extend(await _lines(read_end))

    async with anyio.create_task_group() as tg:
        tg.start_soon(read)
        await _write_all(write_end, b'{"a":1}\n{"b":2}\n{"c":')  # two whole lines and the start of a third
        await anyio.wait_all_tasks_blocked()  # the reader has taken the first part
        await _write_all(write_end, b"3}\n")
        await _write_all(write_end, b'{"last":true}')  # no newline before the end of input
        os.close(write_end)
    assert lines == ['{"a":1}\n', '{"b":2}\n', '{"c":3}\n', '{"last":true}']


@pytest.mark.anyio
async def test_bytes_that_are_not_utf8_are_replaced(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    await _write_all(write_end, b"\xff\xfe{}\n")
    os.close(write_end)
    assert await _lines(read_end) == ["\ufffd\ufffd{}\n"]


@pytest.mark.anyio
async def test_megabyte_messages_cross_both_ways_while_the_other_side_reads_slowly(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    message = '{"text":"' + "é" * (3 << 20) + '"}\n'  # far more than a pipe holds
    received: list[bytes] = []

    async def drain() -> None:
        received.append(await _read_all(read_end))

    out = PipeStdout(write_end)
    async with anyio.create_task_group() as tg:
        tg.start_soon(drain)
        await out.write(message)
        await out.write(message)
        await out.flush()  # waits for the reader as the pipe fills
        os.close(write_end)
    assert received[0] == (message * 2).encode()

    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    os.set_blocking(write_end, False)
    lines: list[str] = []

    async def read() -> None:
        lines.extend(await _lines(read_end))

    async with anyio.create_task_group() as tg:
        tg.start_soon(read)
        await _write_all(write_end, (message * 2).encode())
        os.close(write_end)
    os.close(read_end)
    assert lines == [message, message]


@pytest.mark.anyio
async def test_a_read_waiting_for_input_ends_when_cancelled(pipe: tuple[int, int]) -> None:
    read_end, _write_end = pipe
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_lines, read_end)
            await anyio.wait_all_tasks_blocked()
            scope.cancel()
    assert scope.cancelled_caught


@pytest.mark.anyio
async def test_a_client_that_closed_its_end_fails_the_flush(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    os.close(read_end)
    out = PipeStdout(write_end)
    await out.write("{}\n")
    with pytest.raises(BrokenPipeError):
        await out.flush()


def test_pipes_are_read_on_the_loop_and_restored_to_blocking_after() -> None:
    read_end, write_end = os.pipe()
    try:
        assert is_pipe(read_end)
        with stdio_streams(read_end) as (stdin, _stdout):
            assert isinstance(stdin, PipeStdin)
            assert not os.get_blocking(read_end)
        assert os.get_blocking(read_end)
    finally:
        os.close(read_end)
        os.close(write_end)


def test_anything_but_a_pipe_is_read_as_before() -> None:
    fd = os.open(os.devnull, os.O_RDONLY)
    try:
        assert not is_pipe(fd)
        with stdio_streams(fd) as (stdin, _stdout):
            assert isinstance(stdin, DaemonStdin)
        assert os.get_blocking(fd)
    finally:
        os.close(fd)


def _ping(request_id: int, pad: str = "") -> SessionMessage:
    params = {"_meta": {"pad": pad}} if pad else None
    return SessionMessage(types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method="ping", params=params))


async def _messages(fd: int) -> list[SessionMessage | Exception]:
    return [m async for m in MessageReader(PipeStdin(fd))]


@pytest.mark.anyio
async def test_the_reader_parses_each_line_as_it_is_received_and_ends_at_end_of_input(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    received: list[SessionMessage | Exception] = []

    async def read() -> None:
        received.extend(await _messages(read_end))

    async with anyio.create_task_group() as tg:
        tg.start_soon(read)
        await _write_all(write_end, b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"jsonrpc":"2.0","id":2,')
        await anyio.wait_all_tasks_blocked()  # the reader has the first line and waits for the rest of the second
        await _write_all(write_end, b'"method":"tools/list"}\nnot json\n')
        await _write_all(write_end, b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        os.close(write_end)  # the last line has no newline
    messages = [m.message for m in received if isinstance(m, SessionMessage)]
    assert [getattr(m, "method", None) for m in messages] == ["ping", "tools/list", "notifications/initialized"]
    assert [getattr(m, "id", None) for m in messages[:2]] == [1, 2]
    assert isinstance(received[2], Exception), "a line that is no message reaches the server as its parse error"
    assert len(received) == 4


@pytest.mark.anyio
async def test_a_closed_reader_refuses_to_read(pipe: tuple[int, int]) -> None:
    read_end, _write_end = pipe
    reader = MessageReader(PipeStdin(read_end))
    async with reader:
        pass
    with pytest.raises(anyio.ClosedResourceError):
        await reader.receive()


@pytest.mark.anyio
async def test_messages_sent_side_by_side_reach_the_wire_whole_and_in_order_while_the_client_reads_slowly(
    pipe: tuple[int, int],
) -> None:
    read_end, write_end = pipe
    writer = MessageWriter(write_end)
    pad = "é" * (1 << 19)  # each message is far more than a pipe holds
    received: list[bytes] = []

    async def drain() -> None:
        received.append(await _read_all(read_end))

    async with anyio.create_task_group() as outer:
        outer.start_soon(drain)
        async with anyio.create_task_group() as tg:
            for i in range(4):
                tg.start_soon(writer.send, _ping(i, pad))
        os.close(write_end)
    lines = received[0].decode().splitlines()
    assert len(lines) == 4
    parsed = [types.jsonrpc_message_adapter.validate_json(line) for line in lines]
    assert sorted(m.id for m in parsed) == [0, 1, 2, 3]  # type: ignore[union-attr]
    assert all(m.params == {"_meta": {"pad": pad}} for m in parsed)  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_an_answer_cut_short_by_cancellation_is_finished_before_the_next_message(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    writer = MessageWriter(write_end)
    big = _ping(1, "x" * (1 << 20))
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(writer.send, big)
            await anyio.wait_all_tasks_blocked()  # the pipe is full: part of the line is out
            scope.cancel()
    assert scope.cancelled_caught
    received: list[bytes] = []

    async def drain() -> None:
        received.append(await _read_all(read_end))

    async with anyio.create_task_group() as tg:
        tg.start_soon(drain)
        await writer.send(_ping(2))
        os.close(write_end)
    lines = received[0].decode().splitlines()
    assert [types.jsonrpc_message_adapter.validate_json(line).id for line in lines] == [1, 2]  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_a_client_that_closed_its_end_breaks_the_writer(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    os.close(read_end)
    writer = MessageWriter(write_end)
    with pytest.raises(anyio.BrokenResourceError):
        await writer.send(_ping(1))
    with pytest.raises(anyio.ClosedResourceError):
        await writer.send(_ping(2))


def _watched(fd: int) -> bool:
    """Whether the running loop has a reader registered for `fd`."""
    loop = asyncio.get_running_loop()
    selector = loop._selector  # type: ignore[attr-defined]
    try:
        key = selector.get_key(fd)
    except KeyError:
        return False
    return key.data[0] is not None  # (reader, writer) handles


@pytest.mark.anyio
async def test_between_requests_the_pipe_stays_watched_and_a_cancelled_wait_ends_the_watch(
    pipe: tuple[int, int],
) -> None:
    read_end, write_end = pipe
    stdin = PipeStdin(read_end)
    await _write_all(write_end, b'{"a":1}\n')
    assert await stdin.readline() == '{"a":1}\n'
    assert _watched(read_end), "the next request is read by the loop's callback, without registering again"
    await _write_all(write_end, b'{"b":2}\n')
    assert await stdin.readline() == '{"b":2}\n'
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(stdin.readline)
            await anyio.wait_all_tasks_blocked()
            scope.cancel()
    assert not _watched(read_end), "nobody reads on: the pipe is left alone"


@pytest.mark.anyio
async def test_a_client_writing_faster_than_the_server_reads_fills_the_pipe_not_the_bridge(
    pipe: tuple[int, int],
) -> None:
    read_end, write_end = pipe
    stdin = PipeStdin(read_end)
    line = b'{"pad":"' + b"x" * 1000 + b'"}\n'
    await _write_all(write_end, line)
    assert await stdin.readline() == line.decode()  # the pipe is now watched; nobody waits for a line
    written = 0
    for _ in range(10_000):  # the client writes on while the pipe takes anything
        try:
            written += os.write(write_end, line)
            continue
        except BlockingIOError:
            pass
        if not _watched(read_end):
            break
        for _ in range(3):  # turns of the loop: its reader callback empties the pipe while it watches
            await anyio.lowlevel.checkpoint()
    assert not _watched(read_end), "the bridge stopped reading what nobody asked for"
    assert written < 2 * _HIGH_WATER, "the client was held back by a full pipe"
    lines = 0
    while lines * len(line) < written:
        assert await stdin.readline() == line.decode()
        lines += 1
    stdin.close()


@pytest.mark.anyio
async def test_a_closed_message_reader_leaves_the_pipe_alone(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    reader = MessageReader(PipeStdin(read_end))
    await _write_all(write_end, b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    assert isinstance(await reader.receive(), SessionMessage)
    assert _watched(read_end)
    await reader.aclose()
    assert not _watched(read_end)


def _answer(request_id: int, result: dict[str, object]) -> SessionMessage:
    return SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result))


@pytest.mark.anyio
async def test_what_was_answered_early_is_not_written_again_and_a_changed_list_is_told(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    early = Handover(answered={0: ("initialize", {"protocolVersion": "2025-11-25"}), 1: ("tools/list", {"tools": []})})
    writer = MessageWriter(write_end, early)
    await writer.send(_answer(0, {"protocolVersion": "2025-11-25"}))
    await writer.send(_ping(0))  # the server's own request: its ids are not the client's
    await writer.send(_answer(1, {"tools": [{"name": "tab-1__focus"}]}))
    await writer.send(_answer(1, {"tools": [{"name": "tab-1__focus"}]}))  # a later request of the same id
    os.close(write_end)
    lines = [json.loads(line) for line in (await _read_all(read_end)).splitlines()]
    assert lines == [
        {"jsonrpc": "2.0", "id": 0, "method": "ping", "params": None},
        {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"},
        {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "tab-1__focus"}]}},
    ]
    assert early.answered == {}


@pytest.mark.anyio
async def test_the_bytes_read_early_are_read_first_and_an_end_met_then_ends_the_lines(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    os.close(write_end)
    lines = [line async for line in PipeStdin(read_end, b'{"a": 1}\n{"b"', ended=True)]
    assert lines == ['{"a": 1}\n', '{"b"']
