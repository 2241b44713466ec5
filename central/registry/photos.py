"""A worker's photo from an upload: checked and re-encoded with Pillow at two sizes.

The office's photos directory ``DIR`` is the one ``portgate central publish --photos DIR`` sends to
the gates (``central.broadcast.photos``): the gate-size JPEG is ``DIR/<registration>.jpg`` (at most
``GATE_MAX_BYTES``, 30 KB), the office-size JPEG ``DIR/.office/<registration>.jpg`` (a dot
directory, which the publisher skips). Re-encoding drops every metadata block (EXIF: place, camera)
and anything that is not the picture."""

from __future__ import annotations

import io
import os
import re
import threading
from pathlib import Path

from typing import TYPE_CHECKING

import structlog

from portgate.errors import BadInput

if TYPE_CHECKING:
    from PIL import Image

log = structlog.get_logger(__name__)

GATE_MAX_BYTES = 30 * 1024
GATE_SIZE = (240, 320)  # width x height, passport-like 3:4
OFFICE_SIZE = (600, 800)
UPLOAD_MAX_BYTES = 10 * 1024 * 1024
# A portrait needs few pixels (``OFFICE_SIZE``): a picture is decoded at most at this many pixels.
# A JPEG is reduced while it is decoded (Pillow's ``draft``: 1/2, 1/4 or 1/8 of each side), so a
# phone's 48-megapixel JPEG decodes at about 0.75 MP; a PNG cannot be, so one over this is refused.
MAX_PIXELS = 8_000_000  # about 120 MB at most while re-encoding (RGB copies); 3264x2448 fits
MAX_JPEG_PIXELS = 64 * MAX_PIXELS  # before the 1/8 reduction on decode
DRAFT_BOX = (1600, 1600)  # a JPEG is decoded at the smallest scale that still covers this (either orientation)
IMAGE_WORKERS = 2  # pictures decoded at once by this process; more uploads wait their turn
_image_work = threading.BoundedSemaphore(IMAGE_WORKERS)
ACCEPTED = {"JPEG", "PNG"}
OFFICE_SUBDIR = ".office"
_REG = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def _encode(img: Image.Image, size: tuple[int, int], max_bytes: int | None) -> bytes:
    from PIL import Image  # lazy: Pillow only when a photo is re-encoded (the office's start-up)

    fitted = img.copy()
    fitted.thumbnail(size, Image.Resampling.LANCZOS)
    for quality in (85, 75, 65, 55, 45, 35, 25):
        out = io.BytesIO()
        fitted.save(out, "JPEG", quality=quality, optimize=True)
        data = out.getvalue()
        if max_bytes is None or len(data) <= max_bytes:
            return data
    while max_bytes is not None:  # still too large at low quality: shrink
        fitted.thumbnail((fitted.width * 3 // 4, fitted.height * 3 // 4), Image.Resampling.LANCZOS)
        out = io.BytesIO()
        fitted.save(out, "JPEG", quality=40, optimize=True)
        if len(out.getvalue()) <= max_bytes:
            return out.getvalue()
    raise AssertionError("unreachable")


def reencode(data: bytes) -> tuple[bytes, bytes]:
    """``(office JPEG, gate JPEG)`` from an uploaded JPEG or PNG. Raises ``BadInput`` for an empty
    or too large upload (``UPLOAD_MAX_BYTES``), a file that is not a JPEG/PNG picture, a damaged or
    truncated one, or one that would decode to more than ``MAX_PIXELS`` pixels (a PNG over it, a
    JPEG over ``MAX_JPEG_PIXELS``: a decompression bomb, or far more than a portrait needs). A JPEG
    is reduced while decoded (``DRAFT_BOX``). At most ``IMAGE_WORKERS`` pictures are decoded at
    once (the others wait), so a few large uploads at once cannot exhaust the server's memory. The
    texts are ours (``central.web.service_texts`` gives their pt-BR); Pillow's own words for a
    file it cannot read go to the log only (``photo_refused``, ``detail``)."""
    with _image_work:
        return _reencode(data)


def _reencode(data: bytes) -> tuple[bytes, bytes]:
    from PIL import Image, ImageOps, UnidentifiedImageError  # lazy: Pillow only when a photo is checked

    if not data:
        raise BadInput("the photo file is empty")
    if len(data) > UPLOAD_MAX_BYTES:
        raise BadInput(f"the photo file has {len(data)} bytes (at most {UPLOAD_MAX_BYTES})")
    try:
        with Image.open(io.BytesIO(data)) as probe:
            if probe.format not in ACCEPTED:
                raise BadInput(f"the photo is {probe.format}: only JPEG or PNG")
            limit = MAX_JPEG_PIXELS if probe.format == "JPEG" else MAX_PIXELS
            if probe.width * probe.height > limit:
                raise BadInput(f"the photo has {probe.width}x{probe.height} pixels: too large "
                               f"(at most {limit} pixels)")
            probe.verify()
        with Image.open(io.BytesIO(data)) as img:
            if img.format == "JPEG":
                img.draft("RGB", DRAFT_BOX)  # decode at 1/2, 1/4 or 1/8 scale: never the full picture
            if img.width * img.height > MAX_PIXELS:
                raise BadInput(f"the photo has {img.width}x{img.height} pixels: too large (at most {MAX_PIXELS} pixels)")
            img.load()
            img = ImageOps.exif_transpose(img).convert("RGB")
    except Image.DecompressionBombError as exc:
        raise BadInput("the photo has too many pixels: too large") from exc
    except UnidentifiedImageError as exc:
        log.info("photo_refused", reason="not_a_picture", detail=str(exc), size=len(data))
        raise BadInput("the photo is not a JPEG or PNG picture") from exc
    except (OSError, SyntaxError) as exc:  # truncated or damaged data: Pillow's words go to the log only
        log.info("photo_refused", reason="damaged", detail=f"{type(exc).__name__}: {exc}", size=len(data))
        raise BadInput("the photo file is damaged or cut short: not a readable JPEG or PNG picture") from exc
    return _encode(img, OFFICE_SIZE, None), _encode(img, GATE_SIZE, GATE_MAX_BYTES)


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def save_photo(directory: str | Path, registration: str, data: bytes) -> tuple[Path, Path]:
    """Re-encode ``data`` and write both sizes for ``registration`` (replacing any earlier photo of
    the worker, whatever its suffix). Returns ``(office file, gate file)``. ``BadInput`` as
    ``reencode``, or for a registration that cannot name a file."""
    if not _REG.match(registration):
        raise BadInput(f"registration {registration!r} cannot name a photo file")
    office, gate = reencode(data)
    directory = Path(directory)
    for old in directory.glob(f"{registration}.*"):
        if old.suffix.lower() in {".png", ".jpeg", ".webp"}:
            old.unlink()
    office_path = directory / OFFICE_SUBDIR / f"{registration}.jpg"
    gate_path = directory / f"{registration}.jpg"
    _atomic_write(office_path, office)
    _atomic_write(gate_path, gate)
    return office_path, gate_path


def office_photo(directory: str | Path, registration: str) -> Path | None:
    """The office-size photo of ``registration``, else its gate-size one, else None."""
    if not _REG.match(registration):
        return None
    for path in (Path(directory) / OFFICE_SUBDIR / f"{registration}.jpg", Path(directory) / f"{registration}.jpg"):
        if path.is_file():
            return path
    return None
