"""Real kubelets for a scenario's nodes on the real control plane (`dragoman sim serve --control-plane
--real-kubelets`): the node half of a rehearsal judged by upstream's own kubelet.

Each node gets, under the run's folder (nodes/nNN/, removed with it):
- a kubelet (v1.37.2, or the bridge-less v1.35.4 when the scenario says the node's kubelet is older than 1.36) with
  its own root dir, ports and loopback address (127.0.0.N), joining with a client certificate of the run's CA
  (CN=system:node:NAME, O=system:nodes: the API server's Node authorizer and NodeRestriction judge it);
- dragoman-cri, the image-less container runtime and supervisor (controlplane/cmd/dragoman-cri): it records what
  each container was given and runs the node's device plugin or DRA kubelet plugin (controlplane/cmd/...) while that
  DaemonSet's container runs;
- its own mount namespace (`unshare -m --propagation private`), shared by the runtime, the kubelet and the plugins,
  where the node's folders are bind-mounted over /var/lib (so /var/lib/kubelet/device-plugins and plugins_registry
  are the node's own) and /var/log (pod logs), and the machine files cAdvisor reads are the scenario's: /proc/cpuinfo,
  /proc/meminfo, /sys/devices/system/cpu and /sys/devices/system/node describe the node's CPUs and memory (so the
  real kubelet reports the scenario's capacity, not this machine's), and the six kernel tunables the kubelet sets
  (vm.overcommit_memory, kernel.panic, …) are files of the node's, so the host's are never changed. Mounts of a
  private namespace end with its last process: nothing is left mounted, whatever way the run ends.

The Python node agents (agents.py) keep the nodes without a real kubelet: they are told which nodes are not theirs.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterable
from typing import Any

import yaml
from dragoman.fleet.errors import ExitCode, UserError
from dragoman.fleet.k8s.quantity import parse_quantity
from dragoman.sim.controllers.base import MAX_RESTART_SECONDS, binding_request, max_restart_seconds
from dragoman.sim.controlplane import procgroups

# The kernel tunables kubelet v1.37 sets at start (pkg/kubelet/cm/container_manager_linux.go, setupKernelTunables),
# with the values it wants: each node's are files of its own, so the host's stay as they are.
KERNEL_TUNABLES = {
    "vm/overcommit_memory": "1",
    "vm/panic_on_oom": "0",
    "kernel/panic": "10",
    "kernel/panic_on_oops": "1",
    "kernel/keys/root_maxkeys": "1000000",
    "kernel/keys/root_maxbytes": "25000000",
}
# Which DaemonSet containers are a node's plugins: (image repository, container name glob, dragoman command).
SUPERVISED = (
    ("nvcr.io/nvidia/k8s-device-plugin", "nvidia-device-plugin*", "dragoman-device-plugin"),
    ("registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu", "gpus", "dragoman-dra-plugin"),
)
READY_TIMEOUT = 120.0
_MINOR = re.compile(r"^v?1\.(\d+)")


def select_nodes(objects: list[dict], selector: str) -> list[dict]:
    """The scenario's Nodes that get a real kubelet: all of them for "all", else those whose labels match the
    equality selector (`key=value,key2=value2`) or whose name is listed (`name1,name2`)."""
    nodes = [o for o in objects if o.get("kind") == "Node"]
    if selector == "all":
        return nodes
    terms = [t.strip() for t in selector.split(",") if t.strip()]
    if not terms:
        raise UserError(
            "--real-kubelets was given an empty selector; give `all`, NODE,NODE or KEY=VALUE.", ExitCode.INPUT
        )
    if all("=" in t for t in terms):
        want = dict(t.split("=", 1) for t in terms)
        chosen = [n for n in nodes if all((n["metadata"].get("labels") or {}).get(k) == v for k, v in want.items())]
    elif any("=" in t for t in terms):
        raise UserError(f"--real-kubelets {selector!r}: give node names or KEY=VALUE labels, not both.", ExitCode.INPUT)
    else:
        names = {n["metadata"]["name"] for n in nodes}
        unknown = [t for t in terms if t not in names]
        if unknown:
            raise UserError(
                f"--real-kubelets: the scenario has no node {unknown[0]!r} ({len(names)} nodes).", ExitCode.INPUT
            )
        chosen = [n for n in nodes if n["metadata"]["name"] in terms]
    if not chosen:
        raise UserError(f"--real-kubelets {selector!r} matches none of the scenario's nodes.", ExitCode.INPUT)
    return chosen


def kubelet_minor(node: dict) -> int | None:
    """The minor of the kubelet the scenario says the node runs (status.nodeInfo.kubeletVersion)."""
    m = _MINOR.match(((node.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion") or "")
    return int(m.group(1)) if m else None


def machine_size(node: dict) -> tuple[int, int]:
    """(CPUs, memory bytes) the scenario's node has (status.capacity), at least 1 CPU and 1 GiB."""
    cap = (node.get("status") or {}).get("capacity") or {}
    try:
        cpus = max(1, int(parse_quantity(str(cap.get("cpu", "8")))))
    except (ValueError, TypeError):
        cpus = 8
    try:
        mem = max(1 << 30, int(parse_quantity(str(cap.get("memory", "64Gi")))))
    except (ValueError, TypeError):
        mem = 64 << 30
    return min(cpus, 4096), mem


