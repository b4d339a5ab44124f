"""Photo metadata removed on upload.

A phone photo carries EXIF (GPS position, time, camera serial and owner),
XMP and comments; an incident photo, above all on an anonymous report, must
not tell who took it or where they stood (ASVS 5 12.4.x privacy of uploaded
files). JPEG, PNG, WebP and HEIC/HEIF photos that hold any of it are
re-encoded by Pillow (pillow-heif for HEIC) from their pixels alone: the
orientation is applied to the pixels first, the colour profile is kept,
everything else is left behind. A photo without metadata is kept byte for
byte (no loss of quality for nothing); a file that claims to be a photo
but cannot be read is refused. GIF and PDF files are kept as sent. Every
photo, a GIF too, is first opened within the bounds of `decoding` (its
pixels counted from its header, then one of the process's decode slots).
"""

from __future__ import annotations

import io
import logging
from typing import BinaryIO

from PIL import Image, ImageOps, UnidentifiedImageError

from ehs_core.attachments.decoding import decode_slot, open_image

log = logging.getLogger(__name__)

FORMATS = {"image/jpeg": "JPEG", "image/png": "PNG", "image/webp": "WEBP", "image/heic": "HEIF",
           "image/heif": "HEIF"}
# Image.info keys that describe the picture rather than its taker.
KEPT_INFO = {"icc_profile", "dpi", "jfif", "jfif_version", "jfif_unit", "jfif_density", "gamma",
             "transparency", "loop", "duration", "background", "interlace", "aspect", "bit_depth",
             "chroma", "depth_images", "primary", "lossless", "mode", "progressive", "progression",
             "adobe", "adobe_transform", "srgb", "bbox", "subsampling", "quality", "blend", "disposal",
             "timestamp", "background_color", "original_orientation", "save_parameters", "nclx_profile",
             "aux"}


class UnreadablePhoto(Exception):
    """A file typed as a photo that Pillow cannot read, so no metadata in
    it can be removed."""


def has_metadata(image: Image.Image) -> bool:
    if any(value for key, value in image.info.items() if key not in KEPT_INFO):
        return True
    if len(image.getexif()):
        return True
    return bool(getattr(image, "text", None))  # PNG tEXt/iTXt/zTXt, also after the pixels


def strip_metadata(source: BinaryIO, content_type: str, max_pixels: int) -> BinaryIO | None:
    """A new file holding the photo without metadata, or None when `source`
    may be kept as it is (no metadata, not a photo type, or a GIF). Every
    photo's size is checked from its header first (`decoding.open_image`):
    raises TooManyPixels over `max_pixels`, Busy when no decode slot frees,
    and UnreadablePhoto for a photo Pillow cannot read: its metadata could
    not be removed, and it would not show as a photo anyway."""
    if not content_type.startswith("image/"):
        return None
    source.seek(0)
    try:
        image = open_image(source, max_pixels)
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, EOFError) as exc:
        # libmagic saw a photo's first bytes, but no picture follows (and
        # what follows may well be a camera's EXIF block).
        raise UnreadablePhoto(str(exc)) from exc
    fmt = FORMATS.get(content_type)
    if fmt is None:
        return None
    with decode_slot():
        return _without_metadata(image, fmt)


def _without_metadata(image: Image.Image, fmt: str) -> BinaryIO | None:
    try:
        # A PNG's text and EXIF may follow its pixels: reading them decodes it.
        if not has_metadata(image):
            return None
        frames = getattr(image, "n_frames", 1)
        icc = image.info.get("icc_profile")
        if frames > 1:
            pixels = [frame.copy() for frame in _frames(image)]
        else:
            pixels = [ImageOps.exif_transpose(image)]
    except Exception as exc:  # any decoding failure: truncated data, a bomb, ...
        raise UnreadablePhoto(str(exc)) from exc
    for frame in pixels:
        frame.info = {}
    options: dict = {"format": fmt}
    if icc:
        options["icc_profile"] = icc
    if fmt in ("JPEG", "WEBP", "HEIF"):
        options["quality"] = 92
    if frames > 1:
        options.update(save_all=True, append_images=pixels[1:])
    target = io.BytesIO()
    pixels[0].save(target, **options)
    target.seek(0)
    log.info("removed metadata from a %s photo", fmt)
    return target


def _frames(image: Image.Image) -> list[Image.Image]:
    found = []
    for index in range(image.n_frames):
        image.seek(index)
        found.append(image.convert("RGBA") if image.mode == "P" else image.copy())
    return found
