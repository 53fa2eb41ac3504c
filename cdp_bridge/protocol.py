"""Typed shapes of the CDP messages the bridge uses (checked against the protocol's .pdl files).

Only what the bridge reads is typed; `total=False` where the protocol marks a field
optional. Methods are sent as their verbatim names (`"WebMCP.invokeTool"`), and replies
and events arrive as plain dicts: these TypedDicts document and type-check the reads.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

__all__ = [
    "AXNode",
    "AttachedToTarget",
    "FrameInfo",
    "FrameNavigated",
    "JavascriptDialogOpening",
    "RemoteObject",
    "TargetInfo",
    "WebMCPTool",
    "WebMCPToolResponded",
    "WebMCPToolsAdded",
    "WindowBounds",
]


class TargetInfo(TypedDict):
    """Target.TargetInfo."""

    targetId: str
    type: str
    title: str
    url: str
    attached: bool
    openerId: NotRequired[str]
    browserContextId: NotRequired[str]


class AttachedToTarget(TypedDict):
    """Target.attachedToTarget."""

    sessionId: str
    targetInfo: TargetInfo
    waitingForDebugger: bool


class FrameInfo(TypedDict):
    """Page.Frame (the fields the bridge reads)."""

    id: str
    loaderId: str
    url: str
    parentId: NotRequired[str]


class FrameNavigated(TypedDict):
    """Page.frameNavigated; `type` is Navigation or BackForwardCacheRestore."""

    frame: FrameInfo
    type: Literal["Navigation", "BackForwardCacheRestore"]


class JavascriptDialogOpening(TypedDict):
    """Page.javascriptDialogOpening."""

    url: str
    message: str
    type: Literal["alert", "confirm", "prompt", "beforeunload"]
    hasBrowserHandler: bool
    defaultPrompt: NotRequired[str]


class RemoteObject(TypedDict, total=False):
    """Runtime.RemoteObject."""

    type: str
    subtype: str
    className: str
    value: Any
    description: str
    objectId: str


class WebMCPAnnotation(TypedDict, total=False):
    """WebMCP.Annotation."""

    readOnly: bool
    untrustedContent: bool
    autosubmit: bool
    consequential: bool


class WebMCPTool(TypedDict):
    """WebMCP.Tool."""

    name: str
    description: str
    frameId: str
    inputSchema: NotRequired[dict[str, Any]]
    annotations: NotRequired[WebMCPAnnotation]
    backendNodeId: NotRequired[int]


class WebMCPToolsAdded(TypedDict):
    """WebMCP.toolsAdded."""

    tools: list[WebMCPTool]


class WebMCPToolResponded(TypedDict):
    """WebMCP.toolResponded."""

    invocationId: str
    status: Literal["Completed", "Canceled", "Error"]
    output: NotRequired[Any]
    errorText: NotRequired[str]
    exception: NotRequired[RemoteObject]


class AXNode(TypedDict, total=False):
    """Accessibility.AXNode (the fields the view reads)."""

    nodeId: str
    ignored: bool
    role: dict[str, Any]
    name: dict[str, Any]
    value: dict[str, Any]
    properties: list[dict[str, Any]]
    childIds: list[str]
    backendDOMNodeId: int
    parentId: str
    frameId: str


class WindowBounds(TypedDict):
    """Browser.Bounds of a browser window, with the window's id."""

    windowId: int
    left: float
    top: float
    width: float
    height: float
    windowState: str
