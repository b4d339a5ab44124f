"""Photos decoded within bounds: how many pixels, and how many at once.

A PNG of under a megabyte can hold 13,000 x 13,000 pixels: decoding it and
its preview takes gigabytes of memory, and a few at once exhaust a worker
(a decompression bomb). Pillow's own guard errs only
above 179 million pixels. So every photo is opened here: `Image.open` reads
the header alone, and its size times its frames (an animation's frames are
decoded one after the other when its metadata is removed) is held to
`ehs.max_image_pixels` before any pixel is decoded; a photo over it is
refused (ASVS 4.0.3 12.1.2, ASVS 5.0 5.2.1: a file the service cannot
process without harm is refused before it is processed). The default, 50
million, is above what a phone's camera makes (48 megapixels at most).

Decoding then takes one of `AT_ONCE` slots of the process (`DECODES`, the
only one), previews included: a photo at the limit needs about 200 MB
while decoded (four bytes a pixel), and a worker's threads must not decode
more than a few at once. A request that finds no slot free within
`WAIT_SECONDS` is answered 503 with Retry-After.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

from PIL import Image
from pillow_heif import register_heif_opener

register_heif_opener()

AT_ONCE = 2
WAIT_SECONDS = 10.0
RETRY_AFTER_SECONDS = 5
DECODES = threading.BoundedSemaphore(AT_ONCE)


def pixel_words(count: int) -> str:
    """`50 million` for the default, digits grouped otherwise."""
    if count % 1_000_000 == 0:
        return f"{count // 1_000_000:,} million"
    return f"{count:,}"


class TooManyPixels(Exception):
    """A photo whose header asks for more pixels than `ehs.max_image_pixels`."""

    def __init__(self, limit: int, size: tuple[int, int] | None = None, frames: int = 1) -> None:
        if size is None:  # Pillow itself refused to open so large a picture
            shown = f"The photo has more than {pixel_words(limit)} pixels"
        elif frames > 1:
            shown = f"The animation is {size[0]} by {size[1]} pixels in {frames} frames"
        else:
            shown = f"The photo is {size[0]} by {size[1]} pixels"
        super().__init__(f"{shown}; photos of at most {pixel_words(limit)} pixels are accepted")
        self.message = str(self)


class Busy(Exception):
    """No decode slot freed within WAIT_SECONDS."""

    message = "Too many photos are being processed right now; try again in a moment"


def open_image(source: BinaryIO, limit: int) -> Image.Image:
    """The photo in `source` opened by Pillow, its pixels not yet decoded.
    Raises TooManyPixels when its width x height x frames exceeds `limit`,
    or what `Image.open` raises for a file it cannot read."""
    try:
        image = Image.open(source)
    except Image.DecompressionBombError:
        raise TooManyPixels(limit) from None
    width, height = image.size
    # GIF frames are counted by skipping their data, never decoding it.
    frames = getattr(image, "n_frames", 1)
    if width * height * frames > limit:
        image.close()
        raise TooManyPixels(limit, (width, height), frames)
    return image


@contextmanager
def decode_slot() -> Iterator[None]:
    """Hold one of the process's decode slots while decoding; raises Busy
    when none frees within WAIT_SECONDS."""
    if not DECODES.acquire(timeout=WAIT_SECONDS):
        raise Busy()
    try:
        yield
    finally:
        DECODES.release()
