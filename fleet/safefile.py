"""Files dragoman writes and reads on the operator's behalf, handled so that no path can destroy something else.

One home for the rules (issue 19), used by snapshots, `--write-kubeconfig`, the audit log and the debug trace:

- a target must be a regular file or absent: a directory, device node (`/dev/null`, `/dev/full`), FIFO, socket or
  a file of /proc is refused with a sentence, never replaced or written through;
- a symbolic link is refused rather than followed (O_NOFOLLOW on the last component), so a link planted at the
  path cannot redirect a write elsewhere;
- whole-file writes go to a temporary file in the same folder, created 0600, then are renamed over the target,
  so a crash leaves the old file or the new one, never half of one;
- appended files (the audit log, the trace) are opened without following links, checked to be regular after
  opening (no race between check and use), and get mode 0600 even when they already existed with another.

Reads of operator files are bounded: `read_bounded` refuses more than a limit, so `--kubeconfig /dev/zero` or an
endless FIFO ends with a sentence instead of filling memory.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import re
import stat
import tempfile
from collections.abc import Callable
from typing import IO

import yaml
from dragoman.fleet.errors import ExitCode, UserError


def _err(message: str) -> UserError:
    return UserError(message, ExitCode.INPUT)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


def _is_procfs(path: str) -> bool:
    # /proc and /sys files claim to be regular files of size 0; writing them changes the kernel, not a file.
    real = os.path.realpath(path)
    return real == "/proc" or real.startswith(("/proc/", "/sys/"))


def check_target(path: str, what: str) -> None:
    """Raise a sentence unless `path` is absent or a regular file that is not a link (and its folder exists)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise _err(f"cannot write {what} to {path}: the folder {folder} does not exist.") from None
        return
    except OSError as exc:
        raise _err(f"cannot write {what} to {path} ({exc.strerror or exc}).") from None
    except ValueError:
        raise _err(f"cannot write {what} to {path!r}: the path holds a NUL character.") from None
    if stat.S_ISLNK(st.st_mode):
        raise _err(f"refusing to write {what} to {path}: it is a symbolic link; give the path of the file itself.")
    if not stat.S_ISREG(st.st_mode) or _is_procfs(path):
        kind = _kind(st.st_mode) if not stat.S_ISREG(st.st_mode) else "a kernel file"
        raise _err(f"refusing to write {what} to {path}: it is {kind}, not a regular file.")


def write_atomic(path: str, write: Callable[[IO[str]], object], what: str) -> object:
    """Write a whole text file through `write(stream)`: a 0600 temporary file in the same folder, renamed over `path`.
    Returns what `write` returned. Raises a sentence when `path` may not be written (see check_target)."""
    check_target(path, what)
    folder = os.path.dirname(os.path.abspath(path))
    tmp = None
    try:
        # mkstemp creates the file 0600 with O_EXCL: nothing else can be at that name.
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", dir=folder)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            result = write(f)
            f.flush()
            os.fsync(f.fileno())
        check_target(path, what)  # nothing was swapped in while writing
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise _err(f"cannot write {what} to {path} ({exc.strerror or exc}).") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return result


def open_append(path: str, what: str) -> int:
    """An O_APPEND descriptor on a regular file (created 0600; an existing one is set to 0600); the caller closes it."""
    check_target(path, what)
    flags = (
        os.O_WRONLY
        | os.O_APPEND
        | os.O_CREAT
        | getattr(os, "O_NOFOLLOW", 0)
        | getattr(os, "O_CLOEXEC", 0)
        | getattr(os, "O_NONBLOCK", 0)
    )
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        raise _err(f"cannot write {what} to {path} ({exc.strerror or exc}).") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _err(f"refusing to write {what} to {path}: it is {_kind(st.st_mode)}, not a regular file.")
        if stat.S_IMODE(st.st_mode) != 0o600:
            os.fchmod(fd, 0o600)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_read_regular(path: str, what: str) -> int | None:
    """A read descriptor on a regular file, None when it does not exist; anything else at the path is a sentence."""
    try:
        fd = os.open(
            path,
            os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0),
        )
    except FileNotFoundError:
        return None
    except ValueError:
        raise _err(f"cannot read {what} {path!r}: the path holds a NUL character.") from None
    except OSError as exc:
        if os.path.islink(path):
            raise _err(
                f"refusing to read {what} {path}: it is a symbolic link; give the path of the file itself."
            ) from None
        raise _err(f"cannot read {what} {path} ({exc.strerror or exc}).") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or _is_procfs(path):
        os.close(fd)
        kind = _kind(st.st_mode) if not stat.S_ISREG(st.st_mode) else "a kernel file"
        raise _err(f"refusing to read {what} {path}: it is {kind}, not a regular file.")
    os.set_blocking(fd, True)
    return fd


