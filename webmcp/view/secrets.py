"""Which form fields hold secrets, decided from the element, and their values at the last moment.

A field is secret when any of these holds (case-insensitively, as HTML compares them):
* `<input type=password>`;
* its `autocomplete` has a secret token (`cc-number`, `cc-csc`, `cc-exp*`, `current-password`,
  `new-password`, `one-time-code`), on `<input>` and `<textarea>` alike;
* its `name` or `id` says so (`password`, `pwd`, `passcode`, `pin`, `otp`, `cvc`, `cvv`,
  `cardnumber`, `card_number`, `ssn`, `iban`, …), split into words so that `userPin` and
  `pin_code` count but `shipping` and `spinner` do not;
* its label (`<label>`, `aria-label`, `aria-labelledby`, `placeholder`, `title`) says so,
  which catches a `type=text` field that holds a password;
on text-like inputs, `<textarea>` and editable `role=textbox` elements only.

`is_secret_field` is the rule in Python (for recorded attributes and tests);
`IS_SECRET_JS` is the same rule as a JavaScript function for the page, where values live
(`webmcp/js/is_secret_field.js`), and `READ_SECRETS_JS` the expression that reads the current values with it
(`webmcp.desktop.secret_values` runs it right before a result leaves the bridge).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from webmcp.js import call, load

__all__ = [
    "IS_SECRET_JS",
    "FIND_SECRETS_JS",
    "READ_SECRETS_JS",
    "SECRET_AUTOCOMPLETE",
    "SECRET_SELECTOR",
    "is_secret_field",
]

SECRET_AUTOCOMPLETE = frozenset(
    {
        "cc-number",
        "cc-csc",
        "cc-exp",
        "cc-exp-month",
        "cc-exp-year",
        "current-password",
        "new-password",
        "one-time-code",
    }
)
# Whole words of a name/id/label (after splitting camelCase and punctuation).
_SECRET_WORDS = frozenset(
    {"password", "passwd", "pwd", "pass", "passcode", "pin", "otp", "totp", "cvc", "cvv", "cvv2", "cvc2", "csc"}
    | {"ssn", "iban", "tan", "passphrase", "secret"}
)
# Runs of words glued together: "card_number" and "cardNumber" both read "cardnumber".
_SECRET_JOINED = (
    "password",
    "passwd",
    "passcode",
    "passphrase",
    "cardnumber",
    "cardnum",
    "creditcard",
    "ccnumber",
    "ccnum",
    "securitycode",
    "onetimecode",
    "onetimepassword",
    "verificationcode",
    "socialsecurity",
)
_TEXT_TYPES = frozenset({"", "text", "password", "email", "tel", "number", "search", "url"})
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_NON_WORD = re.compile(r"[^a-z0-9]+")

SECRET_SELECTOR = (
    "input[type=password i], "
    + ", ".join(f'input[autocomplete~="{t}" i], textarea[autocomplete~="{t}" i]' for t in sorted(SECRET_AUTOCOMPLETE))
    + ', input[name*="pass" i], input[id*="pass" i], input[name*="card" i], input[id*="card" i]'
)
"""A CSS superset for DOM queries; `is_secret_field` / `IS_SECRET_JS` decide (labels need script)."""


def _words(text: str) -> list[str]:
    return [w for w in _NON_WORD.split(_CAMEL.sub(r"\1 \2", text).lower()) if w]


def _says_secret(text: str) -> bool:
    words = _words(text)
    if any(w in _SECRET_WORDS for w in words):
        return True
    joined = "".join(words)
    return any(j in joined for j in _SECRET_JOINED)


def is_secret_field(tag: str, attributes: Mapping[str, str], label: str = "") -> bool:
    """Is the element `tag` with `attributes` (and accessible `label`) a secret field?"""
    tag = tag.lower()
    attrs = {k.lower(): str(v) for k, v in attributes.items()}
    if tag == "input":
        kind = attrs.get("type", "").strip().lower()
        if kind == "password":
            return True
        if kind not in _TEXT_TYPES:
            return False
    elif tag != "textarea" and not (
        attrs.get("role", "").strip().lower() == "textbox" and attrs.get("contenteditable", "false").lower() != "false"
    ):
        return False
    if SECRET_AUTOCOMPLETE & set(attrs.get("autocomplete", "").lower().split()):
        return True
    texts = [attrs.get("name", ""), attrs.get("id", ""), label]
    texts += [attrs.get(k, "") for k in ("aria-label", "placeholder", "title")]
    return any(_says_secret(t) for t in texts if t)


IS_SECRET_JS = call(
    load("is_secret_field.js"),
    {
        "autocomplete": sorted(SECRET_AUTOCOMPLETE),
        "words": sorted(_SECRET_WORDS),
        "joined": list(_SECRET_JOINED),
        "textTypes": sorted(_TEXT_TYPES),
    },
)
"""An expression whose value is `function isSecretField(el)`: `is_secret_field` for a live element, in the page."""

READ_SECRETS_JS = call(load("secret_fields.js"), IS_SECRET_JS, "values")
"""An expression that answers the current values of the document's secret fields (open shadow roots too)."""

FIND_SECRETS_JS = call(load("secret_fields.js"), IS_SECRET_JS, "fields")
"""An expression that answers `{elements, values}`: the secret field elements themselves (by
reference, for their backend node ids) and their current values."""
