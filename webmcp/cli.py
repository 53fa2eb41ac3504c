"""`webmcp-bridge`: launch (or attach to) Chromium and serve it over MCP.

    webmcp-bridge [URL ...]                serve MCP on stdio, launching Chromium
    webmcp-bridge --http 127.0.0.1:8765    serve Streamable HTTP at /mcp (bearer token)
    webmcp-bridge --cdp-url http://127.0.0.1:9222   attach to a running browser
    webmcp-bridge --extension              relay through the Chrome extension in extension/
    webmcp-bridge --extension --show-code  print the extension's pairing code and exit
    webmcp-bridge --demo                   the sample site, the bridge and a scripted agent session

Logs go to stderr (stdout belongs to the MCP stdio transport). The browser this command
starts is stopped when the client closes stdio, on Ctrl-C and on SIGTERM.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import signal
import sys
import urllib.parse
from typing import Any

from cdp_bridge.errors import BridgeError
from cdp_bridge.permissions import PERMISSIONS
from cdp_bridge.relay import DEFAULT_PORT as DEFAULT_RELAY_PORT
from cdp_bridge.relay import load_pairing_code, pairing_code_path
from cdp_bridge.spawn import LaunchOptions, Spawned, check_browser_arg, spawn
from cdp_bridge.timeouts import Timeouts
from webmcp import package_version
from webmcp.config import DEFAULT_DOWNLOAD_LIMIT_MB, DEFAULT_DOWNLOAD_TOTAL_MB, BridgeConfig, BrowserConfig
from webmcp.server.early import EarlyAnswers
from webmcp.server.http_guard import HttpGuard, RemoteBindRefused, add_http_guard_arguments, install_log_guards

__all__ = ["build_parser", "launch_options", "main"]

logger = logging.getLogger("webmcp_bridge")


def build_parser() -> argparse.ArgumentParser:
    """The command line, as documented in the README."""
    parser = argparse.ArgumentParser(
        prog="webmcp-bridge",
        description="Serve Chromium's tabs, dialogs and WebMCP page tools as MCP windows.",
    )
    parser.add_argument("urls", nargs="*", metavar="URL", help="pages to open at start")
    parser.add_argument(
        "--headless",
        action="store_true",
        help="run the browser without a window (the default when there is no display)",
    )
    parser.add_argument(
        "--browser",
        metavar="PATH",
        help="browser executable (default: $WEBMCP_BRIDGE_BROWSER, "
        "/usr/bin/chromium, then chromium or google-chrome on PATH)",
    )
    parser.add_argument(
        "--user-data-dir",
        metavar="DIR",
        help="keep the browser profile here (default: a temporary profile removed on exit)",
    )
    parser.add_argument(
        "--browser-arg",
        action="append",
        default=[],
        metavar="ARG",
        type=browser_arg,
        help="a switch for the browser the bridge launches, e.g. --browser-arg=--lang=de or "
        "--browser-arg=--proxy-server=http://proxy:3128 (repeatable; --enable-features and --disable-features are "
        "merged with the bridge's own; its debugging pipe and --user-data-dir cannot be set this way)",
    )
    parser.add_argument(
        "--grant",
        action="append",
        default=[],
        choices=sorted(PERMISSIONS),
        metavar="PERMISSION",
        help="grant a permission to every site: " + ", ".join(sorted(PERMISSIONS)) + " (repeatable); every "
        "other one is denied, and each tab's window says what its page asked for",
    )
    parser.add_argument(
        "--http",
        metavar="HOST:PORT",
        type=host_port,
        help="serve Streamable HTTP at /mcp instead of stdio (e.g. 127.0.0.1:8765 or [::1]:8765; port 0: a "
        "free one, and the URL is printed to stderr)",
    )
    parser.add_argument(
        "--token",
        default=os.environ.get("WEBMCP_BRIDGE_TOKEN"),
        help="bearer token for --http (default: $WEBMCP_BRIDGE_TOKEN, else one is generated and printed to "
        "stderr; prefer the variable: a token on the command line shows in `ps`)",
    )
    add_http_guard_arguments(parser)
    parser.add_argument(
        "--cdp-url",
        metavar="URL",
        type=cdp_url,
        help="attach to a running browser (http://host:port or ws://…) instead of launching one",
    )
    parser.add_argument(
        "--cdp-header",
        action="append",
        default=[],
        metavar="NAME:VALUE",
        help="an HTTP header for --cdp-url, e.g. a browser farm's Authorization (repeatable)",
    )
    parser.add_argument(
        "--cdp-reconnect",
        action="store_true",
        help="when the browser at --cdp-url drops the connection (a farm ending a session), connect "
        "again for a new one instead of exiting: its windows close and the new browser's appear",
    )
    parser.add_argument(
        "--extension",
        action="store_true",
        help="use the person's own Chrome through the extension in extension/: listen on 127.0.0.1 "
        "for it and print the pairing code to enter once in its popup",
    )
    parser.add_argument(
        "--show-code",
        action="store_true",
        help="with --extension: print the pairing code (kept in the state file) to stdout and exit, for hosts "
        "that hide the bridge's stderr",
    )
    parser.add_argument(
        "--extension-port",
        type=int,
        default=DEFAULT_RELAY_PORT,
        metavar="PORT",
        help="port on 127.0.0.1 the extension connects to (default: %(default)s; 0 picks a free one)",
    )
    parser.add_argument(
        "--tool-timeout",
        type=float,
        default=Timeouts().tool_call,
        metavar="SECONDS",
        help="how long a page tool may run before it is cancelled (default: %(default)s)",
    )
    parser.add_argument(
        "--allow-local-schemes",
        action="store_true",
        help="let agents open file:, chrome: and other local URLs (refused by default)",
    )
    parser.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="GLOB",
        help="only pages whose origin matches are opened and shown to agents (repeatable; e.g. "
        "'https://*.example.com'); others show as a window with a notice, without content or tools",
    )
    parser.add_argument(
        "--block-origin",
        action="append",
        default=[],
        metavar="GLOB",
        help="pages whose origin matches are never opened or shown to agents (repeatable; wins over --allow-origin)",
    )
    parser.add_argument(
        "--human-submit",
        action="store_true",
        help="a form that a page tool filled (one without toolautosubmit) can only be submitted by the person "
        "at the browser; agents may still cancel it",
    )
    parser.add_argument(
        "--no-page-actions",
        action="store_true",
        help="tabs offer no window actions (fill, press, hover, submit by what the window shows): agents get only the "
        "tools pages declare and the browser actions",
    )
    parser.add_argument(
        "--upload-dir",
        metavar="DIR",
        help="agents may give a page's file chooser files from this folder only (default: none, so agents "
        "cannot upload; paths outside it, and symlinks that leave it, are refused)",
    )
    parser.add_argument(
        "--download-dir",
        metavar="DIR",
        help="save the pages' downloads here (default: a temporary folder the bridge creates and removes at exit)",
    )
    parser.add_argument(
        "--download-limit",
        type=_megabytes,
        default=DEFAULT_DOWNLOAD_LIMIT_MB,
        metavar="MB",
        help="cancel a download larger than this (default: %(default)s)",
    )
    parser.add_argument(
        "--download-total-limit",
        type=_megabytes,
        default=DEFAULT_DOWNLOAD_TOTAL_MB,
        metavar="MB",
        help="cancel downloads once all of them together pass this (default: %(default)s)",
    )
    parser.add_argument(
        "--snapshot-timeout",
        type=float,
        default=Timeouts().snapshot,
        metavar="SECONDS",
        help="how long reading a page's accessibility tree may take; a write whose expectedVersion cannot be "
        "checked in time is refused with state_unverified (default: %(default)s)",
    )
    parser.add_argument(
        "--log-level",
        default=os.environ.get("WEBMCP_BRIDGE_LOG", "WARNING"),
        type=log_level,
        help="DEBUG, INFO, WARNING (default) or ERROR; logs go to stderr (also $WEBMCP_BRIDGE_LOG)",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help="serve the packaged sample site on 127.0.0.1, start the bridge on it and play a scripted agent "
        "session, printed (needs only this package and a Chromium with WebMCP; --browser picks it)",
    )
    parser.add_argument("--version", action=_VersionAction)
    return parser


class _VersionAction(argparse.Action):
    """`--version`: the installed version, looked up only when asked for (importlib.metadata is slow)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="show program's version number and exit", **kwargs)  # fmt: skip

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        print(f"{parser.prog} {package_version()}")  # to stdout, as argparse's own version action does
        parser.exit()


