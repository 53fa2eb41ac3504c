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
`IS_SECRET_JS` is the same rule as a JavaScript function for the page, where values live,
and `READ_SECRETS_JS` the expression that reads the current values with it
(`webmcp.desktop.secret_values` runs it right before a result leaves the bridge).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

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


_IS_SECRET_TEMPLATE = """function isSecretField(el) {
  const AUTO = new Set(@AUTO@);
  const WORDS = new Set(@WORDS@);
  const JOINED = @JOINED@;
  const TEXT = new Set(@TEXT@);
  const words = (s) => String(s || "").replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase()
    .split(/[^a-z0-9]+/).filter(Boolean);
  const says = (s) => { const w = words(s); if (w.some((x) => WORDS.has(x))) return true;
    const j = w.join(""); return JOINED.some((x) => j.includes(x)); };
  const attr = (n) => (el.getAttribute && el.getAttribute(n)) || "";
  const tag = String(el.localName || "").toLowerCase();
  if (tag === "input") {
    const kind = attr("type").trim().toLowerCase();
    if (kind === "password" || el.type === "password") return true;
    if (!TEXT.has(kind)) return false;
  } else if (tag !== "textarea" && !(attr("role").trim().toLowerCase() === "textbox" && el.isContentEditable)) {
    return false;
  }
  if (attr("autocomplete").toLowerCase().split(/\\s+/).some((t) => AUTO.has(t))) return true;
  const texts = [attr("name"), attr("id"), attr("aria-label"), attr("placeholder"), attr("title")];
  for (const l of el.labels || []) texts.push(l.textContent);
  for (const id of attr("aria-labelledby").split(/\\s+/).filter(Boolean)) {
    const ref = el.ownerDocument.getElementById(id); if (ref) texts.push(ref.textContent);
  }
  return texts.some(says);
}"""
IS_SECRET_JS = (
    _IS_SECRET_TEMPLATE.replace("@AUTO@", json.dumps(sorted(SECRET_AUTOCOMPLETE)))
    .replace("@WORDS@", json.dumps(sorted(_SECRET_WORDS)))
    .replace("@JOINED@", json.dumps(list(_SECRET_JOINED)))
    .replace("@TEXT@", json.dumps(sorted(_TEXT_TYPES)))
)
"""`function isSecretField(el)`: `is_secret_field` for a live element, in the page."""

_FIND_SECRETS_JS = """
  const found = [];
  const visit = (root) => {
    for (const el of root.querySelectorAll("input, textarea, [role=textbox]")) if (isSecretField(el)) found.push(el);
    for (const host of root.querySelectorAll("*")) if (host.shadowRoot) visit(host.shadowRoot);
  };
  visit(document);
  const valueOf = (el) => (el.localName === "input" || el.localName === "textarea" ? el.value : el.textContent);
"""

READ_SECRETS_JS = (
    "(() => { const isSecretField = "
    + IS_SECRET_JS
    + ";"
    + _FIND_SECRETS_JS
    + """  return found.map(valueOf).filter((v) => typeof v === "string" && v);
})()"""
)
"""An expression that answers the current values of the document's secret fields (open shadow roots too)."""

FIND_SECRETS_JS = (
    "(() => { const isSecretField = "
    + IS_SECRET_JS
    + ";"
    + _FIND_SECRETS_JS
    + """  return {elements: found, values: found.map(valueOf).filter((v) => typeof v === "string" && v)};
})()"""
)
"""An expression that answers `{elements, values}`: the secret field elements themselves (by
reference, for their backend node ids) and their current values."""
