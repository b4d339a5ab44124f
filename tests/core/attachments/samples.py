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


def png_bomb(width: int = 13_000, height: int = 13_000) -> bytes:
    """A real PNG of `width` x `height` black RGB pixels, compressed about
    a thousand to one: half a megabyte that decodes to 169 million pixels
    (half a gigabyte in memory) at the default size. Built a block of rows
    at a time, so building it never holds the pixels."""
    packer = zlib.compressobj(9)
    row = b"\x00" * (1 + 3 * width)  # filter byte, then the pixels
    parts = [packer.compress(row * 64) for _ in range(height // 64)]
    parts += [packer.compress(row * (height % 64)), packer.flush()]
    return (b"\x89PNG\r\n\x1a\n"
            + _png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + _png_chunk(b"IDAT", b"".join(parts))
            + _png_chunk(b"IEND", b""))


def claiming_size(fmt: str, width: int, height: int) -> bytes:
    """A tiny photo whose header claims `width` x `height` pixels: what an
    image's size is read from before any pixel is decoded. The pixels that
    follow do not match (decoding it would fail or take the memory the
    header asks for)."""
    if fmt == "GIF":
        data = bytearray(GIF)  # the logical screen's size
        data[6:10] = struct.pack("<HH", width, height)
        return bytes(data)
    import io

    from PIL import Image
    from pillow_heif import register_heif_opener

    register_heif_opener()
    target = io.BytesIO()
    # 64 pixels: a smaller HEIF is cropped from a larger picture ('clap').
    Image.new("RGB", (64, 64), (10, 120, 30)).save(target, format=fmt)
    data = bytearray(target.getvalue())
    if fmt == "JPEG":  # the frame header (SOF0): height, then width
        at = data.index(b"\xff\xc0") + 5
        data[at:at + 4] = struct.pack(">HH", height, width)
    elif fmt == "WEBP":  # the VP8 frame header, after its start code
        at = data.index(b"\x9d\x01\x2a") + 3
        data[at:at + 4] = struct.pack("<HH", width, height)
    elif fmt == "HEIF":  # the image's spatial extent property
        at = data.index(b"ispe") + 8
        data[at:at + 8] = struct.pack(">II", width, height)
    return bytes(data)


def animation(fmt: str, frames: int, size: tuple[int, int] = (10, 10)) -> bytes:
    """An animated GIF, WebP or PNG of `frames` frames, each another colour."""
    import io

    from PIL import Image

    pictures = [Image.new("RGB", size, (index * 20 % 256, 40, 90)) for index in range(frames)]
    target = io.BytesIO()
    pictures[0].save(target, format=fmt, save_all=True, append_images=pictures[1:])
    return target.getvalue()
