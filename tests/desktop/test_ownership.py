"""A window's state is written by the window's own class, nowhere else (a lint rule, as a test).

Read from the source, so that it holds for code nobody has run yet:
- a window's published state (the `WindowState` fields) is assigned only in the methods of
  the window classes (`Tab`, and the modal windows: `ModalWindow` and its subclasses `JsDialog`,
  `InPageModal`, `PendingForm`, `SignInPrompt`, `FileChooser`);
- a tab and the parts it is made of (every class `Tab.__init__` builds, and every `Part`)
  keep their state private: their only public instance attribute is `op_lock`, and a modal
  window changes after construction only what is private;
- no module assigns another object's private attribute, nor a public attribute of a window.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import webmcp

_ROOT = Path(webmcp.__file__).parent
_WINDOW_FIELDS = {"id", "title", "modal", "owner_id", "version", "summary", "blocks"}
_WINDOW_CLASSES = {
    "desktop/tab.py": {"Tab"},
    "desktop/tab_window.py": {"TabWindow"},
    "desktop/modal_window.py": {"ModalWindow"},
    "desktop/dialogs.py": {"JsDialog", "InPageModal"},
    "desktop/forms.py": {"PendingForm"},
    "desktop/sign_in.py": {"SignInPrompt"},
    "desktop/file_chooser.py": {"FileChooser"},
}
_PUBLIC_BY_DESIGN = {"op_lock"}
# Objects that are not windows but share a field name with one (a ToolResult's `message`, a frame's `key`).
_NOT_WINDOWS = {
    ("desktop/calls.py", "answer"),
    ("desktop/dialogs.py", "answer"),
    ("desktop/effects.py", "answer"),
    ("desktop/live_view.py", "frame"),
}


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(_ROOT.rglob("*.py")):
        yield path.relative_to(_ROOT).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def _stores(node: ast.AST) -> Iterator[ast.Attribute]:
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, ast.AugAssign | ast.AnnAssign):
        targets = [node.target]
    for target in targets:
        for sub in ast.walk(target):
            if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store):
                yield sub


def _in_classes(tree: ast.Module) -> Iterator[tuple[str | None, str | None, ast.AST]]:
    """(class name, method name, node) for every node, with the innermost class and method."""

    def walk(node: ast.AST, cls: str | None, fn: str | None) -> Iterator[tuple[str | None, str | None, ast.AST]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                yield from walk(child, child.name, None)
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                yield from walk(child, cls, child.name if fn is None else fn)
            else:
                yield cls, fn, child
                yield from walk(child, cls, fn)

    yield from walk(tree, None, None)


def _made_by_tab() -> set[str]:
    """The classes `Tab.__init__` builds: its parts and what it composes them with."""
    tree = ast.parse((_ROOT / "desktop/tab.py").read_text(encoding="utf-8"))
    init = next(
        f
        for c in ast.walk(tree)
        if isinstance(c, ast.ClassDef) and c.name == "Tab"
        for f in c.body
        if isinstance(f, ast.FunctionDef) and f.name == "__init__"
    )
    calls = (n.func for n in ast.walk(init) if isinstance(n, ast.Call))
    return {f.id for f in calls if isinstance(f, ast.Name) and f.id[:1].isupper()} - {"set"}


def _parts() -> dict[str, set[str]]:
    """Module → the classes of a tab's parts it defines: `Tab`, what its constructor builds, every `Part`."""
    wanted = _made_by_tab() | {"Tab"}
    found: dict[str, set[str]] = {}
    for module, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and module.startswith("desktop/"):
                bases = {b.id for b in node.bases if isinstance(b, ast.Name)}
                if node.name in wanted or "Part" in bases:
                    found.setdefault(module, set()).add(node.name)
    return found