def read_at_most(f: IO[bytes], limit: int) -> bytes:
    """Up to `limit` bytes of an open file, read in pieces: one read of `limit` bytes would allocate the whole bound
    (2 GiB for a snapshot) whatever the file holds."""
    parts: list[bytes] = []
    size = 0
    while size < limit:
        part = f.read(min(1 << 24, limit - size))
        if not part:
            break
        parts.append(part)
        size += len(part)
    return b"".join(parts)


# How long a read may wait for a pipe or FIFO to send its first byte, and then for it to end: `--scenario <(kubectl
# get ... -o yaml)` of a large cluster takes a while; a FIFO nobody ever writes, or a writer that never stops
# trickling, must still end with a sentence rather than hang the command.
READ_WAIT_SECONDS = 120.0


def _read_pipe(fd: int, limit: int, what: str, name: str, wait: float, anonymous: bool) -> bytes:
    """Up to `limit` + 1 bytes of a pipe or FIFO opened non-blocking, within `wait` seconds. A named FIFO without a
    writer reads as end-of-file before anyone opened it: it is waited for (until `wait`), not taken as empty; an
    anonymous pipe (`<(command)`, /dev/fd/N) at end-of-file has ended."""
    import select
    import time

    deadline = time.monotonic() + wait
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    parts: list[bytes] = []
    size = 0
    started = anonymous
    while size <= limit:
        left = deadline - time.monotonic()
        if left <= 0:
            said = "sent nothing" if not size else "did not finish"
            raise _err(f"{what} {name} is a pipe that {said} within {wait:g} seconds; give a file instead.")
        poller.poll(min(left, 0.2 if not started else left) * 1000)
        try:
            part = os.read(fd, min(1 << 24, limit + 1 - size))
        except BlockingIOError:
            continue
        if part:
            started = True
            parts.append(part)
            size += len(part)
        elif started:
            break  # end of file: the writer closed it
    return b"".join(parts)


