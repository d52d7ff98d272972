"""Build (or find) the real Kubernetes v1.37.2 control plane: etcd, kube-apiserver, kube-scheduler,
kube-controller-manager — and the node half of a rehearsal: the kubelet v1.37.2, the project's own Go commands
(controlplane/cmd/*: the image-less container runtime, the device plugin, the DRA kubelet plugin) and a bridge-less
kubelet of an older minor (v1.35.4, from its own pinned module controlplane/kubelet-v1.35) in a sibling folder.

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
import tempfile
import time
from collections.abc import Callable, Iterable

from dragoman.fleet.errors import ExitCode, UserError
from dragoman.sim.controlplane.procgroups import end_groups, forget, spawn

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
# The node half (issue 31): built after the control plane, each one only when it is missing (or, for the project's own
# commands, when their sources changed): a machine that has the control plane pays only for what is new.
KUBELET = "kubelet"
KUBELET_PACKAGE = "k8s.io/kubernetes/cmd/kubelet"
# The bridge-less kubelet: the oldest minor the version-skew policy lets a v1.37 API server serve (n-3 since 1.28 is
# 1.34; 1.35 is the newest without the extended-resource bridge, whose gate is alpha and off there).
OLD_KUBE_VERSION = "v1.35.4"
OLD_KUBELET_MODULE = "kubelet-v1.35"  # controlplane/kubelet-v1.35/go.mod
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


def old_cache_dir(directory: pathlib.Path | None = None) -> pathlib.Path:
    """Where the older kubelet goes: the default cache's sibling (…/controlplane/v1.35.4), or DIR/v1.35.4 for a
    --dir of one's own."""
    d = directory or cache_dir()
    return d.parent / OLD_KUBE_VERSION if d == cache_dir() else d / OLD_KUBE_VERSION


def own_commands(mod: pathlib.Path | None = None) -> list[str]:
    """The project's Go commands: every folder of controlplane/cmd/ with Go files (its name is the binary's)."""
    root = (mod or module_dir()) / "cmd"
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and any(p.glob("*.go")))


