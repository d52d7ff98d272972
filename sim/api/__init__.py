"""Pure pieces of the API server: patches, tables, OpenAPI, RBAC, validation, protobuf envelopes."""
