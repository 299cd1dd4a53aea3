"""Files on the caller's side: the image of an upload, checked before it is sent, and downloads
written beside their target and renamed, so a broken transfer never leaves half a file under it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from ._options import bad

ImageType = Literal["image/png", "image/jpeg", "image/webp"]
PathLike = str | os.PathLike[str]


def sniff_image_type(data: bytes) -> ImageType | None:
    """The image type of some bytes from their signature (what the server checks too), or None."""
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "image/png"
    if data[:3] == b"\xff\xd8\xff":
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_type(data: bytes, name: str) -> ImageType:
    kind = sniff_image_type(data)
    if kind is None:
        raise bad(
            "path",
            f"{name} is not a PNG, JPEG or WebP image (its first bytes are {data[:8]!r}): "
            "upload one of those.",
        )
    return kind


def read_image(path: PathLike) -> tuple[bytes, ImageType]:
    """A file's bytes and image type; FileNotFoundError names a missing one."""
    p = Path(path)
    if p.is_dir():
        raise bad("path", f"{p} is a directory: give the path of an image file.")
    data = p.read_bytes()
    return data, image_type(data, str(p))


def part_path(path: PathLike) -> Path:
    """Where a download is written before it is renamed to `path`."""
    p = Path(path)
    return p.with_name(f"{p.name}.part-{os.getpid()}")
