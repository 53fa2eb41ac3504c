"""What a channel that outlives its browser side must remember, so a `Connection` never notices.

Used by the extension relay (the extension may leave and come back) and by the reconnecting
farm transport (the farm may drop a session and hand out a new one). Both keep one
`ChannelLedger` and, when the far side goes away, deliver what the ledger says happened:

- every session the far side had announced is detached, and each page's target destroyed,
  so the bridge closes those windows;
- every command still unanswered is answered with an error, after the detaches, so a page's
  own commands fail as `SessionClosed` like those of a closed tab;
- when a new far side comes, the browser-wide settings the bridge sent once
  (`Target.setDiscoverTargets`, `Target.setAutoAttach`) are sent again, under negative ids
  whose answers are dropped, so the new side announces its pages afresh.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

__all__ = ["FAR_SIDE_GONE", "ChannelLedger"]

FAR_SIDE_GONE = -32001
"""The error code of a command whose far side went away before answering."""

REPLAYED = ("Target.setDiscoverTargets", "Target.setAutoAttach")
_SESSION_EVENTS = ("Target.attachedToTarget", "Target.detachedFromTarget")
# Chromium and the extension both write "id" or "method" first: frames of megabytes (an AX
# tree, a screenshot) are routed by their head alone.
_HEAD = re.compile(r'\{"(id|method)":(-?\d+|"[^"\\]*")[,}]')


class ChannelLedger:
    """Commands in flight, sessions announced, and settings to replay, for one channel."""

    def __init__(self) -> None:
        self._in_flight: dict[int, str | None] = {}
        """Command id → sessionId, for commands the far side has not answered yet."""
        self._sessions: dict[str, tuple[str, str | None]] = {}
        """sessionId → (targetId, parent sessionId) for every session the far side announced."""
        self._replay: dict[str, str] = {}
        self._replay_ids = itertools.count(-1, -1)  # negative: never an id a Connection uses

    def outgoing(self, text: str) -> tuple[object, str, str | None]:
        """Note a command the bridge sends; returns its (id, method, sessionId)."""
        message = json.loads(text)
        message_id, method, session_id = message.get("id"), message.get("method", ""), message.get("sessionId")
        if session_id is None and method in REPLAYED:
            self._replay[method] = text
        return message_id, method, session_id

    @staticmethod
    def is_replayed(method: str, session_id: str | None) -> bool:
        """True for a browser-wide setting that a far side receives again when it comes."""
        return session_id is None and method in REPLAYED

    def sent(self, message_id: object, session_id: str | None) -> None:
        """The command went to the far side: it is in flight until answered."""
        if isinstance(message_id, int):
            self._in_flight[message_id] = session_id

    def incoming(self, frame: str) -> bool:
        """Note a frame from the far side; False for frames the Connection must not see."""
        head = _HEAD.match(frame)
        if head is not None:
            key, value = head.groups()
            if key == "id":
                self._in_flight.pop(int(value), None)
                return int(value) >= 0  # a negative id answers a replayed setting
            if value.strip('"') not in _SESSION_EVENTS:
                return True
        message: dict[str, Any] = json.loads(frame)
        if "relay" in message:
            return False  # the relay's keep-alive
        message_id = message.get("id")
        if isinstance(message_id, int):
            self._in_flight.pop(message_id, None)
            if message_id < 0:
                return False
        params = message.get("params") or {}
        if message.get("method") == "Target.attachedToTarget":
            self._sessions[params["sessionId"]] = (params["targetInfo"]["targetId"], message.get("sessionId"))
        elif message.get("method") == "Target.detachedFromTarget":
            self._sessions.pop(params.get("sessionId", ""), None)
        return True

    def lost(self, why: str) -> list[str]:
        """The far side went away: the messages that tell the Connection so, in order."""
        out: list[dict[str, Any]] = []
        for session_id, (target_id, parent) in self._sessions.items():
            detached: dict[str, Any] = {
                "method": "Target.detachedFromTarget",
                "params": {"sessionId": session_id, "targetId": target_id},
            }
            if parent is not None:
                detached["sessionId"] = parent
            out.append(detached)
            if parent is None:
                out.append({"method": "Target.targetDestroyed", "params": {"targetId": target_id}})
        self._sessions.clear()
        answers = [self.error(message_id, session_id, why) for message_id, session_id in self._in_flight.items()]
        self._in_flight.clear()
        return [json.dumps(m) for m in out] + [a for a in answers if a is not None]

    def replay(self) -> list[str]:
        """The browser-wide settings to send a new far side, under fresh negative ids."""
        frames = []
        for text in self._replay.values():
            message = json.loads(text)
            message["id"] = next(self._replay_ids)
            frames.append(json.dumps(message))
        return frames

    @staticmethod
    def error(message_id: object, session_id: str | None, text: str) -> str | None:
        """An error answer to `message_id` (None if the message had no id)."""
        if not isinstance(message_id, int):
            return None
        answer: dict[str, Any] = {"id": message_id, "error": {"code": FAR_SIDE_GONE, "message": text}}
        if session_id is not None:
            answer["sessionId"] = session_id
        return json.dumps(answer)

    @staticmethod
    def accepted(message_id: object) -> str:
        """An empty success answer (a setting kept for the next far side)."""
        return json.dumps({"id": message_id, "result": {}})
