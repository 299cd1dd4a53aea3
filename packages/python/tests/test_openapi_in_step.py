"""The Python client and the server's OpenAPI document (GET /v1/openapi.json, the document the
TypeScript SDK's types are generated from) say the same thing: every operation the client calls
exists with that method and path, every operation of /v1 is called, every TypedDict has the
schema's keys (required and optional), its enumerations' values and its nullable fields, and every
error status has its class. A change to the API that only one SDK follows fails here."""

from __future__ import annotations

import types
import typing
from typing import Any, Literal, Union, get_args, get_origin

import httpx
import pytest

from _server import Server
from rendergate import _types
from rendergate._errors import RendergateError, error_class
from rendergate._operations import OPERATIONS, OPTIONAL_OPERATIONS

NOT_FOR_THIS_CLIENT = {"getOpenApi"}  # the document itself

# Each TypedDict and where its schema is in the document.
SCHEMAS: dict[Any, str] = {
    _types.Field: "Field",
    _types.Model: "Model",
    _types.ModelDetail: "ModelDetail",
    _types.FileOutput: "Model/properties/output/oneOf/0",
    _types.TextOutput: "Model/properties/output/oneOf/1",
    _types.Me: "Me",
    _types.MeBudgets: "Me/properties/budgets",
    _types.Budget: "Budget",
    _types.MeKey: "Me/properties/key",
    _types.Quote: "Quote",
    _types.Generation: "Generation",
    _types.GenerationError: "Generation/properties/error",
    _types.Upload: "Upload",
    _types.Deleted: "Deleted",
    _types.WebhookEndpoint: "WebhookEndpoint",
    _types.WebhookDelivery: "WebhookDelivery",
    _types.WebhookEvent: "WebhookEvent",
    _types.UsageEntry: "UsageEntry",
    _types.Usage: "Usage",
}


@pytest.fixture(scope="module")
def doc(server: Server) -> Any:
    return httpx.get(f"{server.url}/v1/openapi.json", timeout=30).json()


def resolve(doc: Any, schema: Any) -> Any:
    """The schema a $ref names (followed until it is not one)."""
    while isinstance(schema, dict) and "$ref" in schema:
        node = doc
        for part in schema["$ref"].removeprefix("#/").split("/"):
            node = node[part]
        schema = node
    return schema


def schema_at(doc: Any, where: str) -> Any:
    node = doc["components"]["schemas"]
    for part in where.split("/"):
        node = node[int(part)] if isinstance(node, list) else node[part]
    return resolve(doc, node)


def literal_values(hint: Any) -> set[Any] | None:
    """The values of a Literal hint (inside `| None` or list[...]), else None."""
    if get_origin(hint) is Literal:
        return set(get_args(hint))
    if get_origin(hint) in (Union, types.UnionType):
        found = [literal_values(a) for a in get_args(hint) if a is not type(None)]
        return found[0] if len(found) == 1 else None
    if get_origin(hint) is list:
        return literal_values(get_args(hint)[0])
    return None


def allows_none(hint: Any) -> bool:
    return get_origin(hint) in (Union, types.UnionType) and type(None) in get_args(hint)


def schema_values(doc: Any, schema: Any) -> set[Any] | None:
    if schema.get("type") == "array":
        return schema_values(doc, resolve(doc, schema["items"]))
    if "const" in schema:
        return {schema["const"]}
    return set(schema["enum"]) if "enum" in schema else None


def test_every_operation_called_is_in_the_document_and_every_one_is_called(doc: Any) -> None:
    for name, (method, path) in {**OPERATIONS, **OPTIONAL_OPERATIONS}.items():
        item = doc["paths"].get(path)
        if item is None and name in OPTIONAL_OPERATIONS:
            continue
        assert item is not None, f"{name}: {path} is not in the document"
        assert item.get(method.lower(), {}).get("operationId") == name, f"{method} {path}"
    in_document = {
        op["operationId"]
        for path, item in doc["paths"].items()
        if path.startswith("/v1/")
        for op in item.values()
    }
    assert in_document - NOT_FOR_THIS_CLIENT <= set(OPERATIONS) | set(OPTIONAL_OPERATIONS)


def name_of(typed: Any) -> str:
    return str(typed.__name__)


@pytest.mark.parametrize("typed", list(SCHEMAS), ids=name_of)
def test_each_typed_dict_has_its_schemas_keys(doc: Any, typed: Any) -> None:
    schema = schema_at(doc, SCHEMAS[typed])
    assert set(typed.__required_keys__) == set(schema.get("required", []))
    assert set(typed.__required_keys__) | set(typed.__optional_keys__) == set(schema["properties"])
    hints = typing.get_type_hints(typed)
    for key, prop in schema["properties"].items():
        prop = resolve(doc, prop)
        expected = schema_values(doc, prop)
        if expected is not None:
            assert literal_values(hints[key]) == expected, f"{typed.__name__}.{key}"
        types_ = prop.get("type")
        nullable = isinstance(types_, list) and "null" in types_
        assert allows_none(hints[key]) == nullable, f"{typed.__name__}.{key}: null"


def test_usage_groups_and_statuses_match_the_parameters(doc: Any) -> None:
    params = {p["name"]: p for p in doc["paths"]["/v1/usage"]["get"]["parameters"]}
    pattern = params["groupBy"]["schema"]["pattern"]
    for group in get_args(_types.UsageGroup):
        assert group in pattern
    statuses = resolve(doc, {"$ref": "#/components/schemas/GenerationStatus"})["enum"]
    assert set(get_args(_types.GenerationStatus)) == set(statuses)
    events = resolve(doc, {"$ref": "#/components/schemas/EventType"})["enum"]
    assert set(get_args(_types.EventType)) == set(events)


def test_every_error_status_has_its_class(doc: Any) -> None:
    statuses = sorted(
        int(name.removeprefix("Error"))
        for name in doc["components"]["responses"]
        if name.removeprefix("Error").isdigit()
    )
    assert 402 in statuses and 503 in statuses
    for status in statuses:
        cls = error_class(status)
        assert issubclass(cls, RendergateError)
        # 408: the request did not arrive in time; every other status has a class of its own
        assert cls is not RendergateError or status == 408, status
