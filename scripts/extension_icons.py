"""Draw the extension's icons (extension/icons/icon{16,32,48,128}.png) with no imaging library.

    python scripts/extension_icons.py          # rewrite the PNGs (they are committed)
    python scripts/extension_icons.py --check  # exit 1 if the committed ones differ

The picture: a blue rounded square holding a white browser window (title bar and frame)
with an orange dot, the page tool the bridge reaches. Each pixel is the mean of 4×4 samples,
so edges stay smooth at 16 px. Output is deterministic (no timestamps in the PNG).
"""

from __future__ import annotations

import argparse
import struct
import sys
import zlib
from pathlib import Path

ICONS = Path(__file__).resolve().parent.parent / "extension" / "icons"
SIZES = (16, 32, 48, 128)
SAMPLES = 4

BLUE = (26, 95, 180)
WHITE = (255, 255, 255)
ORANGE = (245, 140, 30)
RGB = tuple[int, int, int]


def _in_rounded_square(x: float, y: float, radius: float) -> bool:
    # Coordinates in 0..1; the corners are quarter circles of `radius`.
    cx = min(max(x, radius), 1 - radius)
    cy = min(max(y, radius), 1 - radius)
    return (x - cx) ** 2 + (y - cy) ** 2 <= radius**2


def _colour_at(x: float, y: float) -> RGB | None:
    """The picture at (x, y) in 0..1 × 0..1, or None where it is transparent."""
    if not _in_rounded_square(x, y, 0.22):
        return None
    left, right, top, bottom = 0.18, 0.82, 0.24, 0.78
    frame = 0.07
    inside_window = left <= x <= right and top <= y <= bottom
    if inside_window:
        title_bar = y <= top + 0.14
        on_frame = x <= left + frame or x >= right - frame or y >= bottom - frame or title_bar
        if (x - 0.60) ** 2 + (y - 0.56) ** 2 <= 0.11**2:
            return ORANGE
        if on_frame:
            return WHITE
    return BLUE


def render(size: int) -> bytes:
    """RGBA rows of a `size`×`size` icon, each prefixed with PNG filter byte 0."""
    rows = bytearray()
    step = 1 / (size * SAMPLES)
    for py in range(size):
        rows.append(0)
        for px in range(size):
            r = g = b = a = 0
            for sy in range(SAMPLES):
                for sx in range(SAMPLES):
                    colour = _colour_at((px * SAMPLES + sx + 0.5) * step, (py * SAMPLES + sy + 0.5) * step)
                    if colour is not None:
                        r, g, b, a = r + colour[0], g + colour[1], b + colour[2], a + 1
            n = SAMPLES * SAMPLES
            rows += bytes((r // a, g // a, b // a, 255 * a // n) if a else (0, 0, 0, 0))
    return bytes(rows)


def png(size: int) -> bytes:
    """A PNG file: 8-bit RGBA, no ancillary chunks."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    pixels = zlib.compress(render(size), 9)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed icons instead of writing")
    args = parser.parse_args(argv)
    ICONS.mkdir(exist_ok=True)
    stale = []
    for size in SIZES:
        path = ICONS / f"icon{size}.png"
        data = png(size)
        if args.check:
            if not path.exists() or path.read_bytes() != data:
                stale.append(path.name)
        else:
            path.write_bytes(data)
    if stale:
        names = ", ".join(stale)
        print(f"extension icons out of date: {names}; run python scripts/extension_icons.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
