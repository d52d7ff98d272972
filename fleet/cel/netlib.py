"""Kubernetes' CEL IP and CIDR library (apiserver pkg/cel/library ip.go, cidr.go) on Go's net/netip rules.

Python's `ipaddress` differs from Go's netip in the places upstream's tests look at (IPv4 fields with leading
zeros, IPv4-mapped IPv6 text, zones, the error texts), so the parser here follows netip.ParseAddr and
netip.ParsePrefix step by step, and the messages are netip's wrapped as the library wraps them.
"""

from __future__ import annotations

from typing import Any

_V4_IN_V6_PREFIX = 0xFFFF << 32


class NetParseError(Exception):
    """A netip parse error; the text is Go's err.Error()."""


class IP:
    """A `net.IP` value: a 128-bit address and whether it is IPv4 (netip.Addr without zones, which the library
    rejects)."""

    __slots__ = ("value", "is4", "zone")

    def __init__(self, value: int, is4: bool, zone: str = "") -> None:
        self.value = value  # IPv4 as a 32-bit int; IPv6 as a 128-bit int
        self.is4 = is4
        self.zone = zone

    @property
    def bit_len(self) -> int:
        return 32 if self.is4 else 128

    def is4in6(self) -> bool:
        return not self.is4 and (self.value >> 32) == 0xFFFF

    def unmap(self) -> IP:
        return IP(self.value & 0xFFFFFFFF, True) if self.is4in6() else self

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IP) and self.value == other.value and self.is4 == other.is4 and self.zone == other.zone

    def __hash__(self) -> int:
        return hash((self.value, self.is4))

    def __repr__(self) -> str:
        return f"ip({str(self)!r})"

    def __str__(self) -> str:
        if self.is4:
            return ".".join(str((self.value >> s) & 0xFF) for s in (24, 16, 8, 0))
        if self.is4in6():
            text = "::ffff:" + str(self.unmap())
        else:
            text = _string6(self.value)
        return text + ("%" + self.zone if self.zone else "")

    # netip.Addr predicates (Go 1.26).
    def is_loopback(self) -> bool:
        ip = self.unmap()
        return (ip.value >> 24) == 127 if ip.is4 else ip.value == 1

    def is_multicast(self) -> bool:
        ip = self.unmap()
        return ((ip.value >> 24) & 0xF0) == 0xE0 if ip.is4 else (ip.value >> 120) == 0xFF

    def is_link_local_multicast(self) -> bool:
        ip = self.unmap()
        if ip.is4:
            return (ip.value >> 8) == 0xE00000
        return ((ip.value >> 112) & 0xFF0F) == 0xFF02

    def is_link_local_unicast(self) -> bool:
        ip = self.unmap()
        if ip.is4:
            return (ip.value >> 16) == 0xA9FE
        return ((ip.value >> 112) & 0xFFC0) == 0xFE80

    def is_unspecified(self) -> bool:
        return self.value == 0 and not self.zone

    def is_global_unicast(self) -> bool:
        ip = self.unmap()
        if ip.is4 and ip.value in (0, 0xFFFFFFFF):
            return False
        if not ip.is4 and ip.value == 0 and not ip.zone:
            return False
        return not ip.is_loopback() and not ip.is_multicast() and not ip.is_link_local_unicast()


class CIDR:
    """A `net.CIDR` value: netip.Prefix, the address as written (not masked) and the prefix length."""

    __slots__ = ("ip", "bits")

    def __init__(self, ip: IP, bits: int) -> None:
        self.ip = ip
        self.bits = bits

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CIDR) and self.ip == other.ip and self.bits == other.bits

    def __hash__(self) -> int:
        return hash((self.ip, self.bits))

    def __repr__(self) -> str:
        return f"cidr({str(self)!r})"

    def __str__(self) -> str:
        return f"{self.ip}/{self.bits}"

    def masked(self) -> CIDR:
        return CIDR(_mask(self.ip, self.bits), self.bits)

    def contains(self, ip: IP) -> bool:
        # netip.Prefix.Contains: same family only (an IPv4-mapped address does not match an IPv4 prefix).
        if ip.zone or ip.bit_len != self.ip.bit_len:
            return False
        shift = ip.bit_len - self.bits
        return (ip.value ^ self.ip.value) >> shift == 0

    def overlaps(self, other: CIDR) -> bool:
        if self == other:
            return True
        if self.ip.is4 != other.ip.is4:
            return False
        bits = min(self.bits, other.bits)
        if bits == 0:
            return True
        return _mask(self.ip, bits) == _mask(other.ip, bits)

    def contains_cidr(self, other: CIDR) -> bool:
        # cidr.go cidrContainsCIDR.
        return self.overlaps(other) and self.bits <= other.bits


