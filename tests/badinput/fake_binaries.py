"""Fake programs for the control-plane surfaces: a `go` that "builds" small scripts, and control-plane binaries that
hang, fork a daemon, print without end, or die without a word. Each is a small Python script written to a folder."""

from __future__ import annotations

import os
import pathlib
import sys

# What each fake binary answers to --version (the words build.version_of looks for).
VERSIONS = {
    "etcd": "etcd Version: 3.7.0",
    "kube-apiserver": "Kubernetes v1.37.2",
    "kube-scheduler": "Kubernetes v1.37.2",
    "kube-controller-manager": "Kubernetes v1.37.2",
    "kubelet": "Kubernetes v1.37.2",
}
_PKG_NAMES = {
    "k8s.io/kubernetes/cmd/kube-apiserver": "kube-apiserver",
    "k8s.io/kubernetes/cmd/kube-scheduler": "kube-scheduler",
    "k8s.io/kubernetes/cmd/kube-controller-manager": "kube-controller-manager",
    "go.etcd.io/etcd/server/v3": "etcd",
    "k8s.io/kubernetes/cmd/kubelet": "kubelet",
}


def script(path: pathlib.Path, body: str) -> pathlib.Path:
    path.write_text(f"#!{sys.executable}\nimport os, sys, time, subprocess\n{body}\n")
    path.chmod(0o755)
    return path


def answering(path: pathlib.Path, name: str) -> pathlib.Path:
    """A binary that answers --version as the real one of `name` does."""
    return script(path, f"print({VERSIONS[name]!r})")


def fake_go(folder: pathlib.Path) -> pathlib.Path:
    """`go env GOVERSION` says go1.26.1; `go build ... -o OUT PKG` writes a binary answering --version for PKG. With
    FAKE_GO_HANG set, a build starts a grandchild (`sleep`) and waits: the shape of a compiler run mid-build."""
    folder.mkdir(parents=True, exist_ok=True)
    versions = {pkg: VERSIONS[name] for pkg, name in _PKG_NAMES.items()}
    body = f"""
args = sys.argv[1:]
if args[:2] == ["env", "GOVERSION"]:
    print("go1.26.1"); sys.exit(0)
if args[:1] == ["build"]:
    if os.environ.get("FAKE_GO_HANG"):
        with open(os.environ["FAKE_GO_HANG"], "a") as f:
            f.write(str(os.getpid()) + "\\n")
        child = subprocess.Popen(["sleep", "300"])
        with open(os.environ["FAKE_GO_HANG"], "a") as f:
            f.write(str(child.pid) + "\\n")
        time.sleep(300)
    out = args[args.index("-o") + 1]
    if os.environ.get("FAKE_GO_LOG"):
        with open(os.environ["FAKE_GO_LOG"], "a") as f:
            f.write(os.path.basename(os.getcwd()) + " " + args[-1] + "\\n")
    # dragoman's own commands (./cmd/NAME) answer nothing in particular; the older kubelet's module says its version.
    answer = {versions!r}.get(args[-1], "a dragoman command")
    if args[-1] == "k8s.io/kubernetes/cmd/kubelet" and os.getcwd().endswith("kubelet-v1.35"):
        answer = "Kubernetes v1.35.4"
    with open(out, "w") as f:
        f.write("#!/bin/sh\\necho '" + answer + "'\\n")
    os.chmod(out, 0o755)
    sys.exit(0)
sys.exit(2)
"""
    return script(folder / "go", body)


def alive(pid: int) -> bool:
    """True while `pid` runs (a zombie counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def processes_mentioning(text: str) -> list[int]:
    """Pids of live processes whose command line holds `text` (not this test's own)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmd and alive(int(entry)):
            found.append(int(entry))
    return found
