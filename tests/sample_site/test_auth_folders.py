"""The sample site's staff folders answer as real servers do: Basic and RFC 7616 Digest (MD5, qop=auth).

Plain HTTP against a fresh site per test; Python's own Digest client computes the responses, so
the server is checked against an implementation other than Chromium's.
"""

from __future__ import annotations

import hashlib
import re
import urllib.error
import urllib.request

import pytest

from sample_site.auth import STAFF_PASSWORD, STAFF_REALM, STAFF_USER

pytestmark = pytest.mark.timeout(30)


def _challenge(url: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=10) as response:
            return response.status, ""
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("WWW-Authenticate", "")


def _md5(text: str) -> str:
    return hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()


def _params(header: str) -> dict[str, str]:
    return dict(re.findall(r'(\w+)="?([^",]*)"?', header.partition(" ")[2]))


def test_every_digest_challenge_has_a_fresh_nonce_and_names_the_realm_and_qop(site: str) -> None:
    first, second = (_challenge(site + "/private-digest/") for _ in range(2))
    assert first[0] == second[0] == 401
    assert first[1].startswith("Digest ") and f'realm="{STAFF_REALM}"' in first[1] and 'qop="auth"' in first[1]
    assert _params(first[1])["nonce"] != _params(second[1])["nonce"]


@pytest.mark.parametrize(("password", "status"), [(STAFF_PASSWORD, 200), ("not-the-password", 401)])
def test_pythons_digest_client_signs_in_with_the_staff_account_only(site: str, password: str, status: int) -> None:
    manager = urllib.request.HTTPPasswordMgrWithDefaultRealm()
    manager.add_password(None, site, STAFF_USER, password)
    opener = urllib.request.build_opener(urllib.request.HTTPDigestAuthHandler(manager))
    try:
        with opener.open(site + "/private-digest/", timeout=10) as response:
            got, body = response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        got, body = exc.code, ""
    assert got == status
    assert ("Signed in as staff (Digest)" in body) == (status == 200)


def test_a_digest_with_a_nonce_the_server_never_issued_or_for_another_address_is_refused(site: str) -> None:
    nonce = _params(_challenge(site + "/private-digest/")[1])["nonce"]
    opaque = _params(_challenge(site + "/private-digest/")[1])["opaque"]

    def header(nonce: str, uri: str) -> dict[str, str]:
        ha1 = _md5(f"{STAFF_USER}:{STAFF_REALM}:{STAFF_PASSWORD}")
        response = _md5(f"{ha1}:{nonce}:00000001:abc:auth:{_md5('GET:' + uri)}")
        value = (
            f'Digest username="{STAFF_USER}", realm="{STAFF_REALM}", nonce="{nonce}", uri="{uri}", qop=auth, '
            f'nc=00000001, cnonce="abc", response="{response}", opaque="{opaque}", algorithm=MD5'
        )
        return {"Authorization": value}

    assert _challenge(site + "/private-digest/", header(nonce, "/private-digest/"))[0] == 200
    assert _challenge(site + "/private-digest/", header("0" * 32, "/private-digest/"))[0] == 401
    assert _challenge(site + "/private-digest/", header(nonce, "/private-digest/other"))[0] == 401
    # The Basic folder does not take a Digest answer.
    assert _challenge(site + "/private/", header(nonce, "/private/"))[0] == 401