def read_bounded(path: str, limit: int, what: str, *, wait: float | None = None) -> bytes:
    """The bytes of `path` (a regular file, or a pipe such as `<(command)` or a FIFO), refusing more than `limit`
    bytes, a device (/dev/zero), and a pipe that has not ended within `wait` seconds."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise _err(f"{what} {path} does not exist.") from None
    except IsADirectoryError:
        raise _err(f"{what} {path} is a directory, not a file.") from None
    except PermissionError:
        raise _err(f"{what} {path} cannot be read (permission denied).") from None
    except OSError as exc:
        raise _err(f"{what} {path} cannot be read ({exc.strerror or exc}).") from None
    except ValueError:  # a path from a file (a kubeconfig's token-file) may hold a NUL, which no path can
        raise _err(f"{what} {path!r} cannot be read: the path holds a NUL character.") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
            # /dev/zero and friends never end; a terminal is not a file either.
            raise _err(f"{what} {path} is a device, not a file.")
        if stat.S_ISDIR(mode):
            raise _err(f"{what} {path} is a directory, not a file.")
        if stat.S_ISFIFO(mode):
            wait = READ_WAIT_SECONDS if wait is None else wait
            anonymous = os.path.abspath(path).startswith(("/dev/fd/", "/proc/"))
            data = _read_pipe(fd, limit, what, path, wait, anonymous)
        else:
            os.set_blocking(fd, True)
            with os.fdopen(fd, "rb", closefd=False) as f:
                data = read_at_most(f, limit + 1)
    except OSError as exc:
        raise _err(f"{what} {path} cannot be read ({exc.strerror or exc}).") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise _err(f"{what} {path} is larger than {_size_words(limit)}; that is not what it should be.")
    return data


def read_stdin_bounded(limit: int, what: str) -> bytes:
    """Standard input, refusing more than `limit` bytes (`--snapshot -` fed from /dev/zero ends)."""
    import sys

    stream = getattr(sys.stdin, "buffer", None)
    try:
        if stream is not None:
            raw = read_at_most(stream, limit + 1)
        elif sys.stdin is None:
            raw = b""
        else:
            raw = sys.stdin.read(limit + 1).encode("utf-8", "surrogatepass")
    except (OSError, ValueError) as exc:  # a closed standard input
        raise _err(f"{what} on standard input cannot be read ({getattr(exc, 'strerror', None) or exc}).") from None
    if len(raw) > limit:
        raise _err(f"{what} on standard input is larger than {_size_words(limit)}.")
    return raw


def _size_words(n: int) -> str:
    if n >= 1 << 30 and not n % (1 << 30):
        return f"{n >> 30} GiB"
    if n >= 1 << 20:
        return f"{n // (1 << 20)} MiB"
    return f"{n} bytes"


# ---------------------------------------------------------------------------- YAML with a bound on aliases

# Nodes a document may expand to through its aliases (a snapshot of a large fleet has ~10^7 scalars... see below).
MAX_YAML_NODES = 5_000_000


class YamlBomb(ValueError):
    """A YAML document whose aliases expand beyond the bound, or refer to themselves."""


def _expanded_size(node: object, memo: dict[int, int], limit: int, spent: int = 0) -> int:

    stack: list[tuple[object, bool]] = [(node, False)]
    # Iterative post-order walk: deep nesting cannot overflow the interpreter's stack.
    while stack:
        n, done = stack.pop()
        key = id(n)
        if done:
            if isinstance(n, yaml.SequenceNode):
                total = 1 + sum(memo[id(c)] for c in n.value)
            elif isinstance(n, yaml.MappingNode):
                total = 1 + sum(memo[id(k)] + memo[id(v)] for k, v in n.value)
            else:
                total = 1
            if spent + total > limit:
                raise YamlBomb(f"its aliases expand to more than {limit} values")
            memo[key] = total
            continue
        if key in memo:
            if memo[key] < 0:
                raise YamlBomb("an alias refers to the value that contains it")
            continue
        if isinstance(n, (yaml.SequenceNode, yaml.MappingNode)):
            memo[key] = -1  # in progress: meeting it again below means a cycle
            stack.append((n, True))
            children = n.value if isinstance(n, yaml.SequenceNode) else [x for kv in n.value for x in kv]
            stack.extend((c, False) for c in children if id(c) not in memo or memo[id(c)] < 0)
        else:
            memo[key] = 1
    return memo[id(node)]


def yaml_documents(text: str, loader: type, *, limit: int = MAX_YAML_NODES) -> list:
    """Every document of `text`, refusing (YamlBomb) one whose anchors and aliases expand past `limit` values: a
    'billion laughs' of a few hundred bytes would otherwise build gigabytes. Without an anchor nothing is checked."""

    if "&" not in text:
        return list(yaml.load_all(text, Loader=loader))
    ld = loader(text)
    try:
        docs = []
        spent = 0  # one bound for the whole text: a stream of small bombs is refused as one big one is
        while ld.check_node():
            node = ld.get_node()
            spent += _expanded_size(node, {}, limit, spent)
            docs.append(ld.construct_document(node))
        return docs
    finally:
        ld.dispose()


# ---------------------------------------------------------------------------- the one bounded reader of documents


class KubernetesYamlLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """YAML as Kubernetes reads it: an unquoted `2026-01-02T03:04:05Z` stays the string it is (PyYAML would make a
    datetime, which no API object holds and the model cannot compare with the strings of other objects)."""


KubernetesYamlLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in KubernetesYamlLoader.yaml_implicit_resolvers.items()
}

MAX_ALIAS_VALUES = 1_000_000  # values YAML aliases may add to a text beyond its own length (kubectl writes none)
# A lone UTF-16 surrogate escape (`"\ud800"`) in JSON or YAML text: decodes to a str that cannot be printed or written.
# A text this long is parsed with the cyclic collector paused and what it made frozen after, as fleet/cluster.decode
# does with a LIST page: a fleet's file makes millions of containers and no reference cycles, and each full
# collection would rescan all of them, during the parse and for as long as they live (reference counting still frees
# them). A 5,000-node scenario's parse took 1.6 -> 0.7 s of CPU, its check after 3.4 -> 2.4 s.
PAUSE_GC_ABOVE = 1 << 20


@contextlib.contextmanager
def _gc_paused(size: int):
    if size < PAUSE_GC_ABOVE or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def has_surrogate(value: object) -> bool:
    """True when a decoded value holds a lone UTF-16 surrogate anywhere (keys included); iterative, any depth."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if any("\ud800" <= c <= "\udfff" for c in v):
                return True
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False


