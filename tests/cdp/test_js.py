"""The CDP side's page scripts: each loads and is one valid JavaScript expression; values stay data."""

from __future__ import annotations

import json
import subprocess

import pytest

from cdp_bridge import ax, launcher
from cdp_bridge.js import Expression, call, load
from tests.support.javascript import (
    assert_one_valid_expression,
    needs_node,
    script_names,
    syntax_error,
)

SCRIPTS = script_names("cdp_bridge.js")


def test_the_package_ships_its_scripts() -> None:
    assert "runs.js" in SCRIPTS


@needs_node
@pytest.mark.parametrize("name", SCRIPTS)
def test_every_script_loads_and_is_one_valid_expression(name: str) -> None:
    assert_one_valid_expression(load(name))


@needs_node
def test_the_expressions_built_from_the_scripts_are_valid() -> None:
    for expression in (call(ax._RUNS_JS, 20, 2_000), call(launcher._PROBE, "http://127.0.0.1:1/probe")):
        assert syntax_error(expression) == ""


@needs_node
def test_call_passes_values_as_json_so_a_value_cannot_become_code() -> None:
    hostile = "'); globalThis.pwned = 1; ('\"\u2028</script>"
    expression = call("(text, n, more) => JSON.stringify([text, n, more, typeof globalThis.pwned])", hostile, 3, [1])
    reply = subprocess.run(
        ["node", "-p", expression], capture_output=True, text=True, timeout=30, check=True, encoding="utf-8"
    )
    assert json.loads(reply.stdout) == [hostile, 3, [1], "undefined"]


def test_an_expression_argument_is_inserted_as_the_value_of_another_script() -> None:
    inner = call("(n) => n + 1", 1)
    assert isinstance(inner, Expression)
    assert call("(f) => f", inner, "x") == '((f) => f)(((n) => n + 1)(1), "x")'