def _foreign_writes(module: str, tree: ast.Module, public: set[str]) -> list[str]:
    """Assignments to another object's private attribute, or to a window's public attribute."""
    offences = []
    for node in ast.walk(tree):
        for store in _stores(node):
            holder = store.value
            if isinstance(holder, ast.Name) and holder.id in ("self", "cls"):
                continue
            receiver = holder.id if isinstance(holder, ast.Name) else ast.unparse(holder)
            private = store.attr.startswith("_") and not store.attr.startswith("__")
            if private or (store.attr in public and (module, receiver) not in _NOT_WINDOWS):
                offences.append(f"{module}:{store.lineno} {ast.unparse(store)}")
    return offences


def _window_public_attributes() -> set[str]:
    """Public attributes of the window classes: their dataclass fields and what their methods assign."""
    names: set[str] = set()
    for module, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name in _WINDOW_CLASSES.get(module, set()):
                for item in node.body:
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        names.add(item.target.id)
                for sub in ast.walk(node):
                    for store in _stores(sub):
                        if isinstance(store.value, ast.Name) and store.value.id == "self":
                            names.add(store.attr)
    return {n for n in names if not n.startswith("_")} - {"window_kind"}


def test_window_state_is_assigned_only_by_the_window_classes() -> None:
    offences = []
    for module, tree in _modules():
        allowed = _WINDOW_CLASSES.get(module, set())
        for cls, _fn, node in _in_classes(tree):
            for store in _stores(node):
                holder = store.value
                is_window = (
                    isinstance(holder, ast.Attribute) and holder.attr in ("window", "_window", "state", "_state")
                ) or (isinstance(holder, ast.Name) and holder.id in ("window", "state"))
                if is_window and store.attr in _WINDOW_FIELDS and cls not in allowed:
                    offences.append(f"{module}:{store.lineno} {ast.unparse(store)}")
    assert offences == [], "only a window's own class writes its state"


def test_every_part_of_a_tab_is_covered() -> None:
    covered = {name for names in _parts().values() for name in names}
    assert _made_by_tab() <= covered, "every class Tab builds is found and checked"
    assert {"LiveView", "Navigator", "ToolMirror", "ModalStack", "FileChoosers", "SignInWatch"} <= covered
    assert {"PermissionRequests", "DataRequests", "TabDownloads", "BridgeNotices", "TabWindow", "Effects"} <= covered
    assert {"TabLife", "TabCloser", "PageCalls", "WindowActions", "WriteGuard"} <= covered


def test_the_rule_catches_a_part_written_from_outside() -> None:
    hostile = ast.parse("def poke(tab):\n    tab._mirror._tools = {}\n    tab._life._doc_seq += 1\n")
    assert _foreign_writes("desktop/x.py", hostile, set()) == [
        "desktop/x.py:2 tab._mirror._tools",
        "desktop/x.py:3 tab._life._doc_seq",
    ]


def test_a_tab_and_its_parts_keep_their_state_private() -> None:
    parts = _parts()
    offences = []
    for module, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name in parts.get(module, set()):
                for sub in ast.walk(node):
                    for store in _stores(sub):
                        own = isinstance(store.value, ast.Name) and store.value.id == "self"
                        if own and not store.attr.startswith("_") and store.attr not in _PUBLIC_BY_DESIGN:
                            offences.append(f"{module}:{store.lineno} {node.name}.{store.attr}")
    assert offences == []


def test_a_modal_window_changes_only_private_state_after_construction() -> None:
    offences = []
    for module, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name in _WINDOW_CLASSES.get(module, set()) - {"Tab"}:
                for item in node.body:
                    if not isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                        continue
                    for sub in ast.walk(item):
                        for store in _stores(sub):
                            own = isinstance(store.value, ast.Name) and store.value.id == "self"
                            if own and not store.attr.startswith("_"):
                                offences.append(f"{module}:{store.lineno} {node.name}.{store.attr}")
    assert offences == []


def test_no_module_writes_another_objects_private_state_or_a_windows_public_attributes() -> None:
    public = _window_public_attributes()
    assert {"kind", "tool", "repeated", "agent_may_submit", "owner", "op_lock"} <= public, (
        "the rule reads the window classes"
    )
    offences = [o for module, tree in _modules() for o in _foreign_writes(module, tree, public)]
    assert offences == []
