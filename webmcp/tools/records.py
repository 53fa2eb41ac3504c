"""Every browser action as one record: name, schemas, annotations, where it applies, handler.

A record's input schema comes from a pydantic model (`extra="forbid"`, so unknown
arguments are refused); its output schema is the one ToolResult schema all window tools
share. A handler takes the window (or, for app-level actions, the desktop) and the input
model built from the checked arguments (so each default is written once, in the model),
and calls the window's own operation. A record may instead name a page tool to call
(`page_call`, for `call_page_tool`): the dispatcher then calls that tool as if it had been
called by its own name. `RECORDS` is the whole list.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, SecretStr, WithJsonSchema

from webmcp.desktop import content
from webmcp.desktop.actions import FieldValue
from webmcp.desktop.dialogs import InPageModal, JsDialog
from webmcp.desktop.file_chooser import FileChooser
from webmcp.desktop.forms import PendingForm
from webmcp.desktop.mirror import PageTool
from webmcp.desktop.navigation import check_url
from webmcp.desktop.registry import Desktop
from webmcp.desktop.sign_in import SignInPrompt
from webmcp.desktop.tab import Tab
from webmcp.desktop.waiting import WAIT_DEFAULT, WAIT_LIMIT, WaitDesk, Wanted, wait_for
from webmcp.desktop.windows import VersionCheck
from webmcp.errors import ToolError
from webmcp.models import ToolResult, input_schema_of
from webmcp.tools.listing import page_tool_listing
from webmcp.untrusted.page_limits import MAX_RESULT_BYTES
from webmcp.untrusted.schema_guard import cap_text

__all__ = ["RECORDS", "Answer", "ToolRecord", "WindowKind", "record_for", "records_for"]

WindowKind = Literal["tab", "dialog", "modal", "form", "sign_in", "chooser", "app"]


@dataclass(frozen=True)
class Answer:
    """What a handler returns: the ToolResult, and an image for content when there is one."""

    result: ToolResult
    image_png: bytes | None = None


WindowT = TypeVar("WindowT")
InputT = TypeVar("InputT", bound=BaseModel)


@dataclass(frozen=True, kw_only=True)
class ToolRecord(Generic[WindowT, InputT]):
    """One browser action, as `tools/list` shows it and the dispatcher runs it.

    `handler` gets the window (`WindowT`: `Tab`, `JsDialog`, … or, for `app`, the `Desktop`)
    and an instance of `input_model`, which the type checker holds to be the handler's own.
    A record has either a `handler` or a `page_call`.
    """

    action: str
    applies_to: WindowKind
    title: str
    description: str
    input_model: type[InputT]
    annotations: dict[str, bool]
    handler: Callable[[WindowT, InputT], Awaitable[ToolResult | Answer]] | None = field(default=None, repr=False)
    page_call: Callable[[WindowT, InputT], tuple[PageTool, dict[str, Any]]] | None = field(default=None, repr=False)
    """Instead of a handler: the page tool the input names, and its arguments. The dispatcher calls
    it as a call by the tool's own name (its schema, expectedVersion, the write guard, the deadline)."""
    guarded: Callable[[WindowT, InputT, VersionCheck | None], Awaitable[ToolResult]] | None = field(
        default=None, repr=False
    )
    """Instead of a handler: one that writes to the page itself, so it gets the call's version check
    (None without expectedVersion) for the write guard, as a page tool's call does."""
    offered: Callable[[Any], bool] | None = field(default=None, repr=False)
    """When set, the action exists only on windows for which it is true (else always)."""
    why_not: Callable[[Any], str] | None = field(default=None, repr=False)
    """Why the action is not offered on a window now, in a sentence (for `action_not_available`)."""
    waiter: Callable[[WaitDesk, str, InputT], Awaitable[ToolResult]] | None = field(default=None, repr=False)
    """Instead of a handler: a wait that changes nothing. The dispatcher runs it without the window's
    lock (the window's other calls go on), given the desktop and the window's id, so that it sees the
    window close or a modal window block it."""
    writes: bool | None = None
    """Whether the action changes its window, so that its schema lists `expectedVersion` (GUI bridge
    §5.5: a write SHOULD accept it); None: unless `readOnlyHint`. Every action accepts it."""

    def __post_init__(self) -> None:
        if sum(x is not None for x in (self.handler, self.page_call, self.guarded, self.waiter)) != 1:
            raise TypeError(
                f"the record of {self.action!r} needs exactly one of handler, guarded, waiter and page_call"
            )

    @property
    def versioned(self) -> bool:
        """True when `tools/list` shows `expectedVersion` in this action's schema."""
        return not self.annotations.get("readOnlyHint", False) if self.writes is None else self.writes

    def offered_on(self, window: Any) -> bool:
        """True when `window` offers this action now."""
        return self.offered is None or self.offered(window)

    def run(self, window: WindowT, params: InputT, check: VersionCheck | None = None) -> Awaitable[ToolResult | Answer]:
        """The handler's work on `window` (a record with a `page_call` has none: the dispatcher calls the tool).

        `check` is the call's own version check, handed only to a `guarded` handler."""
        if self.guarded is not None:
            return self.guarded(window, params, check)
        assert self.handler is not None, f"{self.action} calls a page tool or waits"
        return self.handler(window, params)

    @property
    def input_schema(self) -> dict[str, Any]:
        return input_schema_of(self.input_model)


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class NoInput(_Input):
    pass