def _mask(ip: IP, bits: int) -> IP:
    width = ip.bit_len
    keep = ((1 << bits) - 1) << (width - bits) if bits else 0
    return IP(ip.value & keep, ip.is4)


def _string6(v: int) -> str:
    groups = [(v >> (112 - 16 * i)) & 0xFFFF for i in range(8)]
    # RFC 5952 as netip's appendTo6: the longest run (first on ties) of at least two zero groups becomes ::.
    zs, ze = 255, 255
    for i in range(8):
        j = i
        while j < 8 and groups[j] == 0:
            j += 1
        if j - i >= 2 and j - i > ze - zs:
            zs, ze = i, j
    out = []
    i = 0
    while i < 8:
        if i == zs:
            out.append("::")
            i = ze
            if i >= 8:
                break
        elif i > 0:
            out.append(":")
        out.append(format(groups[i], "x"))
        i += 1
    return "".join(out)


def _quote(s: str) -> str:
    """Go's strconv.Quote for the strings these errors carry."""
    out = ['"']
    for ch in s:
        c = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif c < 0x20 or c == 0x7F:
            out.append(f"\\x{c:02x}")
        elif ch.isprintable():
            out.append(ch)
        elif c <= 0xFFFF:
            out.append(f"\\u{c:04x}")
        else:
            out.append(f"\\U{c:08x}")
    out.append('"')
    return "".join(out)


def _addr_error(raw: str, msg: str, at: str = "") -> NetParseError:
    text = f"ParseAddr({_quote(raw)}): {msg}"
    if at:
        text += f" (at {_quote(at)})"
    return NetParseError(text)


def _v4_fields(raw: str, s: str) -> int:
    val = pos = dig = 0
    fields = [0, 0, 0, 0]
    for i, ch in enumerate(s):
        if "0" <= ch <= "9":
            if dig == 1 and val == 0:
                raise _addr_error(raw, "IPv4 field has octet with leading zero")
            val = val * 10 + ord(ch) - 48
            dig += 1
            if val > 255:
                raise _addr_error(raw, "IPv4 field has value >255")
        elif ch == ".":
            if i == 0 or i == len(s) - 1 or s[i - 1] == ".":
                raise _addr_error(raw, "IPv4 field must have at least one digit", s[i:])
            if pos == 3:
                raise _addr_error(raw, "IPv4 address too long")
            fields[pos] = val
            pos += 1
            val = dig = 0
        else:
            raise _addr_error(raw, "unexpected character", s[i:])
    if pos < 3:
        raise _addr_error(raw, "IPv4 address too short")
    fields[3] = val
    return (fields[0] << 24) | (fields[1] << 16) | (fields[2] << 8) | fields[3]


def _parse6(raw: str) -> IP:
    s = raw
    zone = ""
    k = s.find("%")
    if k != -1:
        s, zone = s[:k], s[k + 1 :]
        if not zone:
            raise _addr_error(raw, "zone must be a non-empty string")
    ip = [0] * 16
    ellipsis = -1
    if len(s) >= 2 and s[0] == ":" and s[1] == ":":
        ellipsis = 0
        s = s[2:]
        if not s:
            return IP(0, False, zone)
    i = 0
    while i < 16:
        off = 0
        acc = 0
        while off < len(s):
            ch = s[off]
            if "0" <= ch <= "9":
                acc = (acc << 4) + ord(ch) - 48
            elif "a" <= ch <= "f":
                acc = (acc << 4) + ord(ch) - 87
            elif "A" <= ch <= "F":
                acc = (acc << 4) + ord(ch) - 55
            else:
                break
            if off > 3:
                raise _addr_error(raw, "each group must have 4 or less digits", s)
            if acc > 0xFFFF:
                raise _addr_error(raw, "IPv6 field has value >=2^16", s)
            off += 1
        if off == 0:
            raise _addr_error(raw, "each colon-separated field must have at least one digit", s)
        if off < len(s) and s[off] == ".":
            if ellipsis < 0 and i != 12:
                raise _addr_error(raw, "embedded IPv4 address must replace the final 2 fields of the address", s)
            if i + 4 > 16:
                raise _addr_error(raw, "too many hex fields to fit an embedded IPv4 at the end of the address", s)
            v4 = _v4_fields(raw, s)
            ip[i : i + 4] = [(v4 >> 24) & 0xFF, (v4 >> 16) & 0xFF, (v4 >> 8) & 0xFF, v4 & 0xFF]
            s = ""
            i += 4
            break
        ip[i] = acc >> 8
        ip[i + 1] = acc & 0xFF
        i += 2
        s = s[off:]
        if not s:
            break
        if s[0] != ":":
            raise _addr_error(raw, "unexpected character, want colon", s)
        if len(s) == 1:
            raise _addr_error(raw, "colon must be followed by more characters", s)
        s = s[1:]
        if s[0] == ":":
            if ellipsis >= 0:
                raise _addr_error(raw, "multiple :: in address", s)
            ellipsis = i
            s = s[1:]
            if not s:
                break
    if s:
        raise _addr_error(raw, "trailing garbage after address", s)
    if i < 16:
        if ellipsis < 0:
            raise _addr_error(raw, "address string too short")
        n = 16 - i
        for j in range(i - 1, ellipsis - 1, -1):
            ip[j + n] = ip[j]
        for j in range(ellipsis, ellipsis + n):
            ip[j] = 0
    elif ellipsis >= 0:
        raise _addr_error(raw, "the :: must expand to at least one field of zeros")
    return IP(int.from_bytes(bytes(ip), "big"), False, zone)


