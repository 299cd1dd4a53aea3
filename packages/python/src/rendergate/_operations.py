"""Every operation the client calls, by the operationId of the server's OpenAPI document.

The clients build their requests from this table only, so tests/test_openapi_in_step.py can check
it against GET /v1/openapi.json: each operation exists there with this method and path, and each
operation of /v1 there is here (or listed as not for this client).
"""

from __future__ import annotations

from urllib.parse import quote

from ._options import bad

OPERATIONS: dict[str, tuple[str, str]] = {
    "getMe": ("GET", "/v1/me"),
    "listModels": ("GET", "/v1/models"),
    "getModel": ("GET", "/v1/models/detail"),
    "createQuote": ("POST", "/v1/quote"),
    "createGeneration": ("POST", "/v1/generations"),
    "listGenerations": ("GET", "/v1/generations"),
    "getGeneration": ("GET", "/v1/generations/{id}"),
    "deleteGeneration": ("DELETE", "/v1/generations/{id}"),
    "cancelGeneration": ("POST", "/v1/generations/{id}/cancel"),
    "getGenerationContent": ("GET", "/v1/generations/{id}/content"),
    "createUpload": ("POST", "/v1/uploads"),
    "listUploads": ("GET", "/v1/uploads"),
    "getUpload": ("GET", "/v1/uploads/{id}"),
    "deleteUpload": ("DELETE", "/v1/uploads/{id}"),
    "createWebhookEndpoint": ("POST", "/v1/webhook-endpoints"),
    "listWebhookEndpoints": ("GET", "/v1/webhook-endpoints"),
    "getWebhookEndpoint": ("GET", "/v1/webhook-endpoints/{id}"),
    "deleteWebhookEndpoint": ("DELETE", "/v1/webhook-endpoints/{id}"),
    "listWebhookDeliveries": ("GET", "/v1/webhook-endpoints/{id}/deliveries"),
    "getUsage": ("GET", "/v1/usage"),
}

OPTIONAL_OPERATIONS: dict[str, tuple[str, str]] = {
    # The live events of a render (server-sent events). A server without them answers 404, and
    # run() and wait() then follow the render with held reads (Prefer: wait) instead.
    "streamGenerationEvents": ("GET", "/v1/generations/{id}/events"),
}


def op(name: str, id: str | None = None) -> tuple[str, str]:
    """The method and path of an operation, its {id} filled in (escaped)."""
    method, path = OPERATIONS.get(name) or OPTIONAL_OPERATIONS[name]
    if "{id}" in path:
        if not id or not isinstance(id, str):
            raise bad("id", f"an id is required (a string such as 'gen_...'), not {id!r}.")
        path = path.replace("{id}", quote(id, safe=""))
    return method, path
