"""Kubernetes' CEL URL library (apiserver library/urls.go) over a port of Go 1.26's net/url parser (url.go,
encoding_table.go): `url()` and `isURL()` accept exactly what url.ParseRequestURI accepts, and the getters answer
as (*url.URL).Host, Hostname(), Port(), EscapedPath() and Query() do. Go strings are bytes: the parser works on the
UTF-8 bytes, so a non-ASCII character is one that must be escaped, as in Go."""

from __future__ import annotations

from dragoman.fleet.cel.netlib import NetParseError, parse_addr

# Which bytes each of Go's encoding modes leaves unescaped (encoding_table.go: table[c] & mode != 0).
_ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_KEEP = {
    "path": set(("$&+,-./:;=@_~" + _ALNUM).encode()),
    "host": set(("!\"$&'()*+,-.:;<=>[]_~" + _ALNUM).encode()),
    "zone": set(("!\"$&'()*+,-.:;<=>[]_~" + _ALNUM).encode()),
    "userPassword": set(("$&+,-.;=_~" + _ALNUM).encode()),
    "queryComponent": set(("-._~" + _ALNUM).encode()),
    "fragment": set(("!$&()*+,-./:;=?@_~" + _ALNUM).encode()),
}
_HEX = set(b"0123456789ABCDEFabcdef")


class URLError(Exception):
    """url.ParseRequestURI refused the string; the message is Go's error text."""


def _should_escape(c: int, mode: str) -> bool:
    return c not in _KEEP[mode]


def _unhex(c: int) -> int:
    return 9 * (c >> 6) + (c & 15)


def _go_quote(b: bytes) -> str:
    return '"' + b.decode("utf-8", "backslashreplace").replace('"', '\\"') + '"'


def _unescape(s: bytes, mode: str) -> bytes:
    n = 0
    has_plus = False
    i = 0
    while i < len(s):
        c = s[i]
        if c == 0x25:  # %
            n += 1
            if i + 2 >= len(s) or s[i + 1] not in _HEX or s[i + 2] not in _HEX:
                raise URLError(f"invalid URL escape {_go_quote(s[i : i + 3])}")
            if mode == "host" and _unhex(s[i + 1]) < 8 and s[i : i + 3] != b"%25":
                raise URLError(f"invalid URL escape {_go_quote(s[i : i + 3])}")
            if mode == "zone":
                v = _unhex(s[i + 1]) << 4 | _unhex(s[i + 2])
                if s[i : i + 3] != b"%25" and v != 0x20 and _should_escape(v, "host"):
                    raise URLError(f"invalid URL escape {_go_quote(s[i : i + 3])}")
            i += 3
        elif c == 0x2B:  # +
            has_plus = mode == "queryComponent"
            i += 1
        else:
            if mode in ("host", "zone") and c < 0x80 and _should_escape(c, mode):
                raise URLError(f"invalid character {_go_quote(s[i : i + 1])} in host name")
            i += 1
    if n == 0 and not has_plus:
        return s
    out = bytearray()
    i = 0
    while i < len(s):
        c = s[i]
        if c == 0x25:
            out.append(_unhex(s[i + 1]) << 4 | _unhex(s[i + 2]))
            i += 3
            continue
        out.append(0x20 if c == 0x2B and mode == "queryComponent" else c)
        i += 1
    return bytes(out)


def _escape(s: bytes, mode: str) -> bytes:
    out = bytearray()
    for c in s:
        if c == 0x20 and mode == "queryComponent":
            out.append(0x2B)
        elif _should_escape(c, mode):
            out += b"%" + f"{c:02X}".encode()
        else:
            out.append(c)
    return bytes(out)


def _valid_optional_port(port: bytes) -> bool:
    return port == b"" or (port[:1] == b":" and all(0x30 <= b <= 0x39 for b in port[1:]))


def _valid_encoded(s: bytes, mode: str) -> bool:
    return all(c in b"!$&'()*+,;=:@[]%" or not _should_escape(c, mode) for c in s)


def _valid_userinfo(s: str) -> bool:
    return all(ch.isascii() and (ch.isalnum() or ch in "-._:~!$&'()*+,;=%@") for ch in s)


