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

import os
import stat
import tempfile
from collections.abc import Callable
from typing import IO

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


def read_bounded(path: str, limit: int, what: str) -> bytes:
    """The bytes of `path` (a regular file, or a pipe such as `<(command)`), refusing more than `limit` bytes."""
    try:
        with open(path, "rb") as f:
            mode = os.fstat(f.fileno()).st_mode
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
                # /dev/zero and friends never end; a terminal is not a file either.
                raise _err(f"{what} {path} is a device, not a file.")
            data = read_at_most(f, limit + 1)
    except FileNotFoundError:
        raise _err(f"{what} {path} does not exist.") from None
    except IsADirectoryError:
        raise _err(f"{what} {path} is a directory, not a file.") from None
    except PermissionError:
        raise _err(f"{what} {path} cannot be read (permission denied).") from None
    except OSError as exc:
        raise _err(f"{what} {path} cannot be read ({exc.strerror or exc}).") from None
    if len(data) > limit:
        raise _err(f"{what} {path} is larger than {limit // (1024 * 1024)} MiB; that is not what it should be.")
    return data


# ---------------------------------------------------------------------------- YAML with a bound on aliases

# Nodes a document may expand to through its aliases (a snapshot of a large fleet has ~10^7 scalars... see below).
MAX_YAML_NODES = 5_000_000


class YamlBomb(ValueError):
    """A YAML document whose aliases expand beyond the bound, or refer to themselves."""


def _expanded_size(node: object, memo: dict[int, int], limit: int, spent: int = 0) -> int:
    import yaml

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
    import yaml

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
