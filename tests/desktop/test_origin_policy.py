"""Which URLs the agent may open: local schemes, never-schemes, and origin globs."""

from __future__ import annotations

import pytest

from webmcp.desktop.origin_policy import OriginPolicy

DEFAULT = OriginPolicy()


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "FILE:///etc/passwd",
        "  file:///root/.ssh/id_rsa",
        "file://localhost/etc/passwd",
        "chrome://settings",
        "chrome-extension://abcdef/popup.html",
        "chrome-untrusted://terminal/",
        "devtools://devtools/bundled/inspector.html",
        "view-source:http://127.0.0.1/",
        "filesystem:http://127.0.0.1/temporary/x",
        "blob:http://127.0.0.1/uuid",
        "about:settings",
    ],
)
def test_local_schemes_are_refused_by_default_and_the_reason_names_the_switch(url: str) -> None:
    decision = DEFAULT.check(url)
    assert not decision.allowed
    assert "--allow-local-schemes" in decision.reason


@pytest.mark.parametrize("url", ["file:///etc/hostname", "chrome://version", "view-source:https://a.example/"])
def test_the_switch_allows_local_schemes(url: str) -> None:
    assert OriginPolicy(allow_local=True).check(url).allowed


@pytest.mark.parametrize(
    "url", ["javascript:alert(1)", "JaVaScRiPt:fetch('/')", "data:text/html,<script>1</script>", "vbscript:x"]
)
def test_script_and_data_urls_are_never_opened_even_with_the_switch(url: str) -> None:
    assert not OriginPolicy(allow_local=True).check(url).allowed
    assert "never" in OriginPolicy(allow_local=True).check(url).reason


@pytest.mark.parametrize("url", ["", "   ", "ftp://x.example/", "mailto:a@b", "//no-scheme", "http://", "x" * 9000])
def test_empty_unknown_and_malformed_urls_are_refused_with_a_reason(url: str) -> None:
    decision = DEFAULT.check(url)
    assert not decision.allowed and decision.reason


def test_web_urls_and_about_blank_are_allowed_by_default() -> None:
    assert DEFAULT.check("about:blank").allowed
    decision = DEFAULT.check("http://127.0.0.1:8080/login.html?next=/")
    assert decision.allowed and decision.origin == "http://127.0.0.1:8080"
    assert DEFAULT.check("https://user:pw@Shop.Example/").origin == "https://shop.example"


def test_block_globs_refuse_matching_origins_and_win_over_allow() -> None:
    policy = OriginPolicy(allow=["*.example.com"], block=["https://ads.example.com", "*://*.tracker.*"])
    assert policy.check("https://www.example.com/").allowed
    blocked = policy.check("https://ads.example.com/x")
    assert not blocked.allowed and "--block-origin" in blocked.reason
    assert not policy.check("http://a.tracker.net/").allowed


def test_allow_globs_make_everything_else_refused() -> None:
    policy = OriginPolicy(allow=["http://127.0.0.1:*", "https://docs.example"])
    assert policy.check("http://127.0.0.1:5000/").allowed
    assert policy.check("https://docs.example/a").allowed
    refused = policy.check("https://evil.example/")
    assert not refused.allowed and "--allow-origin" in refused.reason


def test_a_pattern_without_port_matches_any_port_and_without_scheme_any_scheme() -> None:
    policy = OriginPolicy(block=["127.0.0.1"])
    assert not policy.check("http://127.0.0.1:8123/").allowed
    assert not policy.check("https://127.0.0.1/").allowed
    assert policy.check("http://127.0.0.2/").allowed


def test_a_userinfo_trick_does_not_fool_the_origin() -> None:
    policy = OriginPolicy(allow=["https://bank.example"])
    assert not policy.check("https://bank.example@evil.example/").allowed
