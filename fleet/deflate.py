"""The deflate implementation dragoman uses for gzip, on both sides of the wire.

Intel's ISA-L (the `isal` package, python-isal) when it is installed: the same API as the standard library's zlib,
inflating about 3x and compressing (level 1) about 6x faster. At the envelope a full LIST of 150,000 pods is ~570 MB of
JSON gzipped by the API server: zlib spent ~0.8 s of the client's CPU inflating it, and the simulator ~2 s deflating it.
The standard library's zlib otherwise (a platform without an isal wheel): same answers, slower.
"""

from __future__ import annotations

import zlib
from typing import Any

lib: Any
try:
    from isal import isal_zlib as lib
except ImportError:  # pragma: no cover - isal is a dependency; this keeps a platform without its wheel working
    lib = zlib

# What a corrupt stream raises: zlib.error, or isal's own error class.
ERRORS: tuple[type[Exception], ...] = tuple({zlib.error, lib.error})


def decompressor() -> Any:
    """An incremental inflater for a gzip or zlib stream (header detected), with zlib's decompressobj API."""
    return lib.decompressobj(zlib.MAX_WBITS | 32)


def gzip_compressor(level: int) -> Any:
    """An incremental deflater writing the gzip container (wbits 31), as Go's gzip.Writer does."""
    return lib.compressobj(level, zlib.DEFLATED, 31)