def host_port(value: str) -> tuple[str, int]:
    """`HOST:PORT` or `[IPv6]:PORT` for --http (port 0: the system chooses, and the bridge says which).

    Raises:
        argparse.ArgumentTypeError: with a sentence that says what is expected.
    """
    host, sep, port = value.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not sep or not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not HOST:PORT; give e.g. 127.0.0.1:8765, localhost:8765 or [::1]:8765"
        )
    return host, int(port)


def cdp_url(value: str) -> str:
    """A browser's DevTools address for --cdp-url: `ws[s]://host[:port]/…` or `http[s]://host[:port]`.

    Raises:
        argparse.ArgumentTypeError: with a sentence that says what is expected.
    """
    parts = urllib.parse.urlsplit(value)
    try:
        port_ok = parts.port is None or parts.port > 0
    except ValueError:  # not a number, or out of range
        port_ok = False
    if parts.scheme in ("ws", "wss", "http", "https") and parts.hostname and port_ok:
        return value
    if not value.strip():  # an unset shell variable: this used to launch a browser instead of attaching
        what = "an empty --cdp-url attaches to nothing (leave it out to launch a browser)"
    else:  # a farm's URL may carry its token in the query string: keep that out of the message
        address, query_mark, _ = value.partition("?")
        what = f"{address + ('?…' if query_mark else '')!r} is not a DevTools URL"
    raise argparse.ArgumentTypeError(
        f"{what}; give the browser's websocket, e.g. ws://127.0.0.1:9222/devtools/browser/ID, "
        "or its HTTP endpoint, e.g. http://127.0.0.1:9222"
    )