_URL_HELP = "An absolute http(s), file or about: URL."


class NavigateInput(_Input):
    url: str | None = Field(default=None, description=_URL_HELP)
    go: Literal["back", "forward", "reload"] | None = None


class OpenTabInput(_Input):
    url: str = Field(default="about:blank", description=_URL_HELP)


class ReadContentInput(_Input):
    block_id: str | None = Field(default=None, alias="blockId")
    offset: int = Field(default=0, ge=0)
    limit: int = Field(default=100, ge=1, le=1000)


class ListPageToolsInput(_Input):
    offset: int = Field(default=0, ge=0, description="Where to start, in the page's order.")
    limit: int = Field(default=20, ge=1, le=50, description="At most this many tools (and at most 96 KB of them).")


class CallPageToolInput(_Input):
    name: str = Field(description="The page tool, by its name or handle as list_page_tools gives them.")
    arguments: dict[str, Any] = Field(
        default_factory=dict, description="The tool's input, as its inputSchema in list_page_tools describes it."
    )


_FIELD_VALUE = {"type": ["string", "boolean", "number", "array"], "items": {"type": "string"}}
"""What a field takes, said as one type list: pydantic's anyOf of five schemas lists integer beside number."""


class FieldInput(_Input):
    label: str = Field(min_length=1)
    value: Annotated[str | bool | int | float | list[str], WithJsonSchema(_FIELD_VALUE)] = Field(
        description="Text; an option (a list for a multiple select); true/false for a checkbox or radio, or the "
        "option under a radio group's label; ISO date or time (2026-12-03, 20:45)."
    )
    block_id: str | None = Field(default=None, alias="blockId")


class FillInput(_Input):
    fields: list[FieldInput] = Field(min_length=1, max_length=50)


class PressInput(_Input):
    label: str | None = Field(
        default=None, min_length=1, description='As the window shows it ("Reply #2": the second of that name).'
    )
    block_id: str | None = Field(default=None, alias="blockId", description="Where several share the label.")
    key: str | None = Field(default=None, min_length=1, max_length=40)


class HoverInput(_Input):
    # As press's: its descriptions are said once, there (a docstring here would be published).
    label: str = Field(min_length=1)
    block_id: str | None = Field(default=None, alias="blockId")
    wheel: int | None = Field(default=None, description="Then scroll there by this many px (up if < 0).")


class SubmitInput(_Input):
    form: str | None = Field(default=None, description="Its name or heading, if several show.")


class AcceptInput(_Input):
    text: str | None = Field(default=None, description="The answer to a prompt.")


class SignInInput(_Input):
    username: str = Field(description="The user name for the server (or proxy) that asks.")
    # A SecretStr: its repr is masked, and the schema says writeOnly, so no error ever quotes it.
    password: SecretStr = Field(description="The password; it goes to the browser only, never into an answer.")


async def _sign_in(prompt: SignInPrompt, params: SignInInput) -> ToolResult:
    return await prompt.sign_in(params.username, params.password.get_secret_value())


