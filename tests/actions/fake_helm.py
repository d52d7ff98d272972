"""A fake `helm` for the switch tests: records every call, answers get values / list from a state file, and on upgrade
applies what the chart would to the simulator's DaemonSets.

`install(dir, releases)` writes the state and a `helm` wrapper into `dir`; put `dir` first on PATH. Calls land in
`dir/calls.jsonl` as {"argv": [...], "values": {...} (the -f file's content), "dryRun": bool}.
"""

from __future__ import annotations

import json
import os
import pathlib
import ssl
import sys
import urllib.request

import yaml

CHART_DAEMONSETS = {
    # chart -> (DaemonSet name template, values path of the node affinity)
    "nvidia-device-plugin": ("{release}-nvidia-device-plugin", ("affinity",)),
    "dra-driver-nvidia-gpu": ("{release}-kubelet-plugin", ("kubeletPlugin", "affinity")),
}


def install(directory: pathlib.Path, releases: dict) -> pathlib.Path:
    """releases: {"<ns>/<name>": {"chart": "<chart>-<version>", "app_version": "...", "values": {...}}}."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "releases.json").write_text(json.dumps(releases))
    wrapper = directory / "helm"
    wrapper.write_text(
        f'#!/bin/sh\nFAKE_HELM_DIR={directory} exec {sys.executable} {pathlib.Path(__file__).resolve()} "$@"\n'
    )
    wrapper.chmod(0o755)
    return wrapper


def calls(directory: pathlib.Path) -> list[dict]:
    path = directory / "calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def releases(directory: pathlib.Path) -> dict:
    return json.loads((directory / "releases.json").read_text())


def _flag(argv: list[str], *names: str) -> str | None:
    for i, a in enumerate(argv):
        for n in names:
            if a == n and i + 1 < len(argv):
                return argv[i + 1]
            if a.startswith(n + "="):
                return a.split("=", 1)[1]
    return None


def _positionals(argv: list[str]) -> list[str]:
    out, skip = [], False
    takes = {
        "-n",
        "--namespace",
        "-o",
        "--output",
        "-f",
        "--values",
        "--version",
        "--repo",
        "--kubeconfig",
        "--kube-context",
        "--filter",
    }
    for a in argv:
        if skip:
            skip = False
            continue
        if a in takes:
            skip = True
            continue
        if a.startswith("-"):
            continue
        out.append(a)
    return out


def _api(argv: list[str], method: str, path: str, body: dict | None = None) -> dict:
    with open(_flag(argv, "--kubeconfig") or os.environ["KUBECONFIG"]) as fh:
        cfg = yaml.safe_load(fh)
    ctx_name = _flag(argv, "--kube-context") or cfg["current-context"]
    ctx = next(c["context"] for c in cfg["contexts"] if c["name"] == ctx_name)
    server = next(c["cluster"]["server"] for c in cfg["clusters"] if c["name"] == ctx["cluster"])
    token = next(u["user"].get("token") for u in cfg["users"] if u["name"] == ctx["user"])
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(server + path, data=data, method=method)
    req.add_header("Authorization", f"Bearer {token}")
    req.add_header("Content-Type", "application/merge-patch+json" if method == "PATCH" else "application/json")
    sslctx = ssl.create_default_context()
    sslctx.check_hostname = False
    sslctx.verify_mode = ssl.CERT_NONE
    with urllib.request.urlopen(req, context=sslctx, timeout=30) as r:
        return json.loads(r.read() or b"{}")


def _get(values: dict, path: tuple[str, ...]):
    for p in path:
        values = (values or {}).get(p) or {}
    return values or None


def main(argv: list[str]) -> int:
    d = pathlib.Path(os.environ.get("FAKE_HELM_DIR") or pathlib.Path(__file__).parent)
    state = json.loads((d / "releases.json").read_text())
    pos = _positionals(argv)
    ns = _flag(argv, "-n", "--namespace") or "default"
    record: dict = {"argv": argv}
    try:
        if pos[:2] == ["get", "values"]:
            rel = state.get(f"{ns}/{pos[2]}")
            if rel is None:
                print("Error: release: not found", file=sys.stderr)
                return 1
            print(json.dumps(rel.get("values") or {}))
            return 0
        if pos[:1] == ["list"]:
            flt = (_flag(argv, "--filter") or "").strip("^$")
            out = [
                {
                    "name": k.split("/", 1)[1],
                    "namespace": k.split("/", 1)[0],
                    "chart": v["chart"],
                    "app_version": v.get("app_version", ""),
                    "revision": str(v.get("revision", 1)),
                    "status": "deployed",
                }
                for k, v in state.items()
                if k.startswith(ns + "/") and (not flt or k.split("/", 1)[1] == flt)
            ]
            print(json.dumps(out))
            return 0
        if pos[:1] == ["upgrade"]:
            release, chart_ref = pos[1], pos[2]
            chart = chart_ref.rstrip("/").rsplit("/", 1)[-1]
            version = _flag(argv, "--version") or ""
            values_file = _flag(argv, "-f", "--values")
            values = json.loads(pathlib.Path(values_file).read_text()) if values_file else {}
            record.update(values=values, dryRun=any(a.startswith("--dry-run") for a in argv))
            key = f"{ns}/{release}"
            if key not in state and "--install" not in argv:
                print(f'Error: UPGRADE FAILED: "{release}" has no deployed releases', file=sys.stderr)
                return 1
            if (
                chart == "dra-driver-nvidia-gpu"
                and values.get("resources", {}).get("gpus", {}).get("enabled", True)
                and values.get("gpuResourcesEnabledOverride") is not True
            ):
                print(
                    "Error: UPGRADE FAILED: resources.gpus.enabled needs gpuResourcesEnabledOverride=true "
                    "(do not run the device plugin on the same nodes)",
                    file=sys.stderr,
                )
                return 1
            if record["dryRun"]:
                return 0
            ds_name, path = CHART_DAEMONSETS[chart]
            affinity = _get(values, path)
            _api(
                argv,
                "PATCH",
                f"/apis/apps/v1/namespaces/{ns}/daemonsets/{ds_name.format(release=release)}",
                {"spec": {"template": {"spec": {"affinity": affinity}}}},
            )
            rel = state.setdefault(key, {"chart": f"{chart}-{version}", "app_version": version, "revision": 0})
            rel["values"] = values
            rel["revision"] = int(rel.get("revision", 1)) + 1
            rel["upgradedWith"] = f"{chart}-{version}"
            (d / "releases.json").write_text(json.dumps(state))
            print(f'Release "{release}" has been upgraded. Happy Helming!')
            return 0
        print(f"fake helm: unsupported {argv}", file=sys.stderr)
        return 1
    finally:
        with open(d / "calls.jsonl", "a") as f:
            f.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
