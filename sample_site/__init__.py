"""Harbor Help Desk: a WebMCP-enabled sample web app.

It is the stage for the webmcp-bridge end-to-end tests and the demo.  Use
:func:`make_app` to build an aiohttp application, or :func:`start_site` to
serve one on a free port::

    runner, base_url = await start_site()
    ...
    await runner.cleanup()
"""

from sample_site.server import STATIC_DIR, make_app, start_site
from sample_site.threaded import serve_in_thread

__all__ = ["STATIC_DIR", "make_app", "serve_in_thread", "start_site"]
