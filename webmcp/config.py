"""What the command line asked for, as one frozen value built once and handed down.

webmcp.cli reads argparse's namespace into a `BridgeConfig` (`BridgeConfig.from_args`) and
nothing past it sees the namespace: each layer takes the part it needs. The launch and the
attach (`BrowserConfig`) go to webmcp.cli and webmcp.runner, the desktop's rules
(`DesktopConfig`) to webmcp.serve, which builds the `Desktop` with them, and the HTTP
transport's (`HttpConfig`) to webmcp.server.http_guard. No setting changes after start-up.

webmcp.cli builds it before it starts the browser, so this module imports only the standard
library and `cdp_bridge.timeouts` (both loaded by then): nothing here may slow that path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from cdp_bridge.timeouts import Timeouts

if TYPE_CHECKING:
    import argparse

__all__ = [
    "DEFAULT_DOWNLOAD_LIMIT_MB",
    "DEFAULT_DOWNLOAD_TOTAL_MB",
    "BridgeConfig",
    "BrowserConfig",
    "DesktopConfig",
    "HttpConfig",
    "parse_cdp_headers",
]

DEFAULT_DOWNLOAD_LIMIT_MB = 100.0
DEFAULT_DOWNLOAD_TOTAL_MB = 500.0


@dataclass(frozen=True)
class BrowserConfig:
    """The browser the bridge drives: one it launches, or one it attaches to."""

    executable: str | None = None
    """`--browser` (None: the launcher looks for one)."""
    headless: bool = False
    """`--headless` (False: headless only when there is no display)."""
    user_data_dir: str | None = None
    """`--user-data-dir` (None: a temporary profile removed on exit)."""
    extra_args: tuple[str, ...] = ()
    """`--browser-arg`, each checked by cdp_bridge.spawn."""
    cdp_url: str | None = None
    """`--cdp-url`: attach to this browser instead of launching one."""
    cdp_headers: tuple[tuple[str, str], ...] = ()
    """`--cdp-header` as (name, value) pairs, for the `--cdp-url` connection."""
    cdp_reconnect: bool = False
    """`--cdp-reconnect`: connect again when the browser at `cdp_url` drops the connection."""
    extension: bool = False
    """`--extension`: drive the person's Chrome through the extension's relay."""
    extension_port: int = 0
    """`--extension-port` on 127.0.0.1 (0 picks a free one; the command line's default is the relay's)."""

    @property
    def launched(self) -> bool:
        """True when the bridge launches the browser (no `--cdp-url`, no `--extension`)."""
        return not (self.cdp_url or self.extension)

    def headers(self) -> dict[str, str]:
        """`cdp_headers` as the dict a connection sends."""
        return dict(self.cdp_headers)


@dataclass(frozen=True)
class DesktopConfig:
    """The desktop's rules: what agents may open, submit and upload, and where downloads go.

    The defaults are the command line's without options.
    """

    human_submit: bool = False
    """`--human-submit`: only the person at the browser may submit a waiting form."""
    page_actions: bool = True
    """False with `--no-page-actions`: tabs offer no window actions."""
    upload_dir: str | None = None
    """`--upload-dir` (None: agents cannot upload)."""
    allow_local_schemes: bool = False
    """`--allow-local-schemes`: agents may open file:, chrome: and other local URLs."""
    allow_origins: tuple[str, ...] = ()
    """`--allow-origin` globs (none: every origin not blocked)."""
    block_origins: tuple[str, ...] = ()
    """`--block-origin` globs."""
    grants: frozenset[str] = frozenset()
    """`--grant`: the permissions granted to every site; every other one is denied."""
    download_dir: str | None = None
    """`--download-dir` (None: a temporary folder removed at exit)."""
    download_limit_mb: float = DEFAULT_DOWNLOAD_LIMIT_MB
    """`--download-limit`, in MB: a larger download is cancelled."""
    download_total_limit_mb: float = DEFAULT_DOWNLOAD_TOTAL_MB
    """`--download-total-limit`, in MB: downloads are cancelled once all of them together pass it."""


@dataclass(frozen=True)
class HttpConfig:
    """`--http` and its guards (webmcp.server.http_guard)."""

    host: str
    port: int
    token: str | None = None
    """`--token` or $WEBMCP_BRIDGE_TOKEN (None: one is generated and printed)."""
    allow_remote: bool = False
    """`--allow-remote`: a non-loopback `host` is allowed."""
    allow_hosts: tuple[str, ...] = ()
    """`--allow-host`: more Host/Origin names accepted."""


@dataclass(frozen=True)
class BridgeConfig:
    """Every setting of one `webmcp-bridge` run (its modes, `--demo` and `--show-code`, stay in webmcp.cli)."""

    browser: BrowserConfig
    desktop: DesktopConfig
    http: HttpConfig | None
    """None: MCP is served on stdio."""
    timeouts: Timeouts
    """The defaults, with `--tool-timeout` and `--snapshot-timeout`."""
    start_urls: tuple[str, ...] = ()
    """The pages to open at start, in order."""
    log_level: str = "WARNING"

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> BridgeConfig:
        """The configuration webmcp.cli's parser read into `args` (the one place that reads it).

        Raises:
            ValueError: a `--cdp-header` that is not NAME:VALUE.
        """
        browser = BrowserConfig(
            executable=args.browser,
            headless=args.headless,
            user_data_dir=args.user_data_dir,
            extra_args=tuple(args.browser_arg),
            cdp_url=args.cdp_url,
            cdp_headers=tuple(parse_cdp_headers(args.cdp_header).items()),
            cdp_reconnect=args.cdp_reconnect,
            extension=args.extension,
            extension_port=args.extension_port,
        )
        desktop = DesktopConfig(
            human_submit=args.human_submit,
            page_actions=not args.no_page_actions,
            upload_dir=args.upload_dir,
            allow_local_schemes=args.allow_local_schemes,
            allow_origins=tuple(args.allow_origin),
            block_origins=tuple(args.block_origin),
            grants=frozenset(args.grant),
            download_dir=args.download_dir,
            download_limit_mb=args.download_limit,
            download_total_limit_mb=args.download_total_limit,
        )
        http = None
        if args.http:
            host, port = args.http
            http = HttpConfig(
                host=host,
                port=port,
                token=args.token or None,
                allow_remote=args.allow_remote,
                allow_hosts=tuple(args.allow_host or ()),
            )
        return cls(
            browser=browser,
            desktop=desktop,
            http=http,
            timeouts=Timeouts(tool_call=args.tool_timeout, snapshot=args.snapshot_timeout),
            start_urls=tuple(args.urls),
            log_level=args.log_level,
        )


def parse_cdp_headers(values: list[str]) -> dict[str, str]:
    """`--cdp-header NAME:VALUE` options as a dict.

    Raises:
        ValueError: one is not NAME:VALUE.
    """
    headers: dict[str, str] = {}
    for value in values:
        name, sep, content = value.partition(":")
        if not sep or not name.strip():
            raise ValueError(f"--cdp-header wants NAME:VALUE, not {value!r}")
        headers[name.strip()] = content.strip()
    return headers
