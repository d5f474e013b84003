#!/usr/bin/env python3
"""Writes the page's icons (committed; run again only to change them): the
lobby's diamond mark as PNGs of 192 and 512 pixels in frontend/icons/ (the
sizes a web app manifest needs to install), and frontend/favicon.ico
holding a 32-pixel PNG. The SVG icon (frontend/icons/icon.svg) is the same shape
written by hand. Standard library only: the shape is simple enough to
rasterise here, 4x4 samples per pixel."""
import pathlib
import struct
import zlib

COLOUR = (0x4F, 0x6B, 0xED)
OUT = pathlib.Path(__file__).resolve().parent.parent / "frontend" / "icons"


def diamond(size):
    """RGBA rows of the diamond |x|+|y| <= 7/16 of the size, centred."""
    rows = []
    half, reach, n = size / 2, size * 7 / 16, 4
    for y in range(size):
        row = bytearray([0])  # PNG filter type: none
        for x in range(size):
            inside = sum(
                abs(x + (i + 0.5) / n - half) + abs(y + (j + 0.5) / n - half) <= reach
                for i in range(n)
                for j in range(n)
            )
            row += bytes(COLOUR) + bytes([round(255 * inside / (n * n))])
        rows.append(bytes(row))
    return b"".join(rows)


def png(size):
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(diamond(size), 9))
        + chunk(b"IEND", b"")
    )


def ico(size):
    image = png(size)
    entry = struct.pack("<BBBBHHII", size, size, 0, 0, 1, 32, len(image), 6 + 16)
    return struct.pack("<HHH", 0, 1, 1) + entry + image


OUT.mkdir(parents=True, exist_ok=True)
for size in (192, 512):
    (OUT / f"icon-{size}.png").write_bytes(png(size))
(OUT.parent / "favicon.ico").write_bytes(ico(32))
