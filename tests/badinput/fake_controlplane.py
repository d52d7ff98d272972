"""Fake control-plane binaries for the bad-input corpus: four scripts named as `dragoman controlplane build` names its
binaries, each answering `--version` as `behaviour` says (a real version, endless output, a hang, a daemon that
outlives its parent, garbage), and a kube-apiserver that serves /readyz and then dies, answers HTML, or hangs up
mid-answer. `make(dir, **behaviours)` writes them; nothing here starts a real server of Kubernetes."""

from __future__ import annotations

import pathlib
import sys

VERSIONS = {
    "etcd": "etcd Version: 3.7.0\nGit SHA: fake\n",
    "kube-apiserver": "Kubernetes v1.37.2\n",
    "kube-scheduler": "Kubernetes v1.37.2\n",
    "kube-controller-manager": "Kubernetes v1.37.2\n",
}

# What `NAME --version` does.
VERSION_BEHAVIOURS = ("ok", "endless", "hang", "daemon", "garbage", "silent", "crash", "huge-line")
# Not fuzzed: a daemon that calls setsid() leaves the process group run_bounded ends (see the report of issue 34).
ESCAPING = "daemon-setsid"

# What a running kube-apiserver does once /readyz has answered 200.
SERVE_BEHAVIOURS = ("die", "html", "hangup", "truncated-json")

_SCRIPT = r"""#!{python}
import os, signal, socket, ssl, sys, threading, time

NAME = {name!r}
VERSION = {version!r}
ON_VERSION = {on_version!r}
ON_SERVE = {on_serve!r}

if "--version" in sys.argv:
    if ON_VERSION == "ok":
        sys.stdout.write(VERSION)
    elif ON_VERSION == "endless":
        while True:
            sys.stdout.write("Kubernetes v1.37.2 " * 1000 + "\n")
    elif ON_VERSION == "hang":
        time.sleep(3600)
    elif ON_VERSION in ("daemon", "daemon-setsid"):
        sys.stdout.write(VERSION)
        sys.stdout.flush()
        if os.fork() == 0:  # a child that keeps the output open and outlives its parent
            if ON_VERSION == "daemon-setsid":
                os.setsid()  # and leaves the process group: what a real daemon does
            time.sleep(3600)
            os._exit(0)
    elif ON_VERSION == "garbage":
        sys.stdout.buffer.write(bytes(range(256)) * 64)
    elif ON_VERSION == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif ON_VERSION == "huge-line":
        sys.stdout.write("x" * (8 << 20))
    sys.exit(0)

if NAME != "kube-apiserver":
    signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
    while True:
        time.sleep(3600)

args = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(args["tls-cert-file"], args["tls-private-key-file"])
sock = socket.socket()
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.bind(("127.0.0.1", int(args["secure-port"])))
sock.listen(16)
signal.signal(signal.SIGTERM, lambda *a: os._exit(0))


def send(conn, ctype, body, length=None):
    head = "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %d\r\n" % (ctype, length or len(body))
    conn.sendall(head.encode() + (b"" if length else b"Connection: close\r\n") + b"\r\n" + body)


def answer(conn):
    try:
        data = b""
        while b"\r\n\r\n" not in data:
            part = conn.recv(65536)
            if not part:
                return
            data += part
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        while len(body) < length:
            part = conn.recv(65536)
            if not part:
                break
            body += part
        path = data.split(b" ", 2)[1].decode()
        if path.startswith("/readyz"):
            send(conn, "text/plain", b"ok")
            return
        if path.endswith("/serviceaccounts/default"):
            # The start's last wait passes: what follows (the loader, the node agents' lists) meets the behaviour.
            send(conn, "application/json", b'{{"kind": "ServiceAccount", "metadata": {{"name": "default"}}}}')
            return
        if ON_SERVE == "die":
            os._exit(3)
        if ON_SERVE == "html":
            send(conn, "text/html", b"<html><body>502 Bad Gateway</body></html>")
        elif ON_SERVE == "hangup":
            send(conn, "application/json", b'{{"kind":', length=1000)
        elif ON_SERVE == "truncated-json":
            send(conn, "application/json", b'{{"kind": "ServiceAccount", "metadata": {{"name": ')
    except (OSError, ssl.SSLError):
        pass
    finally:
        try:
            conn.close()
        except OSError:
            pass


while True:
    raw, _ = sock.accept()
    try:
        conn = ctx.wrap_socket(raw, server_side=True)
    except (OSError, ssl.SSLError):
        raw.close()
        continue
    threading.Thread(target=answer, args=(conn,), daemon=True).start()
"""


def make(directory: pathlib.Path, *, on_version: dict[str, str] | None = None, on_serve: str = "html") -> pathlib.Path:
    """The four fake binaries in `directory`; `on_version[name]` says what that one's --version does (default ok)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, version in VERSIONS.items():
        path = directory / name
        path.write_text(
            _SCRIPT.format(
                python=sys.executable,
                name=name,
                version=version,
                on_version=(on_version or {}).get(name, "ok"),
                on_serve=on_serve,
            )
        )
        path.chmod(0o755)
    return directory
