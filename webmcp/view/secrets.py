"""Which form fields hold secrets, decided from the element, and their values at the last moment.

A text-like `<input>`, a `<textarea>` or an editable `role=textbox` element is secret when
any of these holds (case-insensitively, as HTML compares them):

* it is `<input type=password>`;
* the page draws its text as dots: the computed `-webkit-text-security` is not `none`
  (a common way to take an API key in a `type=text` field);
* its `autocomplete` has a secret token (`cc-number`, `cc-csc`, `cc-exp*`, `current-password`,
  `new-password`, `one-time-code`);
* its `name`, `id`, or label (`<label>`, `aria-label`, `aria-labelledby`, `placeholder`, `title`)
  says so in whole words: the text is split into words at anything that is not a letter
  (`_ - .`, spaces, digits) and at camelCase humps, and one word, or two or three words in a
  row written together, is a secret term (`SECRET_TERMS`: `password`, `pin`, `token`,
  `secret`, `api key`, `card number`, …). So `userPin`, `pin_code`, `api_key`, `gemini_api_key`,
  `apiKey`, `access-token` and `cardNumber` count, and `passengers`, `passport`, `compass`,
  `cardholder`, `card_message`, `shipping` and `spinner` do not.

`is_secret_field` is the rule in Python (for recorded attributes and tests);
`IS_SECRET_JS` is the same rule as a JavaScript function for the page, where values and
styles live (`webmcp/js/is_secret_field.js`), and `READ_SECRETS_JS` the expression that reads
the current values with it (`webmcp.desktop.secret_values` runs it right before an answer
leaves the bridge). The rule is on the read path: strings first, the computed style last.
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
    "SECRET_TERMS",
    "is_secret_field",
    "says_secret",
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
SECRET_TERMS = frozenset(
    # one word
    {"password", "passwd", "pwd", "pass", "passcode", "passphrase", "pin", "otp", "totp", "hotp", "mfa"}
    | {"cvc", "cvv", "csc", "ssn", "iban", "tan", "secret", "token", "apikey", "credential", "credentials"}
    # words in a row, written together: "card_number", "cardNumber" and "cardnumber" all read "cardnumber"
    | {"cardnumber", "cardnum", "creditcard", "ccnumber", "ccnum", "cardcode", "cardcvc", "cardcvv"}
    | {"securitycode", "onetimecode", "onetimepassword", "verificationcode", "socialsecurity"}
    | {"accesskey", "secretkey", "privatekey", "signingkey", "clientkey", "authkey", "licensekey"}
    | {"newpassword", "oldpassword", "currentpassword", "confirmpassword", "userpassword", "passwordconfirm"}
)
"""The words (or runs of two or three words, written together) that make a field secret."""
_TERM_RUN = 3
_TEXT_TYPES = frozenset({"", "text", "password", "email", "tel", "number", "search", "url"})
_CAMEL = re.compile(r"([a-z])([A-Z])|([A-Z])([A-Z][a-z])")
_NON_WORD = re.compile(r"[^a-z]+")

SECRET_SELECTOR = "input[type=password i], " + ", ".join(
    f'input[autocomplete~="{t}" i], textarea[autocomplete~="{t}" i]' for t in sorted(SECRET_AUTOCOMPLETE)
)
"""The fields a CSS selector alone can call secret (type and autocomplete), for a plain DOM query.

Every field it matches is secret; `is_secret_field` / `IS_SECRET_JS` find the rest (words of
names and labels, the rendered text security), which a selector cannot decide.
"""


def _words(text: str) -> list[str]:
    return [w for w in _NON_WORD.split(_CAMEL.sub(r"\1\3 \2\4", text).lower()) if w]


def says_secret(text: str) -> bool:
    """Does `text` (a name, id or label) hold a secret term in whole words (`SECRET_TERMS`)?"""
    words = _words(text)
    for start in range(len(words)):
        joined = ""
        for word in words[start : start + _TERM_RUN]:
            joined += word
            if joined in SECRET_TERMS:
                return True
    return False


def is_secret_field(tag: str, attributes: Mapping[str, str], label: str = "", text_security: str = "none") -> bool:
    """Is the element `tag` with `attributes`, accessible `label` and computed
    `-webkit-text-security` a secret field?"""
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
    if any(says_secret(t) for t in texts if t):
        return True
    return text_security.strip().lower() not in ("", "none")


IS_SECRET_JS = call(
    load("is_secret_field.js"),
    {
        "autocomplete": sorted(SECRET_AUTOCOMPLETE),
        "terms": sorted(SECRET_TERMS),
        "run": _TERM_RUN,
        "textTypes": sorted(_TEXT_TYPES),
    },
)
"""An expression whose value is `function isSecretField(el)`: `is_secret_field` for a live element, in the page."""

READ_SECRETS_JS = call(load("secret_fields.js"), IS_SECRET_JS, "values")
"""An expression that answers the current values of the document's secret fields (open shadow roots too)."""

FIND_SECRETS_JS = call(load("secret_fields.js"), IS_SECRET_JS, "fields")
"""An expression that answers `{elements, values}`: the secret field elements themselves (by
reference, for their backend node ids) and their current values."""
