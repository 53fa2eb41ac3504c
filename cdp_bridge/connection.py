"""One DevTools connection: command ids and their replies, flat sessions, event routing.

A `Connection` runs over one `Transport` (a websocket, Chromium's debugging pipe, or the
extension's relay; see transport.py) and owns one reader task. Every command registers its
pending reply before it is written and removes it on every path; when the reader stops,
every waiter fails at once with `ConnectionClosed`. Target sessions are multiplexed on
the same channel (`Target.setAutoAttach` / `attachToTarget` with `flatten: true`) and
routed by `sessionId`; events go to the handlers subscribed on their session.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import AsyncIterator, Callable, Container, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import pydantic_core

from .errors import CDPError, CommandTimeout, ConnectionClosed, ProtocolError, SessionClosed
from .timeouts import Timeouts
from .transport import Transport, WebSocketTransport, send_together

__all__ = ["CDPSession", "Connection", "EventHandler", "Reply"]

logger = logging.getLogger(__name__)

EventHandler = Callable[[dict[str, Any]], None]
"""A synchronous event callback; it must not block (hand work to a task instead)."""


def parse_message(text: str) -> Any:
    """A DevTools message's JSON as `json.loads` reads it.

    pydantic-core's parser takes 60–80% of `json.loads`'s time on Chromium's answers (an
    accessibility subtree, 50 KB: 330 against 430 µs; a whole tree, 300 KB: 2.2 against 3.0 ms),
    and every message of every call goes through here. What it refuses, `json.loads` reads: a
    lone surrogate, escaped (a page can put one in any string it hands the browser) or raw in
    `text` (no transport decodes one, but a caller may hand one in), nesting past its limit; so
    the value is the same, and what neither reads raises `json.loads`'s error.
    """
    try:
        return pydantic_core.from_json(text, cache_strings="keys")
    except (ValueError, TypeError):
        return json.loads(text)


@dataclass(slots=True)
class _Pending:
    method: str
    session_id: str | None
    done: anyio.Event = field(default_factory=anyio.Event)
    result: dict[str, Any] | None = None
    error: BaseException | None = None
    wakers: list[anyio.Event] = field(default_factory=list)
    """Set along with `done` (a waiter's one event that other things may set too)."""

    def settle(self, result: dict[str, Any] | None = None, error: BaseException | None = None) -> None:
        if self.done.is_set():
            return
        self.result, self.error = result, error
        self.done.set()
        for waker in self.wakers:
            waker.set()

    def outcome(self) -> dict[str, Any]:
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


class Reply:
    """The answer to come of a command already written whole (`CDPSession.send_now`).

    Its id stays registered until `wait` ends or `forget` is called: whoever stops waiting
    for it either forgets it or hands it on to someone who waits.
    """

    def __init__(self, connection: Connection, message_id: int, pending: _Pending) -> None:
        self._connection = connection
        self._id = message_id
        self._pending = pending

    @property
    def answered(self) -> bool:
        """The answer came (or the session or channel failed, which `result` raises)."""
        return self._pending.done.is_set()

    def wakes(self, event: anyio.Event) -> None:
        """Set `event` too when the answer comes (at once if it has)."""
        self._pending.wakers.append(event)
        if self.answered:
            event.set()

    def result(self) -> dict[str, Any]:
        """The answer, once `answered`; forgets the command.

        Raises:
            ProtocolError / ConnectionClosed / SessionClosed: as `CDPSession.send`.
        """
        assert self.answered, "result() before the answer"
        self.forget()
        return self._pending.outcome()

    async def wait(self, timeout: float) -> dict[str, Any]:
        """The answer, waited for at most `timeout` seconds; forgets the command either way.

        Raises:
            CommandTimeout: no answer in time; others as `CDPSession.send`.
        """
        try:
            with anyio.move_on_after(timeout):
                await self._pending.done.wait()
        finally:
            self.forget()
        if not self.answered:
            raise CommandTimeout(self._pending.method, timeout)
        return self._pending.outcome()

    def forget(self) -> None:
        """Stop waiting: an answer that comes later is dropped."""
        self._connection._pending.pop(self._id, None)


class CDPSession:
    """Commands and events of one target session (or of the browser, `session_id=None`)."""

    def __init__(self, connection: Connection, session_id: str | None, target_id: str | None = None) -> None:
        self.connection = connection
        self.session_id = session_id
        self.target_id = target_id
        self._handlers: dict[str, list[EventHandler]] = {}
        self.closed = False
        self._followers: list[tuple[str, Mapping[str, Any]]] = []
        """Commands written right after the next write on this session (`follow_next_write`)."""
        self._held: list[tuple[str, dict[str, Any]]] | None = None
        """Events kept while `hold_events` is on, in order; None: events go out as they come."""
        self._let_through: Container[str] = ()

    async def send(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        preceded_by: Sequence[tuple[str, Mapping[str, Any]]] = (),
    ) -> dict[str, Any]:
        """Send one command and wait for its answer.

        `preceded_by`: commands sent just before it on this session, in the same write where
        the channel allows, whose answers (errors included) nobody waits for: the browser
        handles a session's commands in order, so they have run when this one does.

        Raises:
            ProtocolError: the browser answered with an error.
            CommandTimeout: no answer within `timeout` (default `Timeouts.command`).
            ConnectionClosed / SessionClosed: the socket or this session went away.
        """
        if self.connection.closed.is_set():
            raise ConnectionClosed(f"{method}: {self.connection.close_reason}")
        if self.closed:
            raise SessionClosed(f"{method}: the target's session is closed")
        return await self.connection._send(method, params, self.session_id, timeout, preceded_by)

    async def send_all(
        self, commands: Sequence[tuple[str, Mapping[str, Any]]], *, timeout: float | None = None
    ) -> list[dict[str, Any] | CDPError]:
        """Send `commands` in order, in one write where the channel allows (the pipe; a websocket
        sends them one by one), and wait for all their answers.

        The browser runs a session's commands in the order they come, so each has run when the
        next one runs: reads side by side, or set-ups that only have to happen in order, cost one
        round trip, not one each (a write per command woke the browser's reader each time:
        ~0.3-1.5 ms of the bridge's time apiece on a busy 2-CPU VM). Returns, in the order of
        `commands`, each one's answer or the CDPError it failed with (as `batch.side_by_side` gives
        them: a refusal, a `CommandTimeout` past the one deadline for all, default
        `Timeouts.command`, or the connection closing while it waited).

        Raises:
            ConnectionClosed / SessionClosed: the socket or this session went away before the write.
        """
        if not commands:
            return []
        first = commands[0][0]
        if self.connection.closed.is_set():
            raise ConnectionClosed(f"{first}: {self.connection.close_reason}")
        if self.closed:
            raise SessionClosed(f"{first}: the target's session is closed")
        return await self.connection._send_all(commands, self.session_id, timeout)

    def send_now(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        preceded_by: Sequence[tuple[str, Mapping[str, Any]]] = (),
    ) -> Reply | None:
        """Write one command (and `preceded_by`, as for `send`) now, without yielding to the loop;
        its answer to come, or None when the channel cannot take it whole at once (nothing
        was written: `send` it instead).

        For a caller that must not be suspended between deciding to send and sending, nor
        cut off mid-write by its deadline: only the wait for the answer is left to it.

        Raises:
            ConnectionClosed / SessionClosed: the socket or this session went away.
        """
        if self.connection.closed.is_set():
            raise ConnectionClosed(f"{method}: {self.connection.close_reason}")
        if self.closed:
            raise SessionClosed(f"{method}: the target's session is closed")
        return self.connection._send_now(method, params, self.session_id, preceded_by)

    def follow_next_write(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Write `method` right after the next command(s) written on this session, in the same write.

        Nobody waits for its answer (an error in it is dropped). For what must reach the browser
        after a set-up that someone else writes, but must not wait for that set-up's answers.
        """
        self._followers.append((method, params or {}))

    def unfollow(self) -> bool:
        """Drop what `follow_next_write` queued that is not written yet: True if there was some."""
        dropped = bool(self._followers)
        self._followers = []
        return dropped

    def _take_followers(self) -> list[tuple[str, Mapping[str, Any]]]:
        followers, self._followers = self._followers, []
        return followers

    def hold_events(self, let_through: Container[str] = ()) -> None:
        """Keep this session's events, in order, instead of handing them to the handlers, until
        `release_events`; those named in `let_through` still go out as they come, as do the
        answers to commands."""
        if self._held is None:
            self._held = []
        self._let_through = let_through

    def release_events(self) -> None:
        """Hand the kept events to the handlers, in order; from now on each as it comes."""
        held, self._held = self._held, None
        for method, params in held or ():
            self._hand_out(method, params)

    def on(self, method: str, handler: EventHandler) -> Callable[[], None]:
        """Call `handler(params)` for each `method` event; returns the unsubscribe function."""
        self._handlers.setdefault(method, []).append(handler)

        def unsubscribe() -> None:
            handlers = self._handlers.get(method, [])
            if handler in handlers:
                handlers.remove(handler)

        return unsubscribe

    @asynccontextmanager
    async def expect(
        self, method: str, match: Callable[[dict[str, Any]], bool] = lambda _p: True
    ) -> AsyncIterator[_Expectation]:
        """Subscribe before acting: `async with s.expect(ev) as e: await s.send(...); await e.wait(t)`."""
        expectation = _Expectation(method, match)
        unsubscribe = self.on(method, expectation.feed)
        try:
            yield expectation
        finally:
            unsubscribe()

    def _dispatch(self, method: str, params: dict[str, Any]) -> None:
        if self._held is not None and method not in self._let_through:
            self._held.append((method, params))
            return
        self._hand_out(method, params)

    def _hand_out(self, method: str, params: dict[str, Any]) -> None:
        for handler in list(self._handlers.get(method, ())):
            try:
                handler(params)
            except Exception:  # boundary: one faulty subscriber must not kill the reader
                logger.exception("handler for %s failed", method)
        for handler in list(self._handlers.get("*", ())):
            try:
                handler({"method": method, "params": params})
            except Exception:  # boundary, as above
                logger.exception("catch-all handler failed on %s", method)


class _Expectation:
    def __init__(self, method: str, match: Callable[[dict[str, Any]], bool]) -> None:
        self.method = method
        self._match = match
        self._event = anyio.Event()
        self.params: dict[str, Any] | None = None

    def feed(self, params: dict[str, Any]) -> None:
        if self.params is None and self._match(params):
            self.params = params
            self._event.set()

    async def wait(self, timeout: float) -> dict[str, Any]:
        """The first matching event's params. Raises CommandTimeout after `timeout`."""
        with anyio.move_on_after(timeout):
            await self._event.wait()
        if self.params is None:
            raise CommandTimeout(self.method, timeout)
        return self.params


class Connection:
    """The channel to one browser, shared by every session on it."""

    # Ids are unique in the process, not just per connection: a connection opened after another
    # on the same pipe must never take a late answer meant for its predecessor as its own.
    _ids = itertools.count(1)

    def __init__(self, transport: Transport, timeouts: Timeouts) -> None:
        self._transport = transport
        self.timeouts = timeouts
        self._pending: dict[int, _Pending] = {}
        self._sessions: dict[str | None, CDPSession] = {}
        self.browser = CDPSession(self, None)
        self._sessions[None] = self.browser
        self.closed = anyio.Event()
        self.close_reason = "not connected"
        self._on_session_closed: list[Callable[[CDPSession], None]] = []

    @classmethod
    @asynccontextmanager
    async def connect(
        cls, ws_url: str, timeouts: Timeouts = Timeouts(), headers: Mapping[str, str] | None = None
    ) -> AsyncIterator[Connection]:
        """Open a DevTools websocket and run the reader until the block exits.

        Raises:
            ConnectionClosed: the endpoint could not be reached in time.
        """
        try:
            with anyio.fail_after(timeouts.launch):
                transport = await WebSocketTransport.open(ws_url, headers)
        except TimeoutError as exc:
            where = ws_url.partition("?")[0]  # a farm's query string may hold its token
            raise ConnectionClosed(f"Could not reach the browser's DevTools at {where}: timed out") from exc
        async with cls.open(transport, timeouts) as connection:
            yield connection

    @classmethod
    @asynccontextmanager
    async def open(
        cls, transport: Transport, timeouts: Timeouts = Timeouts(), *, close_transport: bool = True
    ) -> AsyncIterator[Connection]:
        """Run a connection over `transport` until the block exits.

        `close_transport=False` leaves the channel open for a later connection (a pipe that
        belongs to the browser process, not to this connection).
        """
        connection = cls(transport, timeouts)
        connection.close_reason = ""
        listen = getattr(transport, "listen", None)
        try:
            if listen is not None:  # the debugging pipe hands over each message as it comes
                stop = listen(connection._on_message, connection._fail_all)
                try:
                    yield connection
                finally:
                    stop()
            else:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(connection._read_loop)
                    try:
                        yield connection
                    finally:
                        tg.cancel_scope.cancel()
        finally:
            connection._fail_all("the bridge closed its connection to the browser")
            if close_transport:
                with anyio.CancelScope(shield=True):
                    await transport.close()

    def session(self, session_id: str, target_id: str | None = None) -> CDPSession:
        """The session object for `session_id`, created on first use."""
        existing = self._sessions.get(session_id)
        if existing is None:
            existing = CDPSession(self, session_id, target_id)
            self._sessions[session_id] = existing
        return existing

    def on_session_closed(self, callback: Callable[[CDPSession], None]) -> None:
        """Call `callback(session)` when a target session detaches."""
        self._on_session_closed.append(callback)

    async def _send(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        session_id: str | None,
        timeout: float | None,
        preceded_by: Sequence[tuple[str, Mapping[str, Any]]] = (),
    ) -> dict[str, Any]:
        if self.closed.is_set():
            raise ConnectionClosed(f"{method}: {self.close_reason}")
        deadline = self.timeouts.command if timeout is None else timeout
        message_id = next(Connection._ids)
        message = self._message(message_id, method, params or {}, session_id)
        pending = _Pending(method, session_id)
        self._pending[message_id] = pending
        try:
            with anyio.move_on_after(deadline):
                # Not pending: `_route` drops an answer whose id nobody waits for.
                first = self._unanswered(preceded_by, session_id)
                then = self._followers_of(session_id)
                if first or then:
                    await send_together(self._transport, [*first, message, *then])
                else:
                    await self._transport.send(message)
                await pending.done.wait()
            if not pending.done.is_set():
                raise CommandTimeout(method, deadline)
        except ConnectionClosed as exc:
            raise ConnectionClosed(f"{method}: {exc}") from exc
        finally:
            self._pending.pop(message_id, None)
        return pending.outcome()

    async def _send_all(
        self, commands: Sequence[tuple[str, Mapping[str, Any]]], session_id: str | None, timeout: float | None
    ) -> list[dict[str, Any] | CDPError]:
        deadline = self.timeouts.command if timeout is None else timeout
        waits: list[tuple[int, _Pending]] = []
        messages: list[str] = []
        for method, params in commands:
            message_id = next(Connection._ids)
            waits.append((message_id, _Pending(method, session_id)))
            messages.append(self._message(message_id, method, params or {}, session_id))
        messages.extend(self._followers_of(session_id))
        self._pending.update(waits)
        try:
            with anyio.move_on_after(deadline):
                await send_together(self._transport, messages)
                for _message_id, pending in waits:
                    await pending.done.wait()
        finally:
            for message_id, _pending in waits:
                self._pending.pop(message_id, None)
        answers: list[dict[str, Any] | CDPError] = []
        for _message_id, pending in waits:
            if not pending.done.is_set():
                answers.append(CommandTimeout(pending.method, deadline))
                continue
            try:
                answers.append(pending.outcome())
            except CDPError as exc:
                answers.append(exc)
        return answers

    def _send_now(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        session_id: str | None,
        preceded_by: Sequence[tuple[str, Mapping[str, Any]]],
    ) -> Reply | None:
        send_now = getattr(self._transport, "send_now", None)
        if send_now is None:  # a websocket or the relay: their writes are awaited
            return None
        message_id = next(Connection._ids)
        first = self._unanswered(preceded_by, session_id)
        session = self._sessions.get(session_id)
        followers = session._take_followers() if session is not None else []
        then = self._unanswered(followers, session_id)
        pending = _Pending(method, session_id)
        self._pending[message_id] = pending
        try:
            written = send_now([*first, self._message(message_id, method, params or {}, session_id), *then])
        except ConnectionClosed as exc:
            self._pending.pop(message_id, None)
            raise ConnectionClosed(f"{method}: {exc}") from exc
        if not written:
            self._pending.pop(message_id, None)
            if session is not None:
                session._followers[:0] = followers  # nothing was written: they follow the next write
            return None
        return Reply(self, message_id, pending)

    def _unanswered(self, commands: Sequence[tuple[str, Mapping[str, Any]]], session_id: str | None) -> list[str]:
        """`commands` as they go on the wire, with ids nobody waits for (`_route` drops their answers)."""
        return [self._message(next(Connection._ids), m, p, session_id) for m, p in commands]

    def _followers_of(self, session_id: str | None) -> list[str]:
        """What `CDPSession.follow_next_write` queued on the session, taken for the write being made."""
        session = self._sessions.get(session_id)
        return self._unanswered(session._take_followers(), session_id) if session is not None else []

    @staticmethod
    def _message(message_id: int, method: str, params: Mapping[str, Any], session_id: str | None) -> str:
        """The command as it goes on the wire."""
        message: dict[str, Any] = {"id": message_id, "method": method, "params": dict(params)}
        if session_id is not None:
            message["sessionId"] = session_id
        return json.dumps(message)

    async def _read_loop(self) -> None:
        try:
            while True:
                self._route(parse_message(await self._transport.receive()))
        except ConnectionClosed as exc:
            reason = str(exc)
        except Exception:  # boundary: whatever broke the reader, the waiters must learn of it
            logger.exception("DevTools reader failed")
            reason = "the DevTools reader failed (see the log)"
        self._fail_all(reason)

    def _on_message(self, text: str) -> None:
        if self.closed.is_set():
            return
        try:
            self._route(parse_message(text))
        except Exception:  # boundary, as in the read loop: the waiters must learn of it
            logger.exception("DevTools reader failed")
            self._fail_all("the DevTools reader failed (see the log)")

    def _route(self, message: dict[str, Any]) -> None:
        if "id" in message:
            pending = self._pending.get(message["id"])
            if pending is None:
                return
            if "error" in message:
                err = message["error"]
                pending.settle(
                    error=ProtocolError(pending.method, err.get("code", 0), err.get("message", ""), err.get("data"))
                )
            else:
                pending.settle(result=message.get("result", {}))
            return
        method = message.get("method", "")
        params = message.get("params", {})
        if method == "Target.detachedFromTarget":
            self._detach(params.get("sessionId"))
        session = self._sessions.get(message.get("sessionId"))
        if session is not None:
            session._dispatch(method, params)

    def _detach(self, session_id: str | None) -> None:
        session = self._sessions.pop(session_id, None) if session_id else None
        if session is None:
            return
        session.closed = True
        for pending in list(self._pending.values()):
            if pending.session_id == session_id:
                pending.settle(error=SessionClosed(f"{pending.method}: the target's session detached"))
        for callback in list(self._on_session_closed):
            try:
                callback(session)
            except Exception:  # boundary: a faulty observer must not stop the others
                logger.exception("session-closed callback failed")

    def _fail_all(self, reason: str) -> None:
        if self.closed.is_set():
            return
        self.close_reason = reason
        self.closed.set()
        for pending in list(self._pending.values()):
            pending.settle(error=ConnectionClosed(f"{pending.method}: {reason}"))
        for session in self._sessions.values():
            session.closed = True
