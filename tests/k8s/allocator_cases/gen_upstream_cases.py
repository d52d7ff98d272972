"""Extract upstream's structured-allocator test table (k8s.io/dynamic-resource-allocation v0.37.2,
structured/internal/allocatortesting) into allocator_upstream_cases.json: data, not code.

The table is built by Go helpers, so a Go program reads it: this script copies the module out of the Go module
cache (`go env GOMODCACHE`) into a scratch directory, renames upstream's RunTestAllocator and allocationResult
there, adds dump_cases_test.go.txt (ours) whose replacements write every case as JSON, runs `go test -run TestDump`,
and writes the cases sorted by name. Run it again after moving to a new Kubernetes version:

    python tests/k8s/allocator_cases/gen_upstream_cases.py [--version v0.37.2]

It needs Go and network access for the test-only modules (gomega) on first run; nothing built is kept.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "allocator_upstream_cases.json"
MODULE = "k8s.io/dynamic-resource-allocation"
PACKAGE = "structured/internal/allocatortesting"
RENAMES = {
    "func RunTestAllocator(": "func runTestAllocatorUpstream(",
    "func allocationResult(": "func allocationResultUpstream(",
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--version", default="v0.37.2")
    args = ap.parse_args()
    modcache = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True).stdout.strip()
    src = Path(modcache) / f"{MODULE}@{args.version}"
    if not src.is_dir():
        print(f"{src} is not in the Go module cache; run: go mod download {MODULE}@{args.version}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="dra-allocator-cases-") as tmp:
        work = Path(tmp) / "module"
        shutil.copytree(src, work)
        for path in work.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        table = work / PACKAGE / "allocator_testing.go"
        text = table.read_text()
        for old, new in RENAMES.items():
            if text.count(old) != 1:
                print(f"{table}: expected exactly one {old!r}; upstream changed, update the dumper", file=sys.stderr)
                return 1
            text = text.replace(old, new)
        table.write_text(text)
        shutil.copy(HERE / "dump_cases_test.go.txt", work / PACKAGE / "zz_dragoman_dump_test.go")
        dump = Path(tmp) / "cases.json"
        env = dict(os.environ, DRAGOMAN_DUMP=str(dump), GOFLAGS="-mod=mod")
        proc = subprocess.run(
            ["go", "test", "-count=1", "-run", "^TestDump$", f"./{PACKAGE}/"],
            cwd=work,
            env=env,
            text=True,
            capture_output=True,
        )
        if proc.returncode != 0 or not dump.exists():
            print(proc.stdout[-4000:], proc.stderr[-4000:], file=sys.stderr)
            return 1
        cases: list[dict] = []
        for chunk in dump.read_text().split("\x1e"):
            if chunk.strip():
                cases.extend(json.loads(chunk))
    cases.sort(key=lambda c: c["name"])
    names = [c["name"] for c in cases]
    if len(set(names)) != len(names):
        print("duplicate case names between the two tables", file=sys.stderr)
        return 1
    doc = {
        "source": f"{MODULE}@{args.version} {PACKAGE} (TestAllocator, TestLexicographicalAllocator)",
        "generator": "tests/k8s/allocator_cases/gen_upstream_cases.py",
        "cases": cases,
    }
    OUT.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(cases)} cases to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
