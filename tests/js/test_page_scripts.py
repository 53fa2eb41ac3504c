"""The agent side's page scripts: each loads and is valid JavaScript, and no Python module embeds one.

Page scripts live in `.js` files (webmcp/js, cdp_bridge/js); Python keeps at most a one-line
expression. The scan below keeps that rule: a string constant of several lines that reads as
JavaScript (`=>` or `function`) in a module of either package fails the test.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from cdp_bridge.js import call
from tests.support.javascript import (
    assert_one_valid_expression,
    needs_node,
    script_names,
    syntax_error,
)
from webmcp.desktop import forms, live_view, mirror, observer_take
from webmcp.js import load
from webmcp.uicontext import locate
from webmcp.view.masking import SECRET_SELECTOR
from webmcp.view.secrets import FIND_SECRETS_JS, IS_SECRET_JS, READ_SECRETS_JS

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = script_names("webmcp.js")


def test_the_package_ships_its_scripts() -> None:
    assert {"observer.js", "get_tools.js", "form_fields.js", "collect_pointing.js", "visibility.js"} <= set(SCRIPTS)
    assert {"is_secret_field.js", "secret_fields.js"} <= set(SCRIPTS)


@needs_node
@pytest.mark.parametrize("name", SCRIPTS)
def test_every_script_loads_and_is_one_valid_expression(name: str) -> None:
    assert_one_valid_expression(load(name))


@needs_node
def test_the_expressions_built_from_the_scripts_are_valid() -> None:
    built = {
        "observer": live_view._OBSERVER_JS,
        "tools": mirror._GET_TOOLS_JS,
        "read secrets": READ_SECRETS_JS,
        "find secrets": FIND_SECRETS_JS,
        "is secret": IS_SECRET_JS,
        "pointing": call(locate._COLLECT_JS, IS_SECRET_JS, SECRET_SELECTOR, 8, 10, 10),
        "form fields": forms._FIELDS_JS,
        "take": f"({observer_take.CHANGES_JS[False]})",
        "take, none allowed": f"({observer_take.CHANGES_JS[True]})",
    }
    assert {name: syntax_error(source) for name, source in built.items()} == dict.fromkeys(built, "")


def _embedded_scripts(path: Path) -> list[int]:
    """Lines where a module of ours holds JavaScript of several lines in a string.

    A string that is a statement of its own (a docstring, or one that documents a constant)
    is prose and never sent to a page.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(part.value for part in node.values if isinstance(part, ast.Constant))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            text = node.value
        else:
            continue
        if ("=>" in text or "function" in text) and node.lineno != node.end_lineno:
            found.append(node.lineno)
    return found


def test_no_python_module_embeds_a_page_script_of_several_lines() -> None:
    modules = sorted((ROOT / "webmcp").rglob("*.py")) + sorted((ROOT / "cdp_bridge").rglob("*.py"))
    assert len(modules) > 20
    embedded = {str(p.relative_to(ROOT)): lines for p in modules if (lines := _embedded_scripts(p))}
    assert embedded == {}
