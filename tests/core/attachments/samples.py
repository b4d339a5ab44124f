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


def _pillow(fmt: str) -> bytes:
    """A 2x2 photo encoded by Pillow (pillow-heif for HEIF), no metadata:
    the upload path decodes every photo it keeps."""
    import io

    from PIL import Image
    from pillow_heif import register_heif_opener

    register_heif_opener()
    target = io.BytesIO()
    Image.new("RGB", (2, 2), (10, 120, 30)).save(target, format=fmt)
    return target.getvalue()


PNG = png()
JPEG = _pillow("JPEG")
GIF = (b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff"
       b"!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")
WEBP = _pillow("WEBP")
PDF = (b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
       b"2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n")
# HEIC/HEIF photos are ISO-BMFF files: an ftyp box whose brand is 'heic', or
# only the generic 'mif1' (libheif issue 83; libmagic versions disagree).
HEIC = _pillow("HEIF")
HEIF_MIF1 = HEIC[:8] + b"mif1" + HEIC[12:]

HTML = b"<!DOCTYPE html><html><body><script>alert(document.cookie)</script></body></html>"
SVG = (b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg">'
       b"<script>alert(document.cookie)</script></svg>")
EXE = (b"MZ\x90\x00" + b"\x00" * 56 + struct.pack("<I", 0x80) + b"\x00" * 64
       + b"PE\x00\x00" + b"\x00" * 100)
TEXT = b"Just some plain text, not a PDF at all.\n"


def photo_with_metadata(fmt: str, orientation: int = 1) -> bytes:
    """A 16x8 red photo as a phone writes it: EXIF with the camera's owner
    and a GPS position, an orientation, and (PNG) a text chunk. Built with
    Pillow (and pillow-heif for HEIF)."""
    import io

    from PIL import Image, PngImagePlugin
    from pillow_heif import register_heif_opener

    register_heif_opener()
    exif = Image.Exif()
    exif[0x013B] = "Jane Owner"  # Artist
    exif[0x0112] = orientation
    exif[0x8825] = {1: "N", 2: (48.0, 51.0, 29.0), 3: "E", 4: (2.0, 17.0, 40.0)}  # GPS
    options: dict = {"format": fmt, "exif": exif}
    if fmt == "PNG":
        info = PngImagePlugin.PngInfo()
        info.add_text("Author", "Jane Owner")
        options["pnginfo"] = info
    target = io.BytesIO()
    Image.new("RGB", (16, 8), (200, 10, 10)).save(target, **options)
    return target.getvalue()