async def _cancel_sign_in(prompt: SignInPrompt, _: NoInput) -> ToolResult:
    return await prompt.cancel()


class ReadDownloadInput(_Input):
    name: str = Field(description="A finished download of this tab, by its name as the window lists it.")


class ChooseInput(_Input):
    paths: list[str] = Field(
        min_length=1,
        max_length=100,
        description="Files inside the upload folder (--upload-dir), relative to it or absolute; the window lists them.",
    )


# --- wait_for (issue 41): a wait that reads the window and changes nothing -------------------


class WaitForInput(_Input):
    text: str | None = Field(
        default=None,
        max_length=1000,
        pattern=r"\S",
    )
    text_gone: str | None = Field(
        default=None,
        alias="textGone",
        max_length=1000,
        pattern=r"\S",
    )
    timeout: float = Field(
        default=WAIT_DEFAULT,
        gt=0,
        le=WAIT_LIMIT,
        description="Seconds.",
    )


async def _wait_for(desk: WaitDesk, window_id: str, params: WaitForInput) -> ToolResult:
    return await wait_for(desk, window_id, Wanted(params.text, params.text_gone), params.timeout)


async def _focus(tab: Tab, _: NoInput) -> ToolResult:
    return await tab.focus()


async def _navigate(tab: Tab, params: NavigateInput) -> ToolResult:
    if (params.url is None) == (params.go is None):
        said = "Give url (a page to load) or go (back, forward or reload)" + (", not both." if params.url else ".")
        raise ToolError("validation_failed", said, fields=[{"field": "go" if params.url else "url", "error": said}])
    if params.go == "back":
        return await tab.history(-1)
    if params.go == "forward":
        return await tab.history(+1)
    if params.go == "reload":
        return await tab.reload()
    assert params.url is not None
    return await tab.navigate(params.url)


async def _close(tab: Tab, _: NoInput) -> ToolResult:
    return await tab.close_tab()


async def _read_content(tab: Tab, params: ReadContentInput) -> ToolResult:
    return await content.read_content(tab, params.block_id, params.offset, params.limit)


def _has_unlisted_tools(tab: Tab) -> bool:
    return len(tab.every_page_tool()) > len(tab.page_tools())


async def _list_page_tools(tab: Tab, params: ListPageToolsInput) -> ToolResult:
    return page_tool_listing(tab.id, tab.origin, tab.every_page_tool(), tab.page_tools(), params.offset, params.limit)


def _named_page_tool(tab: Tab, params: CallPageToolInput) -> tuple[PageTool, dict[str, Any]]:
    """The page tool `params.name` names (its handle, else its name if only one tool has it).

    Raises:
        ToolError: no such tool, or the name is not one tool's; expectedVersion put in `arguments`.
    """
    if "expectedVersion" in params.arguments:
        raise ToolError(
            "validation_failed",
            "expectedVersion goes beside name and arguments, not inside arguments.",
            fields=[{"field": "arguments.expectedVersion", "error": "Give it as the call's own expectedVersion"}],
        )
    tools = tab.every_page_tool()
    shown = cap_text(params.name, 200)
    found = [t for t in tools if t.handle == params.name] or [
        t for t in tools if params.name in (t.name, t.display_name)
    ]
    if len(found) > 1:
        handles = ", ".join(t.handle for t in found[:10])
        raise ToolError(
            "action_not_available",
            f"{len(found)} page tools of {tab.id} are named \u201c{shown}\u201d (from different frames); "
            f"call one by its handle: {handles}.",
        )
    if not found:
        raise ToolError(
            "action_not_available",
            f"{tab.id} has no page tool \u201c{shown}\u201d now (the page may have removed it or navigated); "
            f"{tab.id}__list_page_tools lists those it has.",
        )
    return found[0], dict(params.arguments)


async def _screenshot(tab: Tab, _: NoInput) -> Answer:
    png = await content.screenshot(tab)
    return Answer(ToolResult(message=f"Screenshot of {tab.id}.", result={"mimeType": "image/png"}), image_png=png)