def parse_documents(
    data: bytes | str,
    subject: str,
    *,
    expect: str = "YAML",
    loader: type = KubernetesYamlLoader,
    extra_values: int = MAX_ALIAS_VALUES,
    max_depth: int | None = None,
) -> list:
    """The YAML or JSON documents of a text already in memory (a file's bytes, standard input, a server's answer),
    read with every bound: UTF-8 only, no lone surrogate, nesting as deep as libyaml allows (1,000) and no deeper
    than the interpreter's stack, and aliases that add at most `extra_values` values beyond the text's own (a
    'billion laughs' is refused before anything expands it); with `max_depth`, no value nested deeper than that (a
    walk of every value: for small inputs, whose readers copy and validate recursively). Anything else is one
    sentence (UserError, exit 2) that begins with `subject` ("the scenario demo.yaml") and says it is not `expect`."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            where = f"not UTF-8 at byte {exc.start + 1}"
            raise _err(f"{subject} is not {expect}: it is not a text file ({where}).") from None
    else:
        text = data
    with _gc_paused(len(text)):
        docs = _parse(text, subject, expect, loader, extra_values)
        if _SURROGATE_ESCAPE.search(text) and has_surrogate(docs):
            raise _err(
                f"{subject} is not {expect}: it holds a lone UTF-16 surrogate (\\ud800-\\udfff), which is not text."
            )
        if max_depth is not None:
            # A JSON text's depth is read from its brackets (a 40 MB scenario: 0.1 s against 0.6 s walking its
            # values); YAML's, with anchors and flow and block styles, from the values.
            json_text = data if isinstance(data, bytes) else text
            deep = 1 + json_depth(json_text, max_depth) if docs.__class__ is _JsonDocs else nesting_depth(docs)
            if deep > max_depth + 1:
                raise _err(f"{subject} is not {expect}: it is nested more than {max_depth} levels deep.")
    return list(docs) if docs.__class__ is _JsonDocs else docs


class _JsonDocs(list):
    """The one document of a text the JSON decoder read (parse_documents reads its depth from the text)."""


def _parse(text: str, subject: str, expect: str, loader: type, extra_values: int) -> list:
    docs: list | None = None
    if text.lstrip().startswith(("{", "[")):
        # JSON is YAML, but the JSON decoder is ~50x faster on a big List (`kubectl get -o json`).
        try:
            docs = _JsonDocs((json.loads(text),))
        except ValueError:
            docs = None  # flow-style YAML, or broken JSON: the YAML reader says where
        except RecursionError:
            raise _err(f"{subject} is not {expect}: it is nested too deeply.") from None
    if docs is None:
        try:
            docs = yaml_documents(text, loader, limit=len(text) + extra_values)
        except YamlBomb as exc:
            raise _err(f"{subject} is not {expect}: {exc}.") from None
        except RecursionError:
            raise _err(f"{subject} is not {expect}: it is nested too deeply.") from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            problem = getattr(exc, "problem", None) or "it cannot be parsed"
            if "maximum nesting depth" in problem:
                raise _err(f"{subject} is not {expect}: it is nested too deeply{where}.") from None
            said = f"is not valid YAML{where} ({problem})"
            raise _err(f"{subject} {said}." if expect == "YAML" else f"{subject} is not {expect}: it {said}.") from None
        except ValueError as exc:  # a YAML value the constructor refuses (an out-of-range date, a bad base64)
            raise _err(f"{subject} is not {expect}: {exc}.") from None
    return docs


_JSON_ESCAPE = re.compile(rb"\\.", re.S)
_JSON_STRING = re.compile(rb'"[^"]*"')
_JSON_BRACKETS = bytes.maketrans(b"{}", b"[]")
_JSON_NOT_BRACKETS = bytes(c for c in range(256) if c not in b'[]{}"')


def json_depth(text: bytes | str, limit: int | None = None) -> int:
    """nesting_depth of the value a JSON text holds (one the JSON decoder accepted), read from the text's brackets:
    escapes dropped, then every byte but brackets and quotes, then strings; then each pass takes away the innermost
    containers (`{}` counts as `[]`: in valid JSON the kinds nest alike), one level a pass. With `limit`, it stops
    counting past it. A key given twice counts the text of both values (the decoder keeps the last)."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if b"\\" in data:
        data = _JSON_ESCAPE.sub(b"", data)
    # Two quotes side by side are an empty string, or the end of one and the start of the next with nothing between:
    # dropping them leaves the strings as they were (less their contents), which the regex then takes away.
    s = data.translate(_JSON_BRACKETS, _JSON_NOT_BRACKETS).replace(b'""', b"")
    if b'"' in s:
        s = _JSON_STRING.sub(b"", s)
    depth = 0
    while s:
        inner = s.replace(b"[]", b"")
        if len(inner) == len(s):
            raise ValueError("the text's brackets do not nest: not a JSON text the decoder accepted")
        s = inner
        depth += 1
        if limit is not None and depth > limit:
            break
    return depth


