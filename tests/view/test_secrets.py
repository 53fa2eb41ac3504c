"""The secret-field rule, in Python and in the page's JavaScript."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from webmcp.view.secrets import FIND_SECRETS_JS, IS_SECRET_JS, READ_SECRETS_JS, SECRET_SELECTOR, is_secret_field

# (tag, attributes, label)
SECRET = [
    ("input", {"type": "password"}, ""),
    ("input", {"type": "PASSWORD"}, ""),
    ("input", {"autocomplete": "CC-NUMBER"}, ""),
    ("input", {"autocomplete": "section-pay billing cc-csc"}, ""),
    ("input", {"autocomplete": "cc-exp-month"}, ""),
    ("input", {"autocomplete": "current-password"}, ""),
    ("input", {"autocomplete": "New-Password"}, ""),
    ("textarea", {"autocomplete": "one-time-code"}, ""),
    ("input", {"name": "cardnumber"}, ""),
    ("input", {"name": "card_number"}, ""),
    ("input", {"id": "cardNumber"}, ""),
    ("input", {"name": "cvc"}, ""),
    ("input", {"name": "CVV2"}, ""),
    ("input", {"type": "tel", "name": "pin"}, ""),
    ("input", {"id": "userPin"}, ""),
    ("input", {"name": "otp"}, ""),
    ("input", {"name": "passcode"}, ""),
    ("input", {"name": "pwd"}, ""),
    ("input", {"name": "ssn"}, ""),
    ("input", {"name": "IBAN"}, ""),
    ("input", {"type": "text", "name": "field7"}, "Password"),
    ("input", {"type": "text", "aria-label": "Your PIN"}, ""),
    ("input", {"type": "text", "placeholder": "Security code"}, ""),
    ("div", {"role": "textbox", "contenteditable": "true"}, "One-time code"),
    ("textarea", {"name": "recovery_passphrase"}, ""),
]
NOT_SECRET = [
    ("input", {"type": "text", "name": "username"}, "Username"),
    ("input", {"type": "text", "name": "shipping"}, "Shipping address"),
    ("input", {"type": "text", "id": "spinner"}, ""),
    ("input", {"type": "email", "autocomplete": "email"}, "Email"),
    ("input", {"type": "checkbox", "name": "remember_password"}, "Remember password"),
    ("input", {"type": "submit", "name": "password"}, ""),
    ("input", {"type": "hidden", "name": "pin"}, ""),
    ("textarea", {"name": "message"}, "Message"),
    ("div", {"role": "textbox"}, "Password"),  # not editable: nothing to type or read
    ("a", {"href": "/reset"}, "Forgot password?"),
    ("input", {"type": "text", "name": "opinion"}, "Pinned note"),
    ("input", {"type": "text", "autocomplete": "cc-name"}, "Name on card"),
]


@pytest.mark.parametrize(("tag", "attrs", "label"), SECRET)
def test_secret_fields_are_recognised(tag: str, attrs: dict[str, str], label: str) -> None:
    assert is_secret_field(tag, attrs, label)


@pytest.mark.parametrize(("tag", "attrs", "label"), NOT_SECRET)
def test_ordinary_fields_are_not_secret(tag: str, attrs: dict[str, str], label: str) -> None:
    assert not is_secret_field(tag, attrs, label)


_NODE_HARNESS = """
const isSecretField = %s;
const cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
const out = cases.map(([tag, attrs, label]) => {
  const el = {
    localName: tag, type: (attrs.type || "text").toLowerCase(),
    isContentEditable: (attrs.contenteditable || "false") !== "false",
    getAttribute: (n) => (n in attrs ? attrs[n] : null),
    labels: label ? [{textContent: label}] : [],
    ownerDocument: {getElementById: () => null},
  };
  return isSecretField(el);
});
process.stdout.write(JSON.stringify(out));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the page-side rule")
def test_the_javascript_rule_agrees_with_the_python_rule() -> None:
    cases = SECRET + NOT_SECRET
    reply = subprocess.run(
        ["node", "-e", _NODE_HARNESS % IS_SECRET_JS],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert json.loads(reply.stdout) == [is_secret_field(*c) for c in cases]


# A document of three inputs, one of them in an open shadow root; %s are the two expressions.
_DOCUMENT_HARNESS = """
const input = (attrs, value) => ({
  localName: "input", type: attrs.type || "text", value, isContentEditable: false,
  getAttribute: (n) => (n in attrs ? attrs[n] : null), labels: [], ownerDocument: {getElementById: () => null},
});
const shadow = {querySelectorAll: (s) => (s === "*" ? [] : [input({name: "cvc"}, "123")])};
const host = {shadowRoot: shadow};
globalThis.document = {
  querySelectorAll: (s) => (s === "*" ? [host] : [input({type: "password"}, "hunter2"), input({name: "user"}, "ann")]),
};
const read = %s;
const find = %s;
process.stdout.write(JSON.stringify({read, values: find.values, elements: find.elements.length}));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the page-side scripts")
def test_the_read_and_find_expressions_answer_the_secret_fields_of_the_document() -> None:
    reply = subprocess.run(
        ["node", "-e", _DOCUMENT_HARNESS % (READ_SECRETS_JS, FIND_SECRETS_JS)],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert json.loads(reply.stdout) == {"read": ["hunter2", "123"], "values": ["hunter2", "123"], "elements": 2}


def test_the_selector_is_well_formed() -> None:
    assert 'autocomplete~="cc-number" i' in SECRET_SELECTOR and "textarea[" in SECRET_SELECTOR
