"""Names for the icon-only controls a page left nameless, from what hints at them. Pure.

A `<button class="icon reply">` with no text, label or title has no accessible name, and a
`<span class="star" onclick>` is an empty generic the tree keeps only for its click handler: a
person still tells them apart by their picture. A tooltip tied to it (`aria-describedby`) names
it; the AX tree has no class names or image files, so `desktop/nameless.py` asks the page for
those of the others alone (`DOM.describeNode`), and `guess_name` makes a name of them: its
title, else the words of its class, else of its image's file name. The node gets that name
and the `GUESSED` property, so the window shows it as "reply (guessed)" and `press` takes "reply".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .nodes import GUESSED, Node, name_of, prop, role_of
from .walk_roles import FIELD_ROLES, PICTURE_ROLES

__all__ = ["MAX_NAMELESS", "give_name", "guess_name", "nameless_nodes", "seen_as_one_thing"]

MAX_NAMELESS = 200
"""Nodes asked about in one read, at most (the first in the page's order). One past it stays nameless,
so not shown: at 40, a feed's posts after the tenth lost their reply, like and share icons (MiniWoB's
social-media-all); 56 icons cost a navigate 8 ms more than 40."""
_ICON_ROLES = frozenset({"button", "link", "generic"}) | PICTURE_ROLES
SEEN_PX = 4
"""CSS px a nameless control's box takes both ways, at least, for a person to see it at all."""
ICON_PX = 256
"""CSS px an empty clickable element takes both ways, at most, to be an icon: a larger one is an ad
slot, a mask over the page or a blank box (articles hold dozens, "adslot", "scrim", "bigboy")."""
_WORD = re.compile(r"[A-Za-z]+")
# Words a class or file name holds that name no picture: icon sets, sizes, states, layout.
_NOISE = frozenset(
    {
        "icon", "icons", "ico", "btn", "button", "fa", "fas", "far", "fab", "fal", "glyphicon", "material",
        "symbols", "outlined", "rounded", "sharp", "mdi", "bi", "ion", "ui", "svg", "img", "image", "png",
        "jpg", "jpeg", "gif", "webp", "action", "actions", "small", "large", "sm", "lg", "xs", "md", "xl",
        "js", "is", "has", "active", "disabled", "pull", "left", "right", "clickable", "link", "item",
        "inline", "block", "flex", "hidden", "visible", "primary", "secondary", "default", "white", "black",
        "toolbar", "control", "ctrl", "the", "and", "static", "assets", "images", "icn", "sprite",
        "danger", "success", "warning", "info", "light", "dark", "outline", "solid", "regular",
    }
)  # fmt: skip


def nameless_nodes(
    nodes: Sequence[Node], parents: Mapping[str, Node] | None = None, most: int = MAX_NAMELESS
) -> list[Node]:
    """The icon-only controls among `nodes` with no name: buttons and links, and empty elements the
    tree keeps only because they take clicks (at most `most`). `parents`: the frame's nodes by id
    (made from `nodes` when needed, if not given), to leave out the inner box of a text field."""
    found: list[Node] = []
    for node in nodes:
        if node.get("ignored") or "backendDOMNodeId" not in node:
            continue
        role = role_of(node)
        if role not in _ICON_ROLES or name_of(node):  # the role first: this runs on every node of a read
            continue
        if role in PICTURE_ROLES and node.get("childIds"):
            continue  # a picture with parts (an SVG's shapes) is not one icon
        if role == "generic":
            if node.get("childIds") or prop(node, "editable"):
                continue
            if parents is None:
                parents = {str(n["nodeId"]): n for n in nodes}
            parent = parents.get(str(node.get("parentId", "")))
            if parent is None or role_of(parent) in FIELD_ROLES:
                continue
        found.append(node)
        if len(found) >= most:
            break
    return found


def seen_as_one_thing(node: Node, box: Mapping[str, Any] | None) -> bool:
    """Whether a person sees the nameless control `node` as one thing to press, by its box as
    `DOM.getBoxModel` answers it (`{"model": {"width", "height", ...}}`; None: it has no box).

    Under `SEEN_PX` either way it shows nothing (an ad slot that stayed empty, a zero-width
    focusable span); an empty `generic`, kept in the tree only because it takes clicks, is an icon
    up to `ICON_PX` (buttons, links and pictures of any size are what their role says).
    """
    model = (box or {}).get("model")
    if not isinstance(model, Mapping):
        return False
    width, height = float(model.get("width") or 0), float(model.get("height") or 0)
    if min(width, height) < SEEN_PX:
        return False
    return role_of(node) != "generic" or max(width, height) <= ICON_PX


_GENERATED = re.compile(r"^(?:css|jsx|sc|svelte|emotion)-[\w-]+$")
"""A class a CSS-in-JS tool made up ("css-oylsik", "jsx-2920405963"): its words name nothing."""


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text) if len(w) > 2 and w.lower() not in _NOISE]


def _class_words(classes: str) -> list[str]:
    return _words(" ".join(c for c in classes.split() if not _GENERATED.match(c)))


def _file_words(address: str) -> list[str]:
    """The words of a file's name in `address`, its query and extension aside ("/2019/11/ps4pad.jpg?width=640")."""
    return _words(address.split("?", 1)[0].split("#", 1)[0].rsplit("/", 1)[-1].rsplit(".", 1)[0])


def guess_name(described: Mapping[str, Any]) -> str:
    """A name for a node as `DOM.describeNode {depth: 1}` answers it (`{"node": {...}}`): its title,
    else the first two words of its class, else of its id, else of its (or its child's) image file
    name; "" when none says anything."""
    node = described.get("node", {})
    attributes = _attributes(node)
    if title := " ".join(attributes.get("title", "").split()):
        return title
    if (words := _class_words(attributes.get("class", ""))) or (words := _words(attributes.get("id", ""))):
        return " ".join(words[:2])
    if words := _file_words(attributes.get("src", "")):
        return " ".join(words[:2])
    for child in node.get("children", ()) or ():
        child_attributes = _attributes(child)
        if words := _file_words(child_attributes.get("src", "") or child_attributes.get("href", "")):
            return " ".join(words[:2])
        if words := _class_words(child_attributes.get("class", "")):
            return " ".join(words[:2])
    return ""


def _attributes(node: Mapping[str, Any]) -> dict[str, str]:
    flat: Sequence[str] = node.get("attributes", ()) or ()
    return {str(flat[i]): str(flat[i + 1]) for i in range(0, len(flat) - 1, 2)}


def give_name(node: Node, name: str) -> None:
    """Name `node` (a dict the read made, new in this read) `name`, marked as the bridge's guess."""
    if not name or name_of(node):
        return
    assert isinstance(node, dict)
    node["name"] = {"type": "computedString", "value": name}
    node["properties"] = [*node.get("properties", ()), {"name": GUESSED, "value": {"type": "boolean", "value": True}}]
