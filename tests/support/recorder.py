"""A local HTTP server that records every request it gets: proof that nothing was fetched."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["recording_server"]


@contextmanager
def recording_server(hits: list[str] | None = None) -> Iterator[tuple[str, list[str]]]:
    """Serve `{"type": "string"}` to any GET on 127.0.0.1; yields (base URL, the paths requested, live).

    The paths are appended to `hits` (a fresh list when None) as requests arrive.
    """
    hits = [] if hits is None else hits

    class _Recorder(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            hits.append(self.path)
            body = b'{"type": "string"}'
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