def _inputs_digest(mod: pathlib.Path, name: str) -> str:
    """What a command of ours is built from: its Go files, the packages of the module it may import (internal/…),
    and the module's go.mod and go.sum."""
    import hashlib

    h = hashlib.sha256()
    files = sorted((mod / "cmd" / name).rglob("*.go")) + sorted((mod / "internal").rglob("*.go"))
    for p in [*files, mod / "go.mod", mod / "go.sum"]:
        h.update(str(p.relative_to(mod)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def _ldflags(version: str = KUBE_VERSION) -> str:
    major, minor, _ = _GIT_VERSION.match(version).groups()  # type: ignore[union-attr]
    flags = ["-s", "-w"]
    for pkg in _VERSION_PKGS:
        flags += [
            f"-X {pkg}.gitVersion={version}",
            f"-X {pkg}.gitMajor={major}",
            f"-X {pkg}.gitMinor={minor}",
            f"-X {pkg}.gitTreeState=clean",
        ]
    return " ".join(flags)


VERSION_TIMEOUT = 15.0  # a real binary answers --version in well under a second, even on a loaded machine
VERSION_OUTPUT_LIMIT = 64 * 1024  # what --version may print; the answer is one or two short lines


def run_bounded(args: list[str], *, timeout: float, limit: int) -> tuple[int | None, bytes, str]:
    """Run a program that should answer at once: (exit code, its first `limit` bytes of output, "" or why it was
    ended). It runs in its own process group, which is ended whatever happens — after `timeout` seconds, after
    `limit` bytes, when it forked something that keeps the output open, and when dragoman itself is interrupted."""
    import select

    proc = spawn(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    assert proc.stdout is not None
    out = bytearray()
    why = ""
    deadline = time.monotonic() + timeout
    fd = proc.stdout.fileno()
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                why = f"did not finish within {timeout:g} s"
                break
            ready, _, _ = select.select([fd], [], [], min(left, 0.5))
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break  # every writer closed the output: wait for the exit below
                out += chunk
                if len(out) > limit:
                    why = f"printed more than {limit // 1024} KiB"
                    break
        if not why:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                why = f"did not finish within {timeout:g} s"
    finally:
        # Always: a child it left behind (a daemon) still belongs to the group.
        end_groups([proc], grace=0)
        proc.stdout.close()
    return (None if why else proc.returncode), bytes(out[:limit]), why


def version_of(path: pathlib.Path, name: str) -> tuple[str | None, str]:
    """(the version a binary reports of itself, "v1.37.2" / "3.7.0", or None; "" or why it gave none)."""
    try:
        _, raw, why = run_bounded([str(path), "--version"], timeout=VERSION_TIMEOUT, limit=VERSION_OUTPUT_LIMIT)
    except OSError as exc:
        return None, f"does not run ({exc.strerror or exc})"
    if why:
        return None, f"was ended: `{name} --version` {why}"
    text = raw.decode("utf-8", "replace")
    if name == "etcd":
        m = re.search(r"etcd Version:\s*(\S+)", text)
    else:
        m = re.search(r"Kubernetes\s+(v\S+)", text)
    return (m.group(1)[:40], "") if m else (None, "does not say its version")


def binary_version(path: pathlib.Path, name: str) -> str | None:
    """The version a binary reports of itself ("v1.37.2", "3.7.0"), or None when it does not run."""
    return version_of(path, name)[0]


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
        version, why = version_of(p, name)
        want = ETCD_VERSION if name == "etcd" else KUBE_VERSION
        if version is None:
            raise UserError(f"--control-plane {d}: {name} {why}.", ExitCode.INPUT)
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


def node_binaries(directory: pathlib.Path | None = None) -> dict[str, pathlib.Path]:
    """The node half `dragoman controlplane build` makes beside the control plane: "kubelet" (v1.37.2), every
    command of controlplane/cmd/ (by its name), and "kubelet-v1.35.4" (the bridge-less kubelet); a sentence naming
    what is missing otherwise."""
    d = (directory or cache_dir()).expanduser()
    found: dict[str, pathlib.Path] = {}
    wanted = [(KUBELET, d / KUBELET, KUBE_VERSION)]
    wanted += [(name, d / name, None) for name in own_commands()]
    wanted.append((f"{KUBELET}-{OLD_KUBE_VERSION}", old_cache_dir(directory) / KUBELET, OLD_KUBE_VERSION))
    for name, p, version in wanted:
        if not (p.is_file() and os.access(p, os.X_OK)):
            raise UserError(
                f"no {name} in {p.parent}: `dragoman controlplane build` builds the kubelets and dragoman's node "
                "programs beside the control plane (a few minutes when the control plane is already built).",
                ExitCode.INPUT,
            )
        if version is not None:
            have, why = version_of(p, KUBELET)
            if have != version:
                raise UserError(
                    f"{p}: {why or f'is {have}'}; dragoman needs kubelet {version} there (`dragoman controlplane "
                    "build --force` rebuilds it).",
                    ExitCode.INPUT,
                )
        found[name] = p
    return found


def build(
    directory: pathlib.Path | None = None,
    *,
    progress: Progress | None = None,
    force: bool = False,
    nodes: bool = True,
) -> dict[str, pathlib.Path]:
    """Compile the control plane into `directory` (default: the cache) and, with `nodes`, the node half (the kubelet,
    dragoman's own commands, the older kubelet in its sibling folder). Incremental: a binary already there at the
    right version (for dragoman's own commands: built from the same sources) is not rebuilt; only `force` rebuilds.
    Go's own build cache makes a rebuild after a source change cheap."""
    say = progress or (lambda line: print(line, file=sys.stderr, flush=True))
    d = (directory or cache_dir()).expanduser()
    mod = module_dir()
    own = own_commands(mod) if nodes else []
    # (name in its folder, folder, Go package, module folder, ldflags, digest of our sources or None)
    plan: list[tuple[str, pathlib.Path, str, pathlib.Path, str, str | None]] = []
    have = None if force else built(d)
    if have is None:
        for name in BINARIES:
            p = d / name
            if force or version_of(p, name)[0] != (ETCD_VERSION if name == "etcd" else KUBE_VERSION):
                plan.append((name, d, PACKAGES[name][0], mod, _ldflags(), None))
    if nodes:
        if force or version_of(d / KUBELET, KUBELET)[0] != KUBE_VERSION:
            plan.append((KUBELET, d, KUBELET_PACKAGE, mod, _ldflags(), None))
        inputs = _manifest_inputs(d)
        for name in own:
            digest = _inputs_digest(mod, name)
            if force or not (d / name).is_file() or inputs.get(name) != digest:
                plan.append((name, d, f"./cmd/{name}", mod, "-s -w", digest))
        old = old_cache_dir(directory.expanduser() if directory else None)
        if force or version_of(old / KUBELET, KUBELET)[0] != OLD_KUBE_VERSION:
            plan.append((KUBELET, old, KUBELET_PACKAGE, mod / OLD_KUBELET_MODULE, _ldflags(OLD_KUBE_VERSION), None))
    if not plan:
        say(f"control plane {KUBE_VERSION}" + (" and its node programs" if nodes else "") + f" already built in {d}")
        return _everything(d, directory, nodes)

    # The folders first: what is there is checked (and refused) whatever Go is on this machine.
    folders = sorted({folder for _, folder, *_ in plan})
    made = {f: not os.path.lexists(f) for f in folders}
    ours: dict[pathlib.Path, dict[str, dict]] = {}
    for f in folders:
        names = [n for n, folder, *_ in plan if folder == f]
        ours[f] = _prepare_dir(f, default=directory is None or f != d, names=names)
    try:
        go = _go()
    except UserError:
        for f in folders:
            if made[f]:
                shutil.rmtree(f, ignore_errors=True)  # made a moment ago, empty: nothing of ours is left behind
        raise

    # The environment as it is: another CGO_ENABLED or GOFLAGS would miss Go's build cache and rebuild everything.
    env = dict(os.environ)
    scratch: dict[pathlib.Path, pathlib.Path] = {}
    try:
        for f in folders:
            # A scratch folder of its own (never an existing `.build`, which may be someone else's), removed on every
            # way out.
            try:
                scratch[f] = pathlib.Path(tempfile.mkdtemp(prefix=".dragoman-build-", dir=f))
            except OSError as exc:
                raise UserError(f"cannot build in {f} ({exc.strerror or exc}).", ExitCode.INPUT) from None
        for name, folder, pkg, cwd, ldflags, digest in plan:
            tmp = scratch[folder]
            out_name = PACKAGES[name][1] if name in PACKAGES else name
            shown = name if folder == d else f"{name} {OLD_KUBE_VERSION}"
            say(f"building {shown} ({pkg}) …")
            t0 = time.monotonic()
            cmd = [go, "build", "-trimpath", "-ldflags", ldflags, "-o", str(tmp / out_name), pkg]
            code, tail = _go_build(cmd, cwd, env, tmp / f"{out_name}.log")
            if code != 0:
                raise UserError(f"go build of {shown} failed (exit {code}):\n{tail}", ExitCode.INPUT)
            # Atomic per binary: a killed build never leaves a half-written executable under the final name.
            os.replace(tmp / out_name, folder / name)
            ours[folder][name] = _identity(folder / name)
            inputs = _manifest_inputs(folder)
            if digest is not None:
                inputs[name] = digest
            _write_manifest(folder, ours[folder], inputs, OLD_KUBE_VERSION if folder != d else KUBE_VERSION)
            say(f"  {shown}: {time.monotonic() - t0:.0f} s")
    finally:
        for tmp in scratch.values():
            shutil.rmtree(tmp, ignore_errors=True)
    return _everything(d, directory, nodes)


def _everything(d: pathlib.Path, directory: pathlib.Path | None, nodes: bool) -> dict[str, pathlib.Path]:
    found = check_dir(d)
    if nodes:
        found.update(node_binaries(directory.expanduser() if directory else None))
    return found


MANIFEST = ".dragoman-controlplane.json"  # what dragoman built in a folder: the binaries it may replace


def _identity(path: pathlib.Path) -> dict:
    st = path.stat()
    return {"size": st.st_size, "mtimeNs": st.st_mtime_ns}


def _manifest(d: pathlib.Path) -> dict[str, dict]:
    """{binary: identity} of the binaries dragoman built in `d` (empty when it built none there)."""
    import json

    from dragoman.fleet.safefile import read_bounded

    try:
        data = json.loads(read_bounded(str(d / MANIFEST), 64 * 1024, "the build manifest"))
    except (UserError, ValueError):
        return {}
    binaries = data.get("binaries") if isinstance(data, dict) else None
    return (
        {k: v for k, v in binaries.items() if isinstance(k, str) and isinstance(v, dict)}
        if isinstance(binaries, dict)
        else {}
    )


def _manifest_inputs(d: pathlib.Path) -> dict[str, str]:
    """{command: digest of the sources it was built from} for dragoman's own commands built in `d`."""
    import json

    from dragoman.fleet.safefile import read_bounded

    try:
        data = json.loads(read_bounded(str(d / MANIFEST), 64 * 1024, "the build manifest"))
    except (UserError, ValueError):
        return {}
    inputs = data.get("inputs") if isinstance(data, dict) else None
    return {k: v for k, v in inputs.items() if isinstance(v, str)} if isinstance(inputs, dict) else {}


def _write_manifest(
    d: pathlib.Path, ours: dict[str, dict], inputs: dict[str, str] | None = None, version: str = KUBE_VERSION
) -> None:
    import json

    from dragoman.fleet.safefile import write_atomic

    body: dict = {"builtBy": "dragoman controlplane build", "kubeVersion": version, "binaries": ours}
    if inputs:
        body["inputs"] = inputs
    write_atomic(str(d / MANIFEST), lambda f: f.write(json.dumps(body, indent=2) + "\n"), "the build manifest")


def _prepare_dir(d: pathlib.Path, *, default: bool, names: Iterable[str] = BINARIES) -> dict[str, dict]:
    """Make sure the build may write into `d`: a folder (made when absent) that dragoman can write, where every
    existing file of a binary's name is one dragoman built (its manifest says so; the default cache is dragoman's
    own). Returns the manifest of what is ours; a sentence otherwise."""
    import errno
    import stat

    try:
        st = os.stat(d)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        why = {
            errno.ELOOP: "it is a symbolic link that loops",
            errno.ENOTDIR: "a part of that path is a file, not a folder (XDG_CACHE_HOME?)",
        }.get(exc.errno or 0, exc.strerror or str(exc))
        raise UserError(f"cannot build into {d}: {why}.", ExitCode.INPUT) from None
    if st is not None and not stat.S_ISDIR(st.st_mode):
        raise UserError(f"cannot build into {d}: it is a file, not a folder; give a folder.", ExitCode.INPUT)
    if st is None:
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(
                f"cannot make the folder {d} ({exc.strerror or exc}); is a part of that path (XDG_CACHE_HOME?) a file?",
                ExitCode.INPUT,
            ) from None
    if not os.access(d, os.W_OK | os.X_OK):
        raise UserError(f"cannot build into {d}: dragoman may not write there (permission denied).", ExitCode.INPUT)
    ours = _manifest(d)
    for name in names:
        p = d / name
        if not os.path.lexists(p):
            continue
        if default and p.is_file() and not p.is_symlink():
            ours[name] = _identity(p)  # the default cache is dragoman's own folder
            continue
        try:
            mine = not p.is_symlink() and p.is_file() and ours.get(name) == _identity(p)
        except OSError:
            mine = False
        if not mine:
            raise UserError(
                f"refusing to build into {d}: {p} is already there and dragoman did not build it (no entry in "
                f"{MANIFEST}); move it away or give another --dir.",
                ExitCode.INPUT,
            )
    return ours


def _go() -> str:
    """The `go` on PATH, new enough to build the pinned Kubernetes; a sentence otherwise."""
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
    return go


def _go_build(cmd: list[str], cwd: pathlib.Path, env: dict, log: pathlib.Path) -> tuple[int, str]:
    """Run one `go build` in its own process group (ended with it on Ctrl+C, SIGTERM or any error, so no compiler
    is left running); (exit code, the last lines it wrote)."""
    with open(log, "wb") as out:
        proc = spawn(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        code = proc.wait()
    except BaseException:
        end_groups([proc], grace=0)
        raise
    forget(proc)
    with open(log, "rb") as f:
        f.seek(max(0, os.path.getsize(log) - 16384))
        tail = f.read().decode("utf-8", "replace")
    return code, "\n".join(tail.strip().splitlines()[-15:])
