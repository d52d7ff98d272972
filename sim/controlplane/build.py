"""Build (or find) the real Kubernetes v1.37.2 control plane: etcd, kube-apiserver, kube-scheduler,
kube-controller-manager.

The binaries are compiled from the Go module in `controlplane/` (it pins `k8s.io/kubernetes` v1.37.2 and etcd's
server), through the Go module proxy, into a cache outside the checkout, so only a new machine pays for the build.
Binaries a user already has (envtest's, a distribution's) are accepted by path after a version check.
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable

from dragoman.fleet.errors import ExitCode, UserError

KUBE_VERSION = "v1.37.2"
ETCD_VERSION = "3.7.0"
# k8s.io/kubernetes v1.37.2's go.mod says `go 1.26.0`: an older toolchain cannot build it.
GO_MIN = (1, 26)
BINARIES = ("etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager")
# Go package of each binary, and the name `go build -o DIR/` gives it.
PACKAGES = {
    "kube-apiserver": ("k8s.io/kubernetes/cmd/kube-apiserver", "kube-apiserver"),
    "kube-scheduler": ("k8s.io/kubernetes/cmd/kube-scheduler", "kube-scheduler"),
    "kube-controller-manager": ("k8s.io/kubernetes/cmd/kube-controller-manager", "kube-controller-manager"),
    "etcd": ("go.etcd.io/etcd/server/v3", "server"),
}
# What `hack/lib/version.sh` stamps into a release build; without it the binaries call themselves v0.0.0-master.
_VERSION_PKGS = ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version")
_GIT_VERSION = re.compile(r"^v(\d+)\.(\d+)\.(\d+)")

Progress = Callable[[str], None]


def module_dir() -> pathlib.Path:
    """The repository's `controlplane/` Go module (beside the package folders)."""
    here = pathlib.Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "controlplane" / "go.mod"
        if candidate.is_file():
            return candidate.parent
    raise UserError(
        "the controlplane/ Go module is not beside this installation of dragoman; build from a checkout of the "
        "repository (pip install -e .), or pass --control-plane DIR with binaries you already have.",
        ExitCode.INPUT,
    )


def cache_dir() -> pathlib.Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "dragoman" / "controlplane" / KUBE_VERSION


def go_version(go: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.match(r"go(\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _ldflags() -> str:
    major, minor, _ = _GIT_VERSION.match(KUBE_VERSION).groups()  # type: ignore[union-attr]
    flags = ["-s", "-w"]
    for pkg in _VERSION_PKGS:
        flags += [
            f"-X {pkg}.gitVersion={KUBE_VERSION}",
            f"-X {pkg}.gitMajor={major}",
            f"-X {pkg}.gitMinor={minor}",
            f"-X {pkg}.gitTreeState=clean",
        ]
    return " ".join(flags)


def binary_version(path: pathlib.Path, name: str) -> str | None:
    """The version a binary reports of itself ("v1.37.2", "3.7.0"), or None when it does not run."""
    args = [str(path), "--version"]
    try:
        out = subprocess.run(args, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    text = out.stdout + out.stderr
    if name == "etcd":
        m = re.search(r"etcd Version:\s*(\S+)", text)
    else:
        m = re.search(r"Kubernetes\s+(v\S+)", text)
    return m.group(1) if m else None


def check_dir(directory: str | os.PathLike) -> dict[str, pathlib.Path]:
    """The four binaries in `directory`, each of the version dragoman is proven against; a UserError otherwise."""
    d = pathlib.Path(directory).expanduser()
    if not d.is_dir():
        raise UserError(
            f"--control-plane {d}: not a directory; build one with `dragoman controlplane build`.", ExitCode.INPUT
        )
    found: dict[str, pathlib.Path] = {}
    for name in BINARIES:
        p = d / name
        if not (p.is_file() and os.access(p, os.X_OK)):
            raise UserError(
                f"--control-plane {d}: no executable {name} there; `dragoman controlplane build` makes all four "
                f"({', '.join(BINARIES)}).",
                ExitCode.INPUT,
            )
        version = binary_version(p, name)
        want = ETCD_VERSION if name == "etcd" else KUBE_VERSION
        if version is None:
            raise UserError(f"--control-plane {d}: {name} does not run or does not say its version.", ExitCode.INPUT)
        if name == "etcd":
            ok = version.split(".")[:1] == ["3"] and tuple(int(x) for x in version.split(".")[:2]) >= (3, 5)
        else:
            m = _GIT_VERSION.match(version)
            ok = bool(m) and (int(m.group(1)), int(m.group(2))) == (1, 37)
        if not ok:
            raise UserError(
                f"--control-plane {d}: {name} is {version}; dragoman needs {want} ("
                + ("etcd 3.5 or newer" if name == "etcd" else "Kubernetes 1.37")
                + ").",
                ExitCode.INPUT,
            )
        found[name] = p
    return found


def built(directory: pathlib.Path | None = None) -> dict[str, pathlib.Path] | None:
    """The cached binaries when all four are there at the right version, else None (no build)."""
    d = directory or cache_dir()
    try:
        return check_dir(d)
    except UserError:
        return None


def build(
    directory: pathlib.Path | None = None, *, progress: Progress | None = None, force: bool = False
) -> dict[str, pathlib.Path]:
    """Compile the control plane into `directory` (default: the cache); idempotent — nothing is rebuilt when the
    binaries are there at the right version. Go's own build cache makes a rebuild after a source change cheap."""
    say = progress or (lambda line: print(line, file=sys.stderr, flush=True))
    d = (directory or cache_dir()).expanduser()
    if not force:
        have = built(d)
        if have is not None:
            say(f"control plane {KUBE_VERSION} already built in {d}")
            return have
    go = shutil.which("go")
    if go is None:
        raise UserError(
            "building the control plane needs Go 1.26 or newer on PATH (go was not found); install Go, or pass "
            "--control-plane DIR with etcd, kube-apiserver, kube-scheduler and kube-controller-manager v1.37.",
            ExitCode.INPUT,
        )
    have_go = go_version(go)
    if have_go is None or have_go < GO_MIN:
        shown = f"go{have_go[0]}.{have_go[1]}" if have_go else "a Go that does not say its version"
        raise UserError(
            f"building Kubernetes {KUBE_VERSION} needs Go {GO_MIN[0]}.{GO_MIN[1]} or newer; {go} is {shown}.",
            ExitCode.INPUT,
        )
    mod = module_dir()
    d.mkdir(parents=True, exist_ok=True)
    tmp = d / ".build"
    tmp.mkdir(exist_ok=True)
    # The environment as it is: another CGO_ENABLED or GOFLAGS would miss Go's build cache and rebuild everything.
    env = dict(os.environ)
    for name in BINARIES:
        pkg, out_name = PACKAGES[name]
        say(f"building {name} ({pkg}) …")
        t0 = time.monotonic()
        cmd = [go, "build", "-trimpath", "-ldflags", _ldflags(), "-o", str(tmp / out_name), pkg]
        proc = subprocess.run(cmd, cwd=mod, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
            raise UserError(f"go build of {name} failed (exit {proc.returncode}):\n{tail}", ExitCode.INPUT)
        # Atomic per binary: a killed build never leaves a half-written executable under the final name.
        os.replace(tmp / out_name, d / name)
        say(f"  {name}: {time.monotonic() - t0:.0f} s")
    shutil.rmtree(tmp, ignore_errors=True)
    return check_dir(d)