def browser_arg(value: str) -> str:
    """A switch for the launched browser (`--browser-arg`).

    Raises:
        argparse.ArgumentTypeError: a value that is not a switch, or one of the bridge's own.
    """
    try:
        return check_browser_arg(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _megabytes(value: str) -> float:
    """A size in MB (decimal), above zero.

    Raises:
        argparse.ArgumentTypeError: for anything else.
    """
    try:
        size = float(value)
    except ValueError:
        size = 0.0
    if not size > 0 or size != size or size == float("inf"):
        raise argparse.ArgumentTypeError(f"{value!r} is not a size in MB; give a number above 0, e.g. 100")
    return size


def log_level(value: str) -> str:
    """A logging level name, any case.

    Raises:
        argparse.ArgumentTypeError: for anything but DEBUG, INFO, WARNING or ERROR.
    """
    level = value.upper()
    if level not in ("DEBUG", "INFO", "WARNING", "ERROR"):
        raise argparse.ArgumentTypeError(f"{value!r} is not a log level; use DEBUG, INFO, WARNING or ERROR")
    return level


def main(argv: list[str] | None = None) -> int:
    """Console entry point; returns the exit status."""
    args = build_parser().parse_args(argv)
    if args.show_code:
        if not args.extension:
            print("webmcp-bridge: --show-code goes with --extension: webmcp-bridge --extension --show-code",
                  file=sys.stderr)  # fmt: skip
            return 2
        # The code alone on stdout (for a script); where it is kept on stderr, for a person.
        print(load_pairing_code())
        print(f"webmcp-bridge: the pairing code is kept in {pairing_code_path()}", file=sys.stderr)
        return 0
    if args.demo:
        from webmcp.demo import play

        return play(browser=args.browser)
    try:
        # The one reading of `args` past this point: the rest of the bridge gets `config`.
        config = BridgeConfig.from_args(args)
    except ValueError as exc:  # a malformed --cdp-header
        print(f"webmcp-bridge: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=config.log_level,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    # Websocket frame dumps would carry page content, form values included, into the log.
    logging.getLogger("websockets").setLevel(max(logging.INFO, logging.getLogger().level))
    # No message body in any log at any level; long or repeated records are cut (issue 10).
    install_log_guards()
    if config.http is not None:
        try:
            warning = HttpGuard.from_config(config.http).check_bind(config.http.host)
        except RemoteBindRefused as exc:
            print(f"webmcp-bridge: {exc}", file=sys.stderr)
            return 2
        if warning is not None:
            print(f"webmcp-bridge: {warning}", file=sys.stderr)
    upload_dir = config.desktop.upload_dir
    if upload_dir is not None and not os.path.isdir(upload_dir):
        print(f"webmcp-bridge: --upload-dir {upload_dir!r} is not a directory", file=sys.stderr)
        return 2
    browser = config.browser
    if browser.extra_args and not browser.launched:
        print("webmcp-bridge: --browser-arg applies to a browser the bridge launches, not to one it attaches to.",
              file=sys.stderr)  # fmt: skip
        return 2
    if browser.extension and (browser.cdp_url or config.start_urls):
        print("webmcp-bridge: --extension takes no --cdp-url or URLs: share tabs from the extension's popup.",
              file=sys.stderr)  # fmt: skip
        return 2
    logger.info("command line read")
    # A stdio client's initialize and first tools/list are answered while the rest starts.
    early = EarlyAnswers.start() if config.http is None else None
    launch: tuple[LaunchOptions, Spawned] | None = None
    try:
        if browser.launched:
            # Started now, before the rest of the bridge is imported: Chromium's start-up (~300 ms)
            # runs beside those imports (~100 ms) instead of after them. Until the bridge's own
            # signal handling is on (webmcp.runner unblocks them), a stop signal waits: raised
            # mid-import it would break an import half done, and end the bridge unclean.
            signal.pthread_sigmask(signal.SIG_BLOCK, (signal.SIGTERM, signal.SIGINT, signal.SIGHUP))
            options = launch_options(browser)
            launch = (options, spawn(options))
        import anyio  # noqa: PLC0415 - after the browser is on its way

        from webmcp.runner import run  # noqa: PLC0415 - the event loop, the connection, the agent side

        _collect_less()
        anyio.run(run, config, launch, early)
    except KeyboardInterrupt:
        return 130
    except (BridgeError, OSError, BaseExceptionGroup) as exc:
        if isinstance(exc, BaseExceptionGroup) and exc.subgroup(KeyboardInterrupt) is not None:
            return 130
        cause = _first_known(exc)
        if cause is None:
            raise
        print(f"webmcp-bridge: {cause}", file=sys.stderr)
        return 1
    finally:
        if launch is not None:
            launch[1].discard()  # a browser the launcher never took over (it stops its own)
    return 0


def _collect_less() -> None:
    """What the imports made is set aside for good: Python's cycle collector never traverses it again
    (an older generation's collection, 1-3 ms within a page-changing call, walked it every time).
    The thresholds stay Python's own: at 20,000 young objects the cycles of each read lived on, and
    the bridge grew by 45 MB over 100 navigations (bench/memory.py)."""
    gc.freeze()


def launch_options(browser: BrowserConfig) -> LaunchOptions:
    """How the command line asks the browser to be launched."""
    return LaunchOptions(
        browser=browser.executable,
        headless=True if browser.headless else None,
        user_data_dir=browser.user_data_dir,
        extra_args=list(browser.extra_args),
    )


def _first_known(exc: BaseException) -> BaseException | None:
    """The BridgeError or OSError inside `exc` (task groups wrap errors in groups)."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _first_known(inner)
            if found is not None:
                return found
        return None
    return exc if isinstance(exc, (BridgeError, OSError)) else None


def _entry() -> Any:  # pragma: no cover - `python -m webmcp.cli`
    return sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    _entry()
