"""Tiny real files, built in memory: what libmagic must recognise (or refuse)."""

from __future__ import annotations

import struct
import zlib


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def png(seed: int = 0, width: int = 1, height: int = 1) -> bytes:
    """A valid RGB PNG; `seed` varies the pixel so files differ."""
    row = b"\x00" + bytes([seed % 256, (seed // 256) % 256, 7]) * width
    return (b"\x89PNG\r\n\x1a\n"
            + _png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + _png_chunk(b"IDAT", zlib.compress(row * height))
            + _png_chunk(b"IEND", b""))


def _ftyp(major: bytes, compatible: list[bytes]) -> bytes:
    body = major + b"\x00\x00\x00\x00" + b"".join(compatible)
    return struct.pack(">I", 8 + len(body)) + b"ftyp" + body + b"\x00\x00\x00\x08free"


def _webp() -> bytes:
    frame = b"\x00" * 10
    return (b"RIFF" + struct.pack("<I", 4 + 8 + len(frame)) + b"WEBP"
            + b"VP8 " + struct.pack("<I", len(frame)) + frame)


PNG = png()
# SOI, an APP0 JFIF segment, EOI.
JPEG = (b"\xff\xd8\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
        + b"\xff\xd9")
GIF = (b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff"
       b"!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")
WEBP = _webp()
PDF = (b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
       b"2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n")
# HEIC/HEIF photos are ISO-BMFF files: an ftyp box whose brand is 'heic', or
# only the generic 'mif1' (libheif issue 83; libmagic versions disagree).
HEIC = _ftyp(b"heic", [b"mif1", b"heic"])
HEIF_MIF1 = _ftyp(b"mif1", [b"mif1"])

HTML = b"<!DOCTYPE html><html><body><script>alert(document.cookie)</script></body></html>"
SVG = (b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg">'
       b"<script>alert(document.cookie)</script></svg>")
EXE = (b"MZ\x90\x00" + b"\x00" * 56 + struct.pack("<I", 0x80) + b"\x00" * 64
       + b"PE\x00\x00" + b"\x00" * 100)
TEXT = b"Just some plain text, not a PDF at all.\n"
