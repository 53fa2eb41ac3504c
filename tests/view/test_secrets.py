"""The secret-field rule, in Python and in the page's JavaScript."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest

from webmcp.view.secrets import FIND_SECRETS_JS, IS_SECRET_JS, READ_SECRETS_JS, SECRET_SELECTOR, is_secret_field

# (tag, attributes, label[, computed -webkit-text-security])
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
    # issue 19 item 5: API keys and tokens by whole words of name and id, and dots drawn by CSS
    ("input", {"type": "text", "name": "api_key"}, ""),
    ("input", {"type": "text", "name": "token"}, ""),
    ("input", {"type": "text", "name": "secret"}, ""),
    ("input", {"type": "text", "name": "gemini_api_key"}, ""),
    ("input", {"type": "text", "id": "geminiAPIKey"}, ""),
    ("input", {"type": "text", "id": "apiKey"}, ""),
    ("input", {"type": "text", "name": "x-api-key"}, ""),
    ("input", {"type": "text", "name": "openai.apikey"}, ""),
    ("input", {"type": "text", "name": "access_token"}, ""),
    ("input", {"type": "text", "name": "client-secret"}, ""),
    ("input", {"type": "text", "name": "private_key"}, ""),
    ("input", {"type": "text", "id": "newPassword"}, ""),
    ("input", {"type": "text", "name": "password2"}, ""),
    ("input", {"type": "text", "name": "pin1"}, ""),
    ("input", {"type": "text", "name": "field_a"}, "", "disc"),
    ("textarea", {"name": "notes"}, "", "circle"),
    ("div", {"role": "textbox", "contenteditable": "true"}, "", "square"),
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
    # issue 19 item 5: words that merely contain a secret word are not secret
    ("input", {"type": "number", "name": "passengers"}, "Passengers"),
    ("input", {"type": "text", "name": "passport"}, "Passport number"),
    ("input", {"type": "text", "name": "passport_number"}, ""),
    ("input", {"type": "text", "name": "cardholder"}, "Cardholder"),
    ("input", {"type": "text", "id": "cardholderName"}, ""),
    ("textarea", {"name": "card_message"}, "Card message"),
    ("input", {"type": "text", "name": "compass"}, "Compass heading"),
    ("input", {"type": "text", "name": "keyword"}, "Keyword"),
    ("input", {"type": "text", "name": "monkey"}, ""),
    ("input", {"type": "text", "name": "tokenizer"}, "Tokenizer"),
    ("input", {"type": "text", "name": "secretary"}, "Secretary"),
    ("input", {"type": "text", "name": "bypass"}, ""),
    ("input", {"type": "text", "name": "passage"}, "Passage"),
    ("input", {"type": "text", "name": "pinyin"}, "Pinyin"),
    ("input", {"type": "text", "name": "api_version"}, "API version"),
    ("input", {"type": "text", "name": "key_name"}, "Name"),
    ("input", {"type": "text", "name": "field_b"}, "", "none"),
]


@pytest.mark.parametrize("case", SECRET, ids=repr)
def test_secret_fields_are_recognised(case: tuple[Any, ...]) -> None:
    assert is_secret_field(*case)


@pytest.mark.parametrize("case", NOT_SECRET, ids=repr)
def test_ordinary_fields_are_not_secret(case: tuple[Any, ...]) -> None:
    assert not is_secret_field(*case)


def test_the_tables_hold_at_least_fifteen_of_each_kind_beyond_the_old_ones() -> None:
    assert len(SECRET) >= 40 and len(NOT_SECRET) >= 28


_NODE_HARNESS = """
const isSecretField = %s;
const cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
const out = cases.map(([tag, attrs, label, security]) => {
  const el = {
    localName: tag, type: (attrs.type || "text").toLowerCase(),
    isContentEditable: (attrs.contenteditable || "false") !== "false",
    getAttribute: (n) => (n in attrs ? attrs[n] : null),
    labels: label ? [{textContent: label}] : [],
    ownerDocument: {getElementById: () => null, defaultView: {getComputedStyle: () => ({
      getPropertyValue: (n) => (n === "-webkit-text-security" ? security || "none" : ""),
    })}},
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
const shadow = {querySelectorAll: () => [input({name: "cvc"}, "123")]};
const host = {shadowRoot: shadow};
const walker = (elements) => { let i = 0; return {nextNode: () => elements[i++] || null}; };
globalThis.NodeFilter = {SHOW_ELEMENT: 1};
globalThis.document = {
  querySelectorAll: () => [input({type: "password"}, "hunter2"), input({name: "user"}, "ann")],
  createTreeWalker: (root, show) => walker(show === 1 && root === document ? [host] : []),
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


def test_the_selector_decides_by_type_and_autocomplete_only_never_by_a_substring_of_a_name() -> None:
    # `input[name*="pass"]` masked passengers, passport and compass (issue 19 item 5).
    assert "*=" not in SECRET_SELECTOR and "name" not in SECRET_SELECTOR and "id*" not in SECRET_SELECTOR
