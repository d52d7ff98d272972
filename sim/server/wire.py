"""What requests and answers look like on the wire: content types, Accept negotiation, JSON answers, request bodies and
the write options every write reads."""

from __future__ import annotations

import json
from typing import Any

import yaml
from aiohttp import web
from dragoman.fleet import deflate
from dragoman.sim import pieces
from dragoman.sim.api import status as st
from dragoman.sim.store import ApiError

AGGREGATED_CT = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
JSON_CT = "application/json"


def _truthy(value: str | None) -> bool:
    return (value or "").lower() in ("1", "true", "yes")


# ---- Accept negotiation: what the real server can answer a GET or LIST with.
YAML_CT = "application/yaml"
PROTOBUF_CT = "application/vnd.kubernetes.protobuf"
_META_GROUP_VERSIONS = {("meta.k8s.io", "v1"), ("meta.k8s.io", "v1beta1")}


def negotiate(accept: str, is_list: bool) -> str:
    """The representation for an Accept header: "json", "yaml", "protobuf", "table" or "partial" (metadata only);
    406 NotAcceptable when no listed media type is one the server has, as the real server answers."""
    if not accept.strip():
        return "json"
    for part in accept.split(","):
        media, *params = [p.strip() for p in part.split(";")]
        media = media.lower()
        opts = dict(p.split("=", 1) for p in params if "=" in p)
        if opts.get("q") == "0":
            continue
        as_ = opts.get("as")
        if as_:
            if (
                media not in ("application/json", "application/yaml", "*/*", "application/*")
                or (opts.get("g"), opts.get("v")) not in _META_GROUP_VERSIONS
            ):
                continue
            if as_ == "Table":
                return "table"
            if as_ == ("PartialObjectMetadataList" if is_list else "PartialObjectMetadata"):
                return "partial"
            continue
        if media in (
            "application/json",
            "*/*",
            "application/*",
            "application/json-patch+json",
            "application/merge-patch+json",
        ):
            return "json"
        if media == YAML_CT:
            return "yaml"
        if media == PROTOBUF_CT:
            return "protobuf"
    raise ApiError(st.not_acceptable())


# kube-apiserver gzips a response to a client that accepts gzip once its first write passes 128 KiB
# (apiserver/pkg/endpoints/handlers/responsewriters: defaultGzipThresholdBytes, gzipContentEncodingLevel 1 — "least
# CPU, similar ratios"), adding Content-Encoding: gzip and Vary: Accept-Encoding. Watches are streamed, never gzipped.
GZIP_THRESHOLD_BYTES = 128 * 1024
GZIP_LEVEL = 1


def accepts_gzip(accept_encoding: str) -> bool:
    """responsewriters.ContentEncodingSupported: a comma-separated token that is exactly "gzip" (no q-values read)."""
    return any(token.strip() == "gzip" for token in accept_encoding.split(","))


def gzipped_like_apiserver(request: web.Request, resp: web.StreamResponse) -> web.StreamResponse:
    """The answer as kube-apiserver's deferredResponseWriter sends it: gzipped when large and accepted."""
    if type(resp) is not web.Response or "Content-Encoding" in resp.headers:
        return resp
    body = resp.body
    if not isinstance(body, (bytes, bytearray)) or len(body) <= GZIP_THRESHOLD_BYTES:
        return resp
    if not accepts_gzip(request.headers.get("Accept-Encoding", "")):
        return resp
    z = deflate.gzip_compressor(GZIP_LEVEL)
    resp.body = z.compress(body) + z.flush()
    resp.headers["Content-Encoding"] = "gzip"
    resp.headers.add("Vary", "Accept-Encoding")
    return resp


def _json(
    obj: Any, code: int = 200, headers: dict[str, str] | None = None, content_type: str = JSON_CT
) -> web.Response:
    return web.Response(body=pieces.dumps(obj), status=code, headers={"Content-Type": content_type, **(headers or {})})


def _status_response(status: dict, headers: dict[str, str] | None = None) -> web.Response:
    return _json(status, int(status.get("code", 500)), headers)


class WireMixin:
    """Request-body decoding and the query options of a write (dryRun, fieldValidation, fieldManager)."""

    async def _body(self, request: web.Request, allow_yaml: bool = True) -> Any:
        raw = await request.read()
        if not raw:
            return None
        ct = request.headers.get("Content-Type", "").split(";")[0].strip().lower()
        try:
            if pieces.is_protobuf(raw):
                return pieces.decode_request(raw)
            if ct in ("application/yaml", "application/apply-patch+yaml") and allow_yaml:
                return yaml.safe_load(raw)
            return json.loads(raw)
        except Exception as exc:  # noqa: BLE001 - any parse failure is the client's
            raise ApiError(st.bad_request(f"the request body could not be decoded: {exc}")) from None

    @staticmethod
    def _dry_run(request: web.Request, options: dict | None = None) -> bool:
        values = request.query.getall("dryRun", [])
        if options and isinstance(options.get("dryRun"), list):
            values = [*values, *options["dryRun"]]
        for v in values:
            if v != "All":
                raise ApiError(st.bad_request(f'dryRun: Unsupported value: "{v}": supported values: "All"'))
        return bool(values)

    @staticmethod
    def _field_validation(request: web.Request) -> str:
        mode = request.query.get("fieldValidation") or "Warn"
        if mode not in ("Strict", "Warn", "Ignore"):
            raise ApiError(
                st.bad_request(
                    f'fieldValidation: Unsupported value: "{mode}": supported values: "Ignore", "Strict", "Warn"'
                )
            )
        return mode

    @staticmethod
    def _manager(request: web.Request) -> str:
        fm = request.query.get("fieldManager")
        if fm:
            return fm
        ua = request.headers.get("User-Agent", "")
        return ua.split("/")[0] if ua else "unknown"
