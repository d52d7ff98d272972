"""fleet/deflate.py: the gzip both sides of the wire use is ISA-L's, and it reads what Go's and zlib's writers make."""

import gzip
import zlib

import pytest
from dragoman.fleet import deflate


def test_isal_is_the_implementation_when_installed():
    # isal is a dependency: the fallback to zlib is for a platform without its wheel, not for this one.
    assert deflate.lib.__name__.endswith("isal_zlib")


def _ours(body: bytes) -> bytes:
    z = deflate.gzip_compressor(1)
    packed = z.compress(body) + z.flush()
    assert gzip.decompress(packed) == body  # a gzip container any reader accepts, as kube-apiserver's is
    return packed


@pytest.mark.parametrize("pack", [gzip.compress, zlib.compress, _ours])
def test_inflates_gzip_and_zlib_streams(pack):
    body = b'{"items":[' + b",".join(b'{"metadata":{"name":"p%d"}}' % i for i in range(20_000)) + b"]}"
    packed = pack(body)
    d = deflate.decompressor()
    out = d.decompress(packed, 4096)
    while d.unconsumed_tail:  # bounded steps, as fleet/cluster.read_body inflates a possible bomb
        out += d.decompress(d.unconsumed_tail, 4096)
    assert out + d.flush() == body


def test_corrupt_stream_raises_one_of_the_errors():
    with pytest.raises(deflate.ERRORS):
        deflate.decompressor().decompress(b"\x1f\x8b\x08\x00" + b"\xff" * 64)