class URL:
    """The parts of a *url.URL the library reads."""

    __slots__ = ("host", "path", "raw_path", "raw_query", "scheme", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.scheme = ""
        self.host = b""
        self.path = b""
        self.raw_path = b""
        self.raw_query = b""

    def key(self) -> tuple[str, str]:
        # Equal compares u.String(), which lowercases the scheme; the rest is kept as written (close enough to
        # String()'s re-escaping for any URL that round-trips).
        scheme_len = len(self.scheme) + 1 if self.scheme else 0
        return (self.scheme, self.text[scheme_len:])

    def __eq__(self, other: object) -> bool:
        return type(other) is URL and other.key() == self.key()

    def __hash__(self) -> int:
        return hash(("url", self.key()))

    def __repr__(self) -> str:
        return f"url({self.text!r})"

    def hostname(self) -> str:
        return _text(_split_host_port(self.host)[0])

    def port(self) -> str:
        return _text(_split_host_port(self.host)[1])

    def escaped_path(self) -> str:
        if self.raw_path and _valid_encoded(self.raw_path, "path"):
            try:
                if _unescape(self.raw_path, "path") == self.path:
                    return _text(self.raw_path)
            except URLError:
                pass
        if self.path == b"*":
            return "*"
        return _text(_escape(self.path, "path"))

    def query(self) -> dict[str, list[str]]:
        # url.ParseQuery, errors ignored (u.Query()); at most 10,000 parameters, else none.
        out: dict[str, list[str]] = {}
        q = self.raw_query
        if q.count(b"&") + 1 > 10000:
            return out
        for part in q.split(b"&") if q else []:
            if b";" in part or not part:
                continue
            key, _, value = part.partition(b"=")
            try:
                k, v = _unescape(key, "queryComponent"), _unescape(value, "queryComponent")
            except URLError:
                continue
            out.setdefault(_text(k), []).append(_text(v))
        return out


def _text(b: bytes) -> str:
    return b.decode("utf-8", "replace")


def _split_host_port(host: bytes) -> tuple[bytes, bytes]:
    port = b""
    colon = host.rfind(b":")
    if colon != -1 and _valid_optional_port(host[colon:]):
        host, port = host[:colon], host[colon + 1 :]
    if host.startswith(b"[") and host.endswith(b"]"):
        host = host[1:-1]
    return host, port


def _get_scheme(raw: bytes) -> tuple[bytes, bytes]:
    for i, c in enumerate(raw):
        if 0x61 <= c <= 0x7A or 0x41 <= c <= 0x5A:
            continue
        if 0x30 <= c <= 0x39 or c in b"+-.":
            if i == 0:
                return b"", raw
            continue
        if c == 0x3A:
            if i == 0:
                raise URLError("missing protocol scheme")
            return raw[:i], raw[i + 1 :]
        return b"", raw
    return b"", raw


def _parse_host(scheme: bytes, host: bytes) -> bytes:
    open_idx = host.rfind(b"[")
    if open_idx > 0:
        raise URLError("invalid IP-literal")
    if open_idx == 0:
        close_idx = host.rfind(b"]")
        if close_idx < 0:
            raise URLError("missing ']' in host")
        colon_port = host[close_idx + 1 :]
        if not _valid_optional_port(colon_port):
            raise URLError(f"invalid port {_go_quote(colon_port)} after host")
        unescaped_port = _unescape(colon_port, "host")
        hostname = host[1:close_idx]
        zone_idx = hostname.find(b"%25")
        if zone_idx >= 0:
            unescaped = _unescape(hostname[:zone_idx], "host") + _unescape(hostname[zone_idx:], "zone")
        else:
            unescaped = _unescape(hostname, "host")
        try:
            addr = parse_addr(unescaped.decode("utf-8", "surrogateescape"))
        except (NetParseError, UnicodeError) as exc:
            raise URLError(f"invalid host: {exc}") from None
        if addr.is4:
            raise URLError("invalid IP-literal")
        return b"[" + unescaped + b"]" + unescaped_port
    i = host.find(b":")
    if i != -1:
        last = host.rfind(b":")
        # urlstrictcolons (Go 1.26's default for a go 1.26 module): http and https keep the first colon.
        if last != i and scheme not in (b"http", b"https"):
            i = last
        colon_port = host[i:]
        if not _valid_optional_port(colon_port):
            raise URLError(f"invalid port {_go_quote(colon_port)} after host")
    return _unescape(host, "host")


def parse_request_uri(text: str) -> URL:
    """url.ParseRequestURI: an absolute URI or an absolute path (a '#' is no fragment here)."""
    return _parse_url(text, True)


def _parse_url(text: str, via_request: bool) -> URL:
    """net/url's parse()."""
    raw = text.encode("utf-8", "surrogateescape")
    if any(b < 0x20 or b == 0x7F for b in raw):
        raise URLError("net/url: invalid control character in URL")
    if raw == b"" and via_request:
        raise URLError("empty url")
    u = URL(text)
    if raw == b"*":
        u.path = b"*"
        return u
    scheme, rest = _get_scheme(raw)
    u.scheme = scheme.decode("ascii").lower()
    if rest.endswith(b"?") and rest.count(b"?") == 1:
        rest = rest[:-1]
    else:
        rest, _, u.raw_query = rest.partition(b"?")
    if not rest.startswith(b"/"):
        if u.scheme:
            return u  # opaque: no host, no path
        if via_request:
            raise URLError("invalid URI for request")
        if b":" in rest.split(b"/", 1)[0]:
            raise URLError("first path segment in URL cannot contain colon")
    if (u.scheme or (not via_request and not rest.startswith(b"///"))) and rest.startswith(b"//"):
        authority, rest = rest[2:], b""
        slash = authority.find(b"/")
        if slash >= 0:
            authority, rest = authority[:slash], authority[slash:]
        at = authority.rfind(b"@")
        u.host = _parse_host(scheme.lower(), authority[at + 1 :] if at >= 0 else authority)
        if at >= 0:
            userinfo = authority[:at]
            if not _valid_userinfo(_text(userinfo)):
                raise URLError("net/url: invalid userinfo")
            for part in userinfo.split(b":", 1):
                _unescape(part, "userPassword")
    path = _unescape(rest, "path")
    u.path = path
    u.raw_path = b"" if _escape(path, "path") == rest else rest
    return u


def url_of(text: str) -> URL:
    """The library's url(): ParseRequestURI, then url.Parse (which splits off a fragment)."""
    try:
        parse_request_uri(text)
        return _parse(text)
    except URLError as exc:
        raise URLError(f'URL parse error during conversion from string: parse "{text}": {exc}') from None


def _parse(text: str) -> URL:
    # url.Parse: the fragment is cut off first, then the same parser without the request rules.
    raw = text.encode("utf-8", "surrogateescape")
    head, _, frag = raw.partition(b"#")
    u = _parse_url(head.decode("utf-8", "surrogateescape"), False)
    if frag:
        _unescape(frag, "fragment")
    u.text = text
    return u


def is_url(text: str) -> bool:
    try:
        parse_request_uri(text)
    except URLError:
        return False
    return True