async def _fill(tab: Tab, params: FillInput, check: VersionCheck | None) -> ToolResult:
    fields = [FieldValue(f.label, f.value, f.block_id) for f in params.fields]
    return await tab.fill(fields, check)


async def _press(tab: Tab, params: PressInput, check: VersionCheck | None) -> ToolResult:
    if params.key is not None:
        return await tab.press_key(params.key, params.label, params.block_id, check)
    if params.label is None:
        raise ToolError(
            "validation_failed",
            "Give `label`, what to press as the window shows it, or `key`. Nothing was pressed.",
            fields=[{"field": "label", "error": "Give it, or key"}],
        )
    return await tab.press(params.label, params.block_id, check)


_WHEEL_LIMIT = 100_000
"""The most px one hover's wheel turns, either way (checked here: tools/list does not list guards)."""


async def _hover(tab: Tab, params: HoverInput, check: VersionCheck | None) -> ToolResult:
    if params.wheel is not None and abs(params.wheel) > _WHEEL_LIMIT:
        said = f"wheel is at most {_WHEEL_LIMIT:,} px either way. Nothing was done."
        raise ToolError("validation_failed", said, fields=[{"field": "wheel", "error": f"At most {_WHEEL_LIMIT:,}"}])
    return await tab.hover(params.label, params.block_id, check, params.wheel)


async def _submit_form(tab: Tab, params: SubmitInput, check: VersionCheck | None) -> ToolResult:
    return await tab.submit(params.form, check)


async def _accept(dialog: JsDialog, params: AcceptInput) -> ToolResult:
    return await dialog.answer(True, params.text)


async def _dismiss(dialog: JsDialog, _: NoInput) -> ToolResult:
    return await dialog.answer(False, None)


async def _stop_dialogs(dialog: JsDialog, _: NoInput) -> ToolResult:
    return await dialog.stop_dialogs()


async def _close_dialog_tab(dialog: JsDialog, _: NoInput) -> ToolResult:
    return await dialog.close_tab()


async def _close_modal(modal: InPageModal, _: NoInput) -> ToolResult:
    return await modal.close_dialog()


async def _submit(form: PendingForm, _: NoInput) -> ToolResult:
    return await form.submit()


async def _cancel(form: PendingForm, _: NoInput) -> ToolResult:
    return await form.cancel()


async def _read_download(tab: Tab, params: ReadDownloadInput) -> ToolResult:
    return await tab.read_download(params.name, MAX_RESULT_BYTES - 4096)


async def _choose(chooser: FileChooser, params: ChooseInput) -> ToolResult:
    return await chooser.choose(params.paths)


async def _cancel_chooser(chooser: FileChooser, _: NoInput) -> ToolResult:
    return await chooser.cancel()


async def _open_tab(desktop: Desktop, params: OpenTabInput) -> ToolResult:
    url = params.url
    check_url(desktop.policy, url)
    tab = await desktop.open_tab()
    if tab is None:
        raise ToolError("action_timeout", "The new tab did not come up in time.")
    if url == "about:blank":
        return ToolResult(message=f"Opened {tab.id}, blank.", opened_window_ids=[tab.id])
    # Answer once the page shows, with its tools listed (or with a dialog it opened on load).
    async with tab.op_lock:
        loaded = await tab.navigate(url)
    return ToolResult(
        message=f"Opened {tab.id}: {loaded.message}",
        opened_window_ids=[tab.id, *(loaded.opened_window_ids or [])],
    )


def _window_action(action: str) -> dict[str, Any]:
    """The gate of a window action: the tab says whether it lists `action`, and why not."""
    return {
        "offered": lambda tab: tab.offers_action(action),
        "why_not": lambda tab: tab.why_not_action(action),
    }