def nesting_depth(value: object) -> int:
    """How deep mappings and lists nest in `value` (a scalar is 0, `{}` and `[]` are 1); iterative, any depth."""
    if not isinstance(value, (dict, list)):
        return 0
    # Only containers are stacked: a scalar is never deeper than the container holding it.
    deepest = 0
    stack: list[tuple[dict | list, int]] = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if depth > deepest:
            deepest = depth
        for c in v.values() if isinstance(v, dict) else v:
            if isinstance(c, (dict, list)):
                stack.append((c, depth + 1))
    return deepest


def read_documents(
    path: str,
    what: str,
    *,
    max_bytes: int,
    expect: str = "YAML",
    loader: type = KubernetesYamlLoader,
    extra_values: int = MAX_ALIAS_VALUES,
    max_depth: int | None = None,
    wait: float | None = None,
) -> list:
    """The one bounded reader of an operator's YAML or JSON file (snapshots, kubeconfigs, scenarios, plan files,
    allowlists): at most `max_bytes` (never a device; a pipe or FIFO within `wait` seconds, READ_WAIT_SECONDS
    unless given; "-" is standard input), then parse_documents' bounds. Every refusal is one sentence naming `what`
    and the path."""
    if path == "-":
        raw, subject = read_stdin_bounded(max_bytes, what), f"{what} on standard input"
    else:
        raw, subject = read_bounded(path, max_bytes, what, wait=wait), f"{what} {path}"
    return parse_documents(raw, subject, expect=expect, loader=loader, extra_values=extra_values, max_depth=max_depth)
