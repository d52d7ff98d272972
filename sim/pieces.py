"""The pure API pieces of sim/api/ the server and store call, in one place."""

from __future__ import annotations

import json
from typing import Any

from dragoman.sim.api.openapi import openapi_v3_document, openapi_v3_index  # noqa: F401
from dragoman.sim.api.patch import (  # noqa: F401
    ApplyConflict,
    PatchError,
    apply_json_merge_patch,
    apply_json_patch,
    apply_strategic_merge_patch,
    server_side_apply,
    update_managed_fields,
)
from dragoman.sim.api.protobuf import decode_request, is_protobuf  # noqa: F401
from dragoman.sim.api.rbac import RequestAttributes, authorize, forbidden_message  # noqa: F401
from dragoman.sim.api.tables import table_for  # noqa: F401
from dragoman.sim.api.validation import (  # noqa: F401
    default_object,
    prepare_for_create,
    prepare_for_status_update,
    prepare_for_update,
    status_update_metadata,
    validate_object,
)


def dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()
