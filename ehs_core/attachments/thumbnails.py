"""Small previews of photos for the incident page's gallery.

A phone photo is a few megabytes; a page that showed five of them scaled
down by CSS made a phone fetch them all on every visit (the files are
served `no-store`: injury photos are health data, and a shared tablet must
not keep them). The gallery shows a preview instead: the photo drawn at
most `SIZE` pixels on its longer side (twice the gallery's cell, for
high-density screens), as WebP, made by Pillow from the stored photo's
pixels alone (no metadata: ASVS 5 12.4.x, as `metadata` does on upload),
within the bounds of `decoding` (the photo's pixels checked from its
header, one of the process's few decode slots).
HEIC and HEIF photos, which browsers do not show, get one too (pillow-heif).

Previews are made when asked and kept by the worker, bounded by their
bytes: a photo's bytes never change, so a preview is kept by the stored
file's name. They are served with the file's own headers (`no-store`,
the sandboxing policy).
"""

from __future__ import annotations

import io
from collections import OrderedDict
from collections.abc import Iterable

from PIL import Image, ImageOps, UnidentifiedImageError

from ehs_core.attachments.decoding import TooManyPixels, decode_slot, open_image

SIZE = 480  # pixels on the longer side
QUALITY = 75
# The photo types a preview is made of (GIFs too: their first frame).
PREVIEWED = frozenset({"image/jpeg", "image/png", "image/webp", "image/gif", "image/heic", "image/heif"})
KEPT_BYTES = 16 * 1024 * 1024  # per worker

_kept: OrderedDict[str, bytes] = OrderedDict()
_kept_size = [0]


class NoPreview(Exception):
    """The file is not a photo a preview can be drawn from."""


def previewed(content_type: str) -> bool:
    return content_type in PREVIEWED


def draw(chunks: Iterable[bytes], max_pixels: int) -> bytes:
    """The preview of the photo whose bytes are `chunks`, as WebP. Raises
    NoPreview when Pillow cannot read it or its header asks for more than
    `max_pixels` pixels (`decoding`: checked before any decode), and Busy
    when no decode slot frees."""
    try:
        image = open_image(io.BytesIO(b"".join(chunks)), max_pixels)
    except TooManyPixels as exc:
        raise NoPreview(exc.message) from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, EOFError) as exc:
        raise NoPreview(str(exc)) from exc
    with decode_slot():
        return _drawn(image)


def _drawn(image: Image.Image) -> bytes:
    try:
        # A JPEG is decoded at the smallest scale that still covers SIZE,
        # so a phone's full-size photo does not hold a worker for long.
        image.draft("RGB", (SIZE, SIZE))
        image = ImageOps.exif_transpose(image)
        image.thumbnail((SIZE, SIZE), Image.Resampling.LANCZOS)
        if image.mode not in ("RGB", "RGBA"):
            image = image.convert("RGBA" if "A" in image.mode or "transparency" in image.info else "RGB")
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, Image.DecompressionBombError) as exc:
        raise NoPreview(str(exc)) from exc
    target = io.BytesIO()
    image.save(target, format="WEBP", quality=QUALITY, method=4)
    return target.getvalue()


def preview(storage_name: str, chunks: Iterable[bytes], max_pixels: int) -> bytes:
    """`draw(chunks, max_pixels)`, kept by the worker under the stored file's name."""
    found = _kept.get(storage_name)
    if found is not None:
        _kept.move_to_end(storage_name)
        return found
    found = draw(chunks, max_pixels)
    _kept[storage_name] = found
    _kept_size[0] += len(found)
    while _kept_size[0] > KEPT_BYTES and _kept:
        _, dropped = _kept.popitem(last=False)
        _kept_size[0] -= len(dropped)
    return found
