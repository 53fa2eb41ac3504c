"""HTTP sign-in prompts (401 and proxy 407) as modal windows: `sign_in` or `cancel`.

Each page and OOPIF session enables `Fetch` with `handleAuthRequests` and one pattern, the
documents (`resourceType: Document`): only navigations pause, and each paused request is
continued at once, so the page waits for nothing but a sign-in. A challenge
(`Fetch.authRequired`) becomes a `SignInPrompt` over the top of its tab's chain. It is
answered once: the first `sign_in` or `cancel` takes it off the desktop before the browser is
told, so a second client meets `window_not_found`. Wrong credentials make the server ask
again: that is a new window (a new id, in the answer's `openedWindowIds`) with a notice
saying the last try was refused. A prompt whose request went away (its frame navigated
elsewhere or went, its tab closed or crashed) closes by itself; one nobody answers within
`Timeouts.human` is cancelled, so a request never hangs a page.

The password reaches the browser and nothing else: it is never in a window, an answer, an
error or a log, and the values sent are masked wherever a page echoes them (the tab's
secret values).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

import anyio

from cdp_bridge.batch import SetUp
from cdp_bridge.connection import CDPSession
from webmcp.desktop.modal_window import ModalWindow
from webmcp.desktop.parts import Part
from webmcp.desktop.ports import DesktopLink, ModalOwner
from webmcp.desktop.windows import WindowState
from webmcp.errors import ToolError, best_effort, cdp_errors
from webmcp.models import ToolResult, field_item, fields_block, notice_block, text_block
from webmcp.untrusted.schema_guard import cap_text

__all__ = ["SignInOwner", "SignInPrompt", "SignInWatch"]

logger = logging.getLogger(__name__)

_REALM_BYTES = 300
"""A realm as shown (the server's text, capped)."""
_DOCUMENTS = [{"urlPattern": "*", "resourceType": "Document"}]
"""What pauses: navigations only (a subresource's challenge is left to the browser)."""


class SignInOwner(ModalOwner, Protocol):
    """What a sign-in prompt needs of its tab besides what every modal window does."""

    async def navigation_settled(self, budget: float) -> None: ...


@dataclass(frozen=True)
class _Outcome:
    kind: str
    """"again" (a new prompt for the same frame), "shown" (the frame committed a document) or "gone"."""
    prompt: SignInPrompt | None = None


@dataclass(eq=False)
class SignInPrompt(ModalWindow):
    """An HTTP authentication challenge of one request, as a modal window owned by its tab.

    Its content never changes while it is open: its version is its own.
    """

    owner: SignInOwner
    watch: SignInWatch
    session: CDPSession
    request_id: str
    frame_id: str
    url: str
    host: str
    proxy: bool

    window_kind = "sign_in"

    @classmethod
    def opened(
        cls, window: WindowState, owner: SignInOwner, watch: SignInWatch, session: CDPSession, params: dict[str, Any]
    ) -> SignInPrompt:
        """The window for a `Fetch.authRequired` event (`params`) of `owner`'s page."""
        challenge = params.get("authChallenge", {})
        url = str(params.get("request", {}).get("url", ""))
        proxy = challenge.get("source") == "Proxy"
        origin = str(challenge.get("origin", "")) or url
        host = urlsplit(origin).netloc or cap_text(origin, 200)
        prompt = cls(window, owner, watch, session, str(params["requestId"]), str(params.get("frameId", "")), url,
                     host, proxy)  # fmt: skip
        prompt._show(challenge, watch.refused_before(prompt))
        return prompt

    def _show(self, challenge: dict[str, Any], refused: int) -> None:
        realm = cap_text(str(challenge.get("realm", "")), _REALM_BYTES)
        scheme = cap_text(str(challenge.get("scheme", "")), 40) or "unknown"
        who = f"The proxy {self.host}" if self.proxy else self.host
        self.window.title = f"Sign in to {self.host}" + (" (proxy)" if self.proxy else "")
        self.window.summary = (
            f"{who} asks for a user name and password ({scheme} authentication) to load {cap_text(self.url, 300)}."
        )
        items = [
            field_item("Server" if not self.proxy else "Proxy", self.host),
            field_item("Scheme", scheme),
            field_item("Address", cap_text(self.url, 500)),
        ]
        blocks = [fields_block("challenge", items)]
        if realm:
            # The realm is the server's own words: shown quoted, as its text, never as the bridge's.
            blocks.append(text_block("realm", f"The server's realm: \u201c{realm}\u201d"))
        if refused:
            tries = "the user name and password sent" if refused == 1 else f"the {refused} sign-ins sent"
            text = f"The server did not accept {tries} for this address: it asks again."
            blocks.append(notice_block("refused", "warn", text))
        self.window.blocks = blocks

    def waits_for(self) -> str:
        """The clause for an answer that this prompt stopped."""
        return f"{self.host} asks for a sign-in ({self.window.id}); answer it with its sign_in or cancel tool"

    async def sign_in(self, username: str, password: str) -> ToolResult:
        """Send the user name and password; the answer says whether the server asked again.

        Raises:
            ToolError: window_not_found when the request is gone (the page went elsewhere).
        """
        self.watch.sent_password(password)
        response = {"response": "ProvideCredentials", "username": username, "password": password}
        outcome = await self._answer(response, credentials=True)
        if outcome.kind == "again" and outcome.prompt is not None:
            again = outcome.prompt.window.id
            return ToolResult(
                message=f"Sent the sign-in to {self.host}; it did not accept it and asks again ({again}).",
                opened_window_ids=[again],
            )
        return self._after(outcome, f"Sent the sign-in to {self.host}; it did not ask again.")

    async def cancel(self) -> ToolResult:
        """Refuse to sign in: the page gets the server's refusal (its 401 or 407 answer)."""
        outcome = await self._answer({"response": "CancelAuth"}, credentials=False)
        return self._after(outcome, f"Cancelled the sign-in to {self.host}; the page gets the server's refusal.")

    def _after(self, outcome: _Outcome, said: str) -> ToolResult:
        if outcome.kind == "shown":
            return ToolResult(message=f"{said} {self.owner.id} now shows {cap_text(self.watch.shown_url, 500)}.")
        if outcome.kind == "gone":
            return ToolResult(message=f"{said} The tab then went elsewhere or closed.")
        return ToolResult(message=f"{said} The page has not shown the answer yet; its window follows it.")

    async def _answer(self, response: dict[str, Any], *, credentials: bool) -> _Outcome:
        if not self._open:
            raise ToolError("window_not_found", f"Window {self.window.id} was answered already; re-read app://windows.")
        mark = self.watch.mark()
        self.watch.answered(self, credentials)  # off the desktop first: a racing client finds it gone
        gone = ToolError("window_not_found", f"The sign-in {self.window.id} is gone: its page no longer waits for it.")
        # Only the method's error text: the command's parameters (the password) never go into an error.
        with cdp_errors(f"answering {self.window.id}", gone=gone):
            await self.session.send(
                "Fetch.continueWithAuth", {"requestId": self.request_id, "authChallengeResponse": response}
            )
        outcome = await self.watch.outcome(self.frame_id, mark, self.owner.timeouts.navigation)
        if outcome.kind == "shown":
            await self.owner.navigation_settled(self.owner.timeouts.navigation)
            self.owner.mark_dirty()
            await self.owner.refresh()
        return outcome


class SignInWatch(Part):
    """A tab's sign-in prompts: Fetch on each of its sessions, and what became of each prompt (a part: parts.py).

    Its prompts are published through the modal stack (`publish`), which lists them among the tab's modal windows.
    """

    def __init__(self, owner: SignInOwner, desktop: DesktopLink, publish: Any) -> None:
        self._owner = owner
        self._desktop = desktop
        self._publish = publish
        """`ModalStack.open_prompt`: publishes a window made by the function it is given."""
        self._prompts: list[SignInPrompt] = []
        self._refused: dict[tuple[str, str], int] = {}
        """(frame, address) → sign-ins sent that the server answered by asking again."""
        self._sent: dict[tuple[str, str], int] = {}
        self._passwords: set[str] = set()
        self._seq = 0
        self._events: list[tuple[int, str, str, SignInPrompt | None]] = []
        self._changed = anyio.Event()
        self._shown_url = ""

    def watch(self, session: CDPSession, main: bool = False) -> list[SetUp]:
        """Pause `session`'s navigations only for their sign-in challenges: the set-up to send."""
        on = session.on
        on("Fetch.requestPaused", lambda p: self._desktop.spawn(_continue, session, str(p.get("requestId", ""))))
        on("Fetch.authRequired", lambda p: self._challenged(session, p))
        on("Page.frameStartedNavigating", self._frame_moving)
        on("Page.frameNavigated", lambda p: self._frame_left(p.get("frame", {}), committed=True))
        on("Page.frameDetached", lambda p: self._frame_left({"id": p.get("frameId")}, committed=False))
        # A browser reached through the extension may not offer Fetch: then the browser asks the person.
        return [
            SetUp(
                "Fetch.enable",
                {"handleAuthRequests": True, "patterns": _DOCUMENTS},
                optional="sign-in prompts are not available on this page",
            )
        ]

    @property
    def shown_url(self) -> str:
        """The address the latest commit the watch saw showed."""
        return self._shown_url

    def passwords(self) -> frozenset[str]:
        """The passwords sent from this tab (memory only, to mask what a page echoes)."""
        return frozenset(self._passwords)

    def prompts(self) -> list[SignInPrompt]:
        return [p for p in self._prompts if p.is_open()]

    def sent_password(self, password: str) -> None:
        self._passwords.add(password)

    def refused_before(self, prompt: SignInPrompt) -> int:
        return self._refused.get((prompt.frame_id, prompt.url), 0)

    # --- events ----------------------------------------------------------------------------

    def _note(self, kind: str, frame_id: str, prompt: SignInPrompt | None = None) -> None:
        self._seq += 1
        self._events.append((self._seq, kind, frame_id, prompt))
        del self._events[:-64]
        changed, self._changed = self._changed, anyio.Event()
        changed.set()

    def _challenged(self, session: CDPSession, params: dict[str, Any]) -> None:
        key = (str(params.get("frameId", "")), str(params.get("request", {}).get("url", "")))
        if self._sent.pop(key, 0):
            self._refused[key] = self._refused.get(key, 0) + 1
        prompt: SignInPrompt = self._publish(
            lambda window: SignInPrompt.opened(window, self._owner, self, session, params)
        )
        self._prompts.append(prompt)
        self._note("again", key[0], prompt)
        self._desktop.spawn(self._expire, prompt)

    def _frame_moving(self, params: dict[str, Any]) -> None:
        kind = str(params.get("navigationType", ""))
        if not kind.startswith(("sameDocument", "historySameDocument")):
            self._frame_left({"id": params.get("frameId")}, committed=False)

    def _frame_left(self, frame: dict[str, Any], *, committed: bool) -> None:
        frame_id = str(frame.get("id", ""))
        if committed:
            self._shown_url = str(frame.get("url", ""))
            self._refused = {k: v for k, v in self._refused.items() if k[0] != frame_id}
        for prompt in [p for p in self._prompts if p.frame_id == frame_id]:
            self._drop(prompt)  # its request went with the navigation it belonged to
        self._note("shown" if committed else "gone", frame_id)

    def _drop(self, prompt: SignInPrompt) -> None:
        if prompt in self._prompts:
            self._prompts.remove(prompt)
        if prompt.is_open():
            prompt.closed()
            self._desktop.forget(prompt.window.id)
            self._owner.mark_dirty()
            self._desktop.changed()

    def answered(self, prompt: SignInPrompt, credentials: bool) -> None:
        """`prompt` is answered now: it leaves the desktop before the browser is told."""
        key = (prompt.frame_id, prompt.url)
        if credentials:
            self._sent[key] = self._sent.get(key, 0) + 1
        self._drop(prompt)

    def crashed(self) -> None:
        """The tab crashed: its prompts went with their requests (the modal stack closed the windows)."""
        for prompt in list(self._prompts):
            self._drop(prompt)
        self._note("gone", "")

    def closing(self) -> None:
        self.crashed()

    # --- what became of an answer ----------------------------------------------------------

    def mark(self) -> int:
        return self._seq

    async def outcome(self, frame_id: str, mark: int, timeout: float) -> _Outcome:
        """The first thing that happened to `frame_id` after `mark`, waiting at most `timeout`."""
        with anyio.move_on_after(timeout):
            while True:
                for seq, kind, frame, prompt in self._events:
                    if seq > mark and frame in (frame_id, ""):
                        return _Outcome(kind, prompt)
                await self._changed.wait()
        return _Outcome("pending")

    async def _expire(self, prompt: SignInPrompt) -> None:
        """Cancel a prompt nobody answered in time: the page must not wait for ever."""
        with anyio.move_on_after(self._owner.timeouts.human):
            while prompt.is_open():
                await self._changed.wait()
            return
        if prompt.is_open():
            self._drop(prompt)
            await _cancel_quietly(prompt.session, prompt.request_id)


async def _continue(session: CDPSession, request_id: str) -> None:
    """Let a paused navigation go on: only its sign-in challenge is the bridge's business."""
    with best_effort(logger, "a paused request could not be continued (it went away)"):
        await session.send("Fetch.continueRequest", {"requestId": request_id})


async def _cancel_quietly(session: CDPSession, request_id: str) -> None:
    with best_effort(logger, "an expired sign-in could not be cancelled (its request went away)"):
        await session.send(
            "Fetch.continueWithAuth", {"requestId": request_id, "authChallengeResponse": {"response": "CancelAuth"}}
        )
