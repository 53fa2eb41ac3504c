"""Serve the benchmark's Meridian site by hand: ``python -m bench.site --port 8766``."""

from __future__ import annotations

from sample_site.__main__ import main as serve_site

from . import start_site


def main(argv: list[str] | None = None) -> None:
    serve_site(
        argv,
        prog="python -m bench.site",
        description=__doc__,
        default_port=8766,
        start=start_site,
        banner="Meridian (shop/, news/story.html, app/tasks.html)",
    )


if __name__ == "__main__":
    main()