def scenario_reserved(node: dict) -> dict[str, str]:
    """kubeReserved for the real kubelet so its allocatable is the scenario's: capacity minus allocatable of CPU and
    memory (a cloud's reservations, e.g. GKE's), as the node's status in the scenario has them."""
    st = node.get("status") or {}
    cap, alloc = st.get("capacity") or {}, st.get("allocatable") or {}
    out = {}
    for name in ("cpu", "memory"):
        try:
            diff = parse_quantity(str(cap[name])) - parse_quantity(str(alloc[name]))
        except (KeyError, ValueError, TypeError):
            continue
        if diff > 0:
            out[name] = f"{int(diff * 1000)}m" if name == "cpu" else str(int(diff))
    return out


def write_machine(folder: pathlib.Path, cpus: int, memory: int) -> None:
    """The machine files cAdvisor reads, describing `cpus` CPUs (one socket, one NUMA node, no SMT) and `memory`
    bytes, built from this machine's own files so every other line is as the kernel writes it."""
    folder.mkdir(parents=True, exist_ok=True)
    kib = memory // 1024
    # /proc/meminfo: MemTotal is the node's; what is free is what is free here, capped at the total.
    lines = []
    for line in pathlib.Path("/proc/meminfo").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key == "MemTotal":
            line = f"MemTotal:       {kib} kB"
        elif key in ("MemFree", "MemAvailable"):
            have = int(rest.split()[0])
            line = f"{key}:{' ' * max(1, 15 - len(key))}{min(have, kib)} kB"
        lines.append(line)
    (folder / "meminfo").write_text("\n".join(lines) + "\n")
    # /proc/cpuinfo: this machine's first processor's block, once per CPU with its ids.
    block = pathlib.Path("/proc/cpuinfo").read_text().split("\n\n")[0].splitlines()
    out = []
    for i in range(cpus):
        for line in block:
            key = line.split(":", 1)[0].strip()
            value = {
                "processor": i,
                "physical id": 0,
                "siblings": cpus,
                "core id": i,
                "cpu cores": cpus,
                "apicid": i,
                "initial apicid": i,
            }.get(key)
            out.append(line if value is None else f"{line.split(':', 1)[0]}: {value}")
        out.append("")
    (folder / "cpuinfo").write_text("\n".join(out) + "\n")
    span = f"0-{cpus - 1}" if cpus > 1 else "0"
    cpu = folder / "cpu"
    cpu.mkdir()
    for name in ("online", "possible", "present"):
        (cpu / name).write_text(span + "\n")
    (cpu / "offline").write_text("\n")
    (cpu / "kernel_max").write_text("8191\n")
    node = folder / "node"
    (node / "node0" / "hugepages").mkdir(parents=True)
    for i in range(cpus):
        topo = cpu / f"cpu{i}" / "topology"
        topo.mkdir(parents=True)
        (cpu / f"cpu{i}" / "online").write_text("1\n")
        for name, value in (
            ("core_id", i),
            ("physical_package_id", 0),
            ("die_id", 0),
            ("thread_siblings_list", i),
            ("core_cpus_list", i),
            ("core_siblings_list", span),
            ("package_cpus_list", span),
        ):
            (topo / name).write_text(f"{value}\n")
        (node / "node0" / f"cpu{i}").symlink_to(f"../../cpu/cpu{i}")
    for name in ("online", "possible", "has_cpu", "has_memory", "has_normal_memory"):
        (node / name).write_text("0\n")
    (node / "node0" / "cpulist").write_text(span + "\n")
    (node / "node0" / "distance").write_text("10\n")
    (node / "node0" / "meminfo").write_text(
        f"Node 0 MemTotal:       {kib} kB\nNode 0 MemFree:        {kib} kB\nNode 0 MemUsed:        0 kB\n"
    )
    sysctl = folder / "sysctl"
    for key in KERNEL_TUNABLES:
        p = sysctl / key
        p.parent.mkdir(parents=True, exist_ok=True)
        # As the host has it now: the kubelet reads it, finds it not as it wants, and writes the node's own copy.
        p.write_text(pathlib.Path("/proc/sys", key).read_text())


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _ip_in_use(ip: str) -> bool:
    """True when something listens on `ip` already (another run's kubelet): the next address is taken instead."""
    for line in _proc_net_tcp():
        if line[0] == ip:
            return True
    return False