def parse_addr(raw: str) -> IP:
    """netip.ParseAddr; raises NetParseError with Go's message."""
    for ch in raw:
        if ch == ".":
            return IP(_v4_fields(raw, raw), True)
        if ch == ":":
            return _parse6(raw)
        if ch == "%":
            raise _addr_error(raw, "missing IPv6 address")
    raise _addr_error(raw, "unable to parse IP")


def parse_prefix(raw: str) -> CIDR:
    """netip.ParsePrefix; raises NetParseError with Go's message."""

    def err(msg: str) -> NetParseError:
        return NetParseError(f"netip.ParsePrefix({_quote(raw)}): {msg}")

    k = raw.rfind("/")
    if k < 0:
        raise err("no '/'")
    try:
        ip = parse_addr(raw[:k])
    except NetParseError as exc:
        raise err(str(exc)) from None
    if not ip.is4 and ip.zone:
        raise err("IPv6 zones cannot be present in a prefix")
    bits_text = raw[k + 1 :]
    bad = err("bad bits after slash: " + _quote(bits_text))
    if len(bits_text) > 1 and not ("1" <= bits_text[0] <= "9"):
        raise bad
    # strconv.Atoi: ASCII digits with an optional sign; anything else (or overflow) is an error.
    body = bits_text[1:] if bits_text[:1] in ("+", "-") else bits_text
    if not body or not all("0" <= c <= "9" for c in body) or len(body) > 19:
        raise bad
    bits = int(bits_text)
    if bits < 0 or bits > ip.bit_len:
        raise err("prefix length out of range")
    return CIDR(ip, bits)


# ---- the library's functions, with its error texts (library/ip.go, library/cidr.go) --------------------------


def parse_ip_addr(raw: str) -> IP:
    """library parseIPAddr: netip plus no zones and no IPv4-mapped IPv6; raises NetParseError."""
    try:
        addr = parse_addr(raw)
    except NetParseError as exc:
        raise NetParseError(f"IP Address {_quote(raw)} parse error during conversion from string: {exc}") from None
    if addr.zone:
        raise NetParseError(f"IP address {_quote(raw)} with zone value is not allowed")
    if addr.is4in6():
        raise NetParseError(f"IPv4-mapped IPv6 address {_quote(raw)} is not allowed")
    return addr


def parse_cidr(raw: str) -> CIDR:
    """library parseCIDR; raises NetParseError (the message stringToCIDR then wraps once more)."""
    try:
        net = parse_prefix(raw)
    except NetParseError as exc:
        raise NetParseError(f"network address parse error during conversion from string: {exc}") from None
    if net.ip.is4in6():
        raise NetParseError(f"IPv4-mapped IPv6 address {_quote(raw)} is not allowed")
    return net


def is_ip(raw: Any) -> bool:
    try:
        parse_ip_addr(raw)
        return True
    except NetParseError:
        return False


def is_cidr(raw: Any) -> bool:
    try:
        parse_cidr(raw)
        return True
    except NetParseError:
        return False