RECORDS: tuple[ToolRecord[Any, Any], ...] = (
    ToolRecord(
        action="focus",
        applies_to="tab",
        title="Focus tab",
        description="Bring this tab to the front.",
        input_model=NoInput,
        annotations={"readOnlyHint": False, "idempotentHint": True},
        writes=False,  # the tab's page stays as it is
        handler=_focus,
    ),
    ToolRecord(
        action="navigate",
        applies_to="tab",
        title="Navigate",
        description="Load `url`, or `go` back, forward or reload.",
        input_model=NavigateInput,
        annotations={"destructiveHint": False, "openWorldHint": True},
        handler=_navigate,
    ),
    ToolRecord(
        action="close",
        applies_to="tab",
        title="Close tab",
        description="Close this tab (the page may ask to confirm, in a dialog window).",
        input_model=NoInput,
        annotations={"destructiveHint": True},
        handler=_close,
    ),
    ToolRecord(
        action="read_content",
        applies_to="tab",
        title="Read content",
        description="This tab's content uncut, in pages; or every row or item of one table or list (blockId).",
        input_model=ReadContentInput,
        annotations={"readOnlyHint": True, "idempotentHint": True},
        handler=_read_content,
    ),
    ToolRecord(
        action="list_page_tools",
        applies_to="tab",
        title="List all page tools",
        description="The page registered more tools than a window lists: page through all of them, in the page's "
        "order, with their input schemas (call any with call_page_tool).",
        input_model=ListPageToolsInput,
        annotations={"readOnlyHint": True, "idempotentHint": True},
        handler=_list_page_tools,
        offered=_has_unlisted_tools,
    ),
    ToolRecord(
        action="call_page_tool",
        applies_to="tab",
        title="Call a page tool by name",
        description="Call one of the page's tools by its name (from list_page_tools), listed or not: its input is "
        "checked against its schema and expectedVersion applies, as when it is called directly.",
        input_model=CallPageToolInput,
        annotations={"destructiveHint": True, "openWorldHint": True},
        page_call=_named_page_tool,
        offered=_has_unlisted_tools,
    ),
    ToolRecord(
        action="screenshot",
        applies_to="tab",
        title="Screenshot",
        description="A PNG of what this tab shows.",
        input_model=NoInput,
        annotations={"readOnlyHint": True, "idempotentHint": True},
        handler=_screenshot,
    ),
    ToolRecord(
        action="fill",
        applies_to="tab",
        title="Fill",
        description="Set fields by label, as a person types or picks; all are checked before any is set.",
        input_model=FillInput,
        annotations={"destructiveHint": False, "idempotentHint": True, "openWorldHint": True},
        guarded=_fill,
        **_window_action("fill"),
    ),
    ToolRecord(
        action="press",
        applies_to="tab",
        title="Press",
        description="Click what the window shows, by its text or name: a button, link, tab, menu or tree item, "
        'checkbox, list item, suggestion, cell. Or press `key` ("Enter", "Shift+Tab", "ArrowDown") on it, or without '
        "`label` where the focus is.",
        input_model=PressInput,
        annotations={"destructiveHint": True, "openWorldHint": True},
        guarded=_press,
        **_window_action("press"),
    ),
    ToolRecord(
        action="hover",
        applies_to="tab",
        title="Hover",
        description="Point at `label` (as press names it), e.g. to open a menu.",
        input_model=HoverInput,
        annotations={"destructiveHint": False, "openWorldHint": True},
        guarded=_hover,
        **_window_action("hover"),
    ),
    ToolRecord(
        action="submit",
        applies_to="tab",
        title="Submit",
        description="Submit the form last filled (or `form`) with its submit button, else as Enter would.",
        input_model=SubmitInput,
        annotations={"destructiveHint": True, "openWorldHint": True},
        guarded=_submit_form,
        **_window_action("submit"),
    ),
    ToolRecord(
        action="wait_for",
        applies_to="tab",
        title="Wait for text",
        description="Wait until the window shows `text` (case and spacing aside), or stops showing `textGone`; "
        "with neither, until the page settles.",
        input_model=WaitForInput,
        annotations={"readOnlyHint": True, "idempotentHint": True},
        waiter=_wait_for,
    ),
    ToolRecord(
        action="read_download",
        applies_to="tab",
        title="Read a download",
        description="Read the text of a finished download of this tab (text, JSON, CSV; cut at the result cap), "
        "or learn its type and size; the window lists its downloads by name.",
        input_model=ReadDownloadInput,
        annotations={"readOnlyHint": True, "idempotentHint": True},
        handler=_read_download,
        offered=lambda tab: tab.has_downloads(),
    ),
    ToolRecord(
        action="accept",
        applies_to="dialog",
        title="Accept",
        description="Press OK (for a prompt, answer with `text`).",
        input_model=AcceptInput,
        annotations={"destructiveHint": False},
        handler=_accept,
    ),
    ToolRecord(
        action="dismiss",
        applies_to="dialog",
        title="Dismiss",
        description="Press Cancel (an alert is simply closed).",
        input_model=NoInput,
        annotations={"destructiveHint": False},
        handler=_dismiss,
    ),
    ToolRecord(
        action="stop_dialogs",
        applies_to="dialog",
        title="Stop this page's dialogs",
        description="The page keeps opening dialogs: answer this one (Cancel; Leave for a 'Leave page?') and let "
        "the bridge dismiss the page's further dialogs until the tab navigates or reloads.",
        input_model=NoInput,
        annotations={"destructiveHint": False},
        handler=_stop_dialogs,
        offered=lambda dialog: bool(dialog.repeated),
    ),
    ToolRecord(
        action="close_tab",
        applies_to="dialog",
        title="Close the tab",
        description="Close the tab this dialog belongs to without answering the dialog (the page's beforeunload "
        "handler is skipped): the way out of a page that keeps its tab blocked.",
        input_model=NoInput,
        annotations={"destructiveHint": True},
        handler=_close_dialog_tab,
    ),
    ToolRecord(
        action="close",
        applies_to="modal",
        title="Close dialog",
        description="Close this in-page dialog without submitting it (like its Close button).",
        input_model=NoInput,
        annotations={"destructiveHint": False},
        handler=_close_modal,
    ),
    ToolRecord(
        action="submit",
        applies_to="form",
        title="Submit form",
        description="Submit the form as the page's own submit button would; the answer carries the original "
        "call's outcome.",
        input_model=NoInput,
        annotations={"destructiveHint": True},
        handler=_submit,
        offered=lambda form: form.agent_may_submit,  # --human-submit keeps it for the person
    ),
    ToolRecord(
        action="cancel",
        applies_to="form",
        title="Cancel",
        description="Cancel the call that filled this form; the page is told, and nothing is submitted.",
        input_model=NoInput,
        annotations={"destructiveHint": False},
        handler=_cancel,
    ),
    ToolRecord(
        action="sign_in",
        applies_to="sign_in",
        title="Sign in",
        description="Send a user name and password to the server (or proxy) that asks; if it refuses them it asks "
        "again, in a new window named in openedWindowIds.",
        input_model=SignInInput,
        annotations={"destructiveHint": False, "openWorldHint": True},
        handler=_sign_in,
    ),
    ToolRecord(
        action="cancel",
        applies_to="sign_in",
        title="Cancel sign-in",
        description="Do not sign in: the page gets the server's refusal.",
        input_model=NoInput,
        annotations={"destructiveHint": False},
        handler=_cancel_sign_in,
    ),
    ToolRecord(
        action="choose",
        applies_to="chooser",
        title="Choose files",
        description="Give the page's file field these files from the upload folder (only files inside it; one "
        "unless the field takes several); the page gets them as if the person had chosen them.",
        input_model=ChooseInput,
        annotations={"destructiveHint": False},
        handler=_choose,
    ),
    ToolRecord(
        action="cancel",
        applies_to="chooser",
        title="Cancel",
        description="Close the file chooser without choosing anything; the field keeps what it had.",
        input_model=NoInput,
        annotations={"destructiveHint": False},
        handler=_cancel_chooser,
    ),
    ToolRecord(
        action="open_tab",
        applies_to="app",
        title="Open a new tab",
        description="Open a new browser tab; answers its window id in openedWindowIds.",
        input_model=OpenTabInput,
        annotations={"destructiveHint": False, "openWorldHint": True},
        handler=_open_tab,
    ),
)

_BY_KEY = {(r.applies_to, r.action): r for r in RECORDS}


def record_for(kind: WindowKind, action: str) -> ToolRecord[Any, Any] | None:
    """The record of `action` on a window of `kind`, if there is one."""
    return _BY_KEY.get((kind, action))


def records_for(kind: WindowKind) -> list[ToolRecord[Any, Any]]:
    """Every record that applies to windows of `kind`, in list order."""
    return [r for r in RECORDS if r.applies_to == kind]