def _proc_net_tcp() -> Iterable[tuple[str, int]]:
    try:
        text = pathlib.Path("/proc/net/tcp").read_text()
    except OSError:
        return
    for row in text.splitlines()[1:]:
        parts = row.split()
        if len(parts) < 4 or parts[3] != "0A":  # LISTEN
            continue
        addr, port = parts[1].split(":")
        raw = bytes.fromhex(addr)[::-1]
        yield ".".join(str(b) for b in raw), int(port, 16)


class KubeletEgress:
    """The API server's way to the kubelets (its egress selector's "cluster" traffic): an HTTP CONNECT proxy on a
    unix socket. Every kubelet reports this machine's address as its node IP (a kubelet refuses a loopback one) and
    listens on its own 127.0.0.N and port: the proxy finds the kubelet by the port the API server asks for."""

    def __init__(self, path: pathlib.Path, resolve: Any) -> None:
        self.path = path
        self.resolve = resolve  # port -> the kubelet's address, or None
        self._sock: socket.socket | None = None
        self._stop = threading.Event()
        self._conns: set[socket.socket] = set()
        self._lock = threading.Lock()

    def start(self) -> None:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(str(self.path))
        os.chmod(self.path, 0o600)
        s.listen(64)
        self._sock = s
        threading.Thread(target=self._accept, name="kubelet-egress", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()
        if self._sock is not None:
            self._sock.close()
        with self._lock:
            for c in list(self._conns):
                c.close()
        self.path.unlink(missing_ok=True)

    def _accept(self) -> None:
        assert self._sock is not None
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        upstream: socket.socket | None = None
        try:
            conn.settimeout(30)
            head = b""
            while b"\r\n\r\n" not in head and len(head) < 8192:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                head += chunk
            line = head.split(b"\r\n", 1)[0].decode("latin-1").split()
            if len(line) < 2 or line[0] != "CONNECT" or ":" not in line[1]:
                conn.sendall(b"HTTP/1.1 405 Method Not Allowed\r\n\r\n")
                return
            port = int(line[1].rsplit(":", 1)[1])
            ip = self.resolve(port)
            if ip is None:
                conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\n\r\nno real kubelet listens on that port\n")
                return
            upstream = socket.create_connection((ip, port), timeout=10)
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            rest = head.split(b"\r\n\r\n", 1)[1]
            if rest:
                upstream.sendall(rest)
            conn.settimeout(None)
            upstream.settimeout(None)
            with self._lock:
                self._conns.update((conn, upstream))
            t = threading.Thread(target=_pipe, args=(upstream, conn), daemon=True)
            t.start()
            _pipe(conn, upstream)
            t.join(5)
        except (OSError, ValueError):
            pass
        finally:
            with self._lock:
                self._conns.discard(conn)
                if upstream is not None:
                    self._conns.discard(upstream)
            conn.close()
            if upstream is not None:
                upstream.close()


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass


class NodeProcs:
    """One node's processes and files."""

    def __init__(self, name: str, folder: pathlib.Path, ip: str, version: str) -> None:
        self.name = name
        self.dir = folder
        self.ip = ip
        self.version = version
        self.runtime: subprocess.Popen | None = None
        self.kubelet: subprocess.Popen | None = None
        self.port = 0
        self.stopped: set[str] = set()  # "kubelet", "runtime": stopped by fault()

    @property
    def record_path(self) -> pathlib.Path:
        return self.dir / "containers.json"

    @property
    def control_socket(self) -> pathlib.Path:
        return self.dir / "control.sock"


def check_host() -> None:
    """What real kubelets need of this machine, said before anything starts: root (mount namespaces, bind mounts)
    and util-linux's unshare and nsenter."""
    if os.geteuid() != 0:
        raise UserError(
            "--real-kubelets needs root: each node's kubelet runs in a mount namespace of its own (unshare -m) with "
            "the node's folders bind-mounted; run as root, or leave --real-kubelets out (the node agents run every "
            "node).",
            ExitCode.INPUT,
        )
    for tool in ("unshare", "nsenter", "mount"):
        if shutil.which(tool) is None:
            raise UserError(f"--real-kubelets needs {tool} (util-linux) on PATH.", ExitCode.INPUT)


# What one kubelet v1.37 holds open (cAdvisor's watchers, the plugin watcher, its config and certificate watchers):
# counted on this machine. Linux allows fs.inotify.max_user_instances per user (128 by default), so the default
# allows about 20 real kubelets, whatever the CPUs and memory.
INOTIFY_PER_KUBELET = 6


def inotify_room() -> tuple[int, int]:
    """(fs.inotify.max_user_instances, how many inotify instances processes hold now)."""
    try:
        limit = int(pathlib.Path("/proc/sys/fs/inotify/max_user_instances").read_text())
    except (OSError, ValueError):
        return 1 << 30, 0
    used = 0
    for fd_dir in pathlib.Path("/proc").glob("[0-9]*/fd"):
        try:
            for fd in fd_dir.iterdir():
                try:
                    if os.readlink(fd) == "anon_inode:inotify":
                        used += 1
                except OSError:
                    continue
        except OSError:
            continue
    return limit, used


def check_room(count: int) -> None:
    """A sentence, before anything starts, when this machine cannot hold `count` more kubelets."""
    limit, used = inotify_room()
    need = INOTIFY_PER_KUBELET * count
    if used + need > limit:
        raise UserError(
            f"{count} real kubelets need about {need} inotify instances; this machine allows {limit} "
            f"(fs.inotify.max_user_instances) and {used} are in use. Choose fewer nodes with --real-kubelets NODES, "
            f"or raise the limit: sysctl -w fs.inotify.max_user_instances={max(1024, 2 * (used + need))}.",
            ExitCode.INPUT,
        )


def restart_period(node: dict) -> str | None:
    """The node's MAX_RESTART_SECONDS as the KubeletConfiguration's maxContainerRestartPeriod ("2s"); None when it
    has none; a sentence when it says something the kubelet would refuse (its validation: 1 s to 300 s)."""
    raw = ((node.get("metadata") or {}).get("annotations") or {}).get(MAX_RESTART_SECONDS)
    if raw is None:
        return None
    n = max_restart_seconds(node)
    if n is None:
        raise UserError(
            f"node {node['metadata'].get('name')}: {MAX_RESTART_SECONDS} is {str(raw)[:40]!r}; give a whole number of "
            "seconds from 1 to 300 (the kubelet's maxContainerRestartPeriod), or remove it.",
            ExitCode.INPUT,
        )
    return f"{n}s"


class RealKubelets:
    """Start a real kubelet (and its runtime) per chosen node; `stop()` ends them all and removes their files."""

    def __init__(
        self,
        cp: Any,
        nodes: list[dict],
        binaries: dict[str, pathlib.Path],
        *,
        objects: list[dict] | None = None,
        log: Any = None,
    ) -> None:
        self.cp = cp
        self.nodes = list(nodes)
        self.bin = binaries
        self.objects = objects or []
        self.log = log or (lambda _line: None)
        self.procs: dict[str, NodeProcs] = {}
        self.root = pathlib.Path(cp.dir) / "nodes"
        # stop() may come from another thread while start() spawns (a SIGTERM at startup): spawning and stopping take
        # this lock, and nothing is spawned once stop() began.
        self._lock = threading.Lock()
        self._stopping = False
        self.egress: KubeletEgress | None = None

    @property
    def names(self) -> set[str]:
        return {n["metadata"]["name"] for n in self.nodes}

    # ------------------------------------------------------------------ start

    def start(self) -> None:
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> None:
        self.root.mkdir(mode=0o700, exist_ok=True)
        if getattr(self.cp, "kubelet_egress", False):
            self.egress = KubeletEgress(pathlib.Path(self.cp.dir) / "kubelet-egress.sock", self._address_of)
            self.egress.start()
        for index, node in enumerate(self.nodes):
            if self._stopping:
                raise UserError("the real kubelets were stopped while starting.", ExitCode.INPUT)
            self._start_node(index, node, self._next_address())

    def _next_address(self) -> str:
        taken = {p.ip for p in self.procs.values()}
        n = 2
        while f"127.0.0.{n}" in taken or _ip_in_use(f"127.0.0.{n}"):
            n += 1
        return f"127.0.0.{n}"

    def join(self, node: dict, timeout: float = READY_TIMEOUT) -> None:
        """A node joins while the cluster runs: its kubelet (and runtime) start and register it, as a machine added
        to a pool does; returns once the node is Ready. The node's labels are the Node object's (create it first,
        as a node pool's provisioner does, or the kubelet registers it with only its own labels)."""
        name = node["metadata"]["name"]
        if name in self.procs:
            raise UserError(f"node {name} has a real kubelet already.", ExitCode.INPUT)
        self.root.mkdir(mode=0o700, exist_ok=True)
        self.nodes.append(node)
        self._start_node(len(self.procs), node, self._next_address())
        deadline = time.monotonic() + timeout
        while True:
            self.check_alive()
            code, body = self.cp.request("GET", f"/api/v1/nodes/{name}")
            if code == 200 and isinstance(body, dict) and _ready(body):
                return
            if time.monotonic() > deadline:
                raise UserError(
                    f"the kubelet of node {name} was not Ready after {timeout:.0f} s; its log:\n"
                    f"{_tail(self.procs[name].dir / 'kubelet.log')}",
                    ExitCode.INPUT,
                )
            time.sleep(0.5)

    def _address_of(self, port: int) -> str | None:
        return next((p.ip for p in list(self.procs.values()) if p.port == port), None)

    def _start_node(self, index: int, node: dict, ip: str) -> None:
        name = node["metadata"]["name"]
        # A short folder name: unix socket paths (the runtime's, the plugins') must stay under 108 bytes.
        folder = self.root / f"n{index:02d}"
        for sub in ("var-lib/kubelet", "var-log"):
            (folder / sub).mkdir(parents=True, exist_ok=True)
        minor = kubelet_minor(node)
        old = minor is not None and minor < 36
        kubelet = self.bin["kubelet-v1.35.4"] if old else self.bin["kubelet"]
        procs = NodeProcs(name, folder, ip, "v1.35.4" if old else "v1.37.2")
        procs.port = _free_port(ip)
        self.procs[name] = procs
        cpus, memory = machine_size(node)
        write_machine(folder / "machine", cpus, memory)
        crt, key = self.cp.pki.client(f"node-{index:02d}", f"system:node:{name}", ("system:nodes",))
        kubeconfig = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "dragoman-cp",
                    "cluster": {"server": self.cp.url, "certificate-authority": str(self.cp.pki.path("ca.crt"))},
                }
            ],
            "users": [
                {"name": f"system:node:{name}", "user": {"client-certificate": str(crt), "client-key": str(key)}}
            ],
            "contexts": [{"name": "node", "context": {"cluster": "dragoman-cp", "user": f"system:node:{name}"}}],
            "current-context": "node",
        }
        (folder / "kubeconfig").write_text(yaml.safe_dump(kubeconfig))
        driver_env = {}
        if binding_request(node):
            # Binding conditions are the driver's controller's to write into claims' status, which the Node
            # authorizer refuses a node's identity: the node's DRA plugin gets a driver identity of its own for it.
            dcrt, dkey = self.cp.pki.client(f"driver-{index:02d}", f"dragoman:dra-driver:{name}", ("system:masters",))
            driver = {
                **kubeconfig,
                "users": [{"name": "dra-driver", "user": {"client-certificate": str(dcrt), "client-key": str(dkey)}}],
                "contexts": [{"name": "driver", "context": {"cluster": "dragoman-cp", "user": "dra-driver"}}],
                "current-context": "driver",
            }
            (folder / "driver.kubeconfig").write_text(yaml.safe_dump(driver))
            driver_env["DRAGOMAN_BINDING_KUBECONFIG"] = str(folder / "driver.kubeconfig")
        devices = folder / "devices.json"
        self._write_devices(node, devices)
        max_pods = ((node.get("status") or {}).get("capacity") or {}).get("pods", "110")
        config = {
            "apiVersion": "kubelet.config.k8s.io/v1beta1",
            "kind": "KubeletConfiguration",
            "address": ip,
            "port": procs.port,
            "readOnlyPort": 0,
            "healthzBindAddress": ip,
            "healthzPort": _free_port(ip),
            "authentication": {
                "anonymous": {"enabled": False},
                "webhook": {"enabled": False},
                "x509": {"clientCAFile": str(self.cp.pki.path("ca.crt"))},
            },
            "authorization": {"mode": "AlwaysAllow"},
            "cgroupsPerQOS": False,
            "enforceNodeAllocatable": [],
            "cgroupDriver": "cgroupfs",
            # This VM has cgroup v1 (hybrid); kubelet 1.35+ refuses it unless told.
            "failCgroupV1": False,
            "failSwapOn": False,
            "containerRuntimeEndpoint": f"unix://{folder}/cri.sock",
            "imageServiceEndpoint": f"unix://{folder}/cri.sock",
            # No eviction and no image garbage collection: the node's disk and memory are this machine's.
            "evictionHard": {},
            "imageGCHighThresholdPercent": 100,
            "imageGCLowThresholdPercent": 99,
            "resolvConf": "",
            # A cluster DNS address in the service range (nothing answers it; no container resolves names here),
            # so the kubelet does not warn MissingClusterDNS on every pod.
            "clusterDNS": ["10.96.0.10"],
            "clusterDomain": "cluster.local",
            "registerNode": True,
            "maxPods": int(max_pods) if str(max_pods).isdigit() else 110,
            "kubeAPIQPS": 50,
            "kubeAPIBurst": 100,
            "serializeImagePulls": False,
        }
        reserved = scenario_reserved(node)
        if reserved:
            config["kubeReserved"] = reserved
        restart = restart_period(node)
        if restart is not None:
            # A rehearsal's short crash-loop back-off (KubeletCrashLoopBackOffMax, on in v1.35 and v1.37).
            config["crashLoopBackOff"] = {"maxContainerRestartPeriod": restart}
        provider = (node.get("spec") or {}).get("providerID")
        if provider:
            config["providerID"] = provider
        (folder / "kubelet.yaml").write_text(yaml.safe_dump(config))
        # The runtime owns the namespace: it is made (and the node's files mounted) before it starts serving, so the
        # kubelet that joins it finds everything in place.
        mounts = [
            (folder / "var-lib", "/var/lib"),
            (folder / "var-log", "/var/log"),
            (folder / "machine" / "cpuinfo", "/proc/cpuinfo"),
            (folder / "machine" / "meminfo", "/proc/meminfo"),
            (folder / "machine" / "cpu", "/sys/devices/system/cpu"),
            (folder / "machine" / "node", "/sys/devices/system/node"),
        ] + [(folder / "machine" / "sysctl" / k, f"/proc/sys/{k}") for k in KERNEL_TUNABLES]
        runtime = [
            str(self.bin["dragoman-cri"]),
            f"--socket={folder}/cri.sock",
            f"--record={procs.record_path}",
            f"--control={procs.control_socket}",
            f"--log-dir={folder}",
            f"--node={name}",
        ]
        for image, container, command in SUPERVISED:
            if command in self.bin:
                runtime.append(f"--supervise=image={image},container={container},exec={self.bin[command]}")
        script = "set -e\n" + "".join(f"mount --bind '{src}' '{dst}'\n" for src, dst in mounts)
        script += "exec " + " ".join(f"'{a}'" for a in runtime) + "\n"
        env = {
            **os.environ,
            "DRAGOMAN_NODE": name,
            "DRAGOMAN_NODE_DEVICES": str(devices),
            "KUBECONFIG": str(folder / "kubeconfig"),
            "DRAGOMAN_KUBELET_ROOT": "/var/lib/kubelet",
            **driver_env,
        }
        with self._lock, open(folder / "runtime.log", "wb") as out:
            if self._stopping:
                raise UserError("the real kubelets were stopped while starting.", ExitCode.INPUT)
            procs.runtime = procgroups.spawn(
                ["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
            )
        deadline = time.monotonic() + 30
        while not (folder / "cri.sock").exists():
            if procs.runtime.poll() is not None:
                raise UserError(
                    f"the container runtime of node {name} exited with code {procs.runtime.returncode}: "
                    f"{_tail(folder / 'runtime.log')}",
                    ExitCode.INPUT,
                )
            if time.monotonic() > deadline:
                raise UserError(f"the container runtime of node {name} did not start in 30 s.", ExitCode.INPUT)
            time.sleep(0.05)
        with self._lock, open(folder / "kubelet.log", "wb") as out:
            if self._stopping:
                raise UserError("the real kubelets were stopped while starting.", ExitCode.INPUT)
            procs.kubelet = procgroups.spawn(
                [
                    "nsenter",
                    f"--mount=/proc/{procs.runtime.pid}/ns/mnt",
                    "--",
                    str(kubelet),
                    f"--config={folder}/kubelet.yaml",
                    f"--kubeconfig={folder}/kubeconfig",
                    "--root-dir=/var/lib/kubelet",
                    f"--hostname-override={name}",
                    "-v=1",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
            )
        self._write_index()
        self.log(f"node {name}: kubelet {procs.version} on {ip} ({cpus} CPUs, {memory >> 30} GiB)")

    def _write_index(self) -> None:
        """index.json in the nodes' folder: for each node its folder, kubelet version and address (what a test or a
        person reads to find a node's containers.json and control.sock)."""
        index = {p.name: {"folder": p.dir.name, "kubelet": p.version, "address": p.ip} for p in self.procs.values()}
        tmp = self.root / ".index.json"
        tmp.write_text(json.dumps(index, indent=1, sort_keys=True))
        os.replace(tmp, self.root / "index.json")

    def _write_devices(self, node: dict, path: pathlib.Path) -> None:
        """The node's devices (what its device plugin and DRA plugin serve), from the scenario's node: the same data
        the Python agents publish (nodedevices.py)."""
        try:
            from dragoman.sim.controlplane.nodedevices import write_node_devices  # type: ignore[import-not-found]
        except ImportError:  # before the plugins' module landed: no devices
            path.write_text(json.dumps({"node": node["metadata"]["name"], "devicePlugin": [], "gpus": []}))
            return
        write_node_devices(node, path)

    # ------------------------------------------------------------------ readiness

    def wait_ready(self, timeout: float = READY_TIMEOUT) -> None:
        """Until every real node is registered and Ready; a kubelet that exits says why."""
        deadline = time.monotonic() + timeout
        waiting = set(self.procs)
        while waiting:
            self.check_alive()
            for name in sorted(waiting):
                code, body = self.cp.request("GET", f"/api/v1/nodes/{name}")
                if code == 200 and isinstance(body, dict) and _ready(body):
                    waiting.discard(name)
            if not waiting:
                return
            if time.monotonic() > deadline:
                name = sorted(waiting)[0]
                raise UserError(
                    f"the kubelet of node {name} was not Ready after {timeout:.0f} s; its log:\n"
                    f"{_tail(self.procs[name].dir / 'kubelet.log')}",
                    ExitCode.INPUT,
                )
            time.sleep(0.5)

    def check_alive(self) -> None:
        for name, p in self.procs.items():
            for what, proc, log in (("kubelet", p.kubelet, "kubelet.log"), ("runtime", p.runtime, "runtime.log")):
                if proc is not None and proc.poll() is not None:
                    raise UserError(
                        f"the {what} of node {name} exited with code {proc.returncode}; its last words:\n"
                        f"{_tail(p.dir / log)}",
                        ExitCode.INPUT,
                    )

    # ------------------------------------------------------------------ faults

    def fault(self, node: str, what: str, on: bool) -> None:
        """Stop (`on`) or start again node `node`'s kubelet or its container runtime, as the Python agents play
        KUBELET_STOPPED and RUNTIME_DOWN:
        - "kubelet": SIGSTOP, then SIGCONT — no Lease renewal, no status, no pod sync, as a hung or unplugged
          machine; started again it is the same kubelet carrying on (its pods' containers kept running).
        - "runtime": dragoman-cri refuses every CRI call (`POST /down` on its control socket, then `/up`), as a
          containerd that is down: the kubelet says "container runtime is down" 30 s after its last good Status
          call. Containers and plugins keep running. (A runtime that hangs instead — SIGSTOP — is not the same: the
          kubelet's status update waits on its CRI calls for runtimeRequestTimeout, 2 min, and the node stays Ready
          with a fresh Lease meanwhile.)"""
        p = self.procs[node]
        proc = {"kubelet": p.kubelet, "runtime": p.runtime}[what]
        if proc is None or proc.poll() is not None:
            raise UserError(f"the {what} of node {node} is not running.", ExitCode.INPUT)
        if what == "kubelet":
            # The kubelet is the process nsenter became.
            os.kill(proc.pid, signal.SIGSTOP if on else signal.SIGCONT)
        else:
            code, text = _control(p.control_socket, "POST", "/down" if on else "/up")
            if code != 200:
                raise UserError(f"the runtime of node {node} refused /{'down' if on else 'up'}: {text}", ExitCode.INPUT)
        if on:
            p.stopped.add(what)
        else:
            p.stopped.discard(what)

    # ------------------------------------------------------------------ what tests read

    def record(self, node: str) -> dict:
        """What the node's runtime recorded: {"node", "containers": [...]}."""
        return json.loads(self.procs[node].record_path.read_text())

    # ------------------------------------------------------------------ stop

    def stop(self) -> None:
        """SIGTERM to every kubelet, then every runtime (which stops its plugins); SIGKILL after 10 s. Their files
        go with the run's folder; their mounts with their namespaces."""
        with self._lock:
            self._stopping = True
            groups = [p.kubelet for p in self.procs.values()] + [p.runtime for p in self.procs.values()]
        procgroups.end_groups(groups, grace=15, cont=True)
        if self.egress is not None:
            self.egress.stop()
        shutil.rmtree(self.root, ignore_errors=True)


def _control(sock: pathlib.Path, method: str, path: str) -> tuple[int, str]:
    """A request to a node runtime's control API (dragoman-cri --control, HTTP on a unix socket)."""
    import http.client

    class Conn(http.client.HTTPConnection):
        def connect(self) -> None:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(self.timeout)
            self.sock.connect(str(sock))

    conn = Conn("localhost", timeout=10)
    try:
        conn.request(method, path)
        resp = conn.getresponse()
        return resp.status, resp.read().decode("utf-8", "replace")
    finally:
        conn.close()


def _ready(node: dict) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (node.get("status") or {}).get("conditions") or ()
    )


def _tail(path: pathlib.Path, lines: int = 15) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - 16384))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.strip().splitlines()[-lines:])
