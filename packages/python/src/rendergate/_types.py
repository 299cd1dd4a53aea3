"""The API's objects as TypedDicts: the JSON the server sends, unchanged (camelCase keys).

Each mirrors a schema of the server's OpenAPI document (GET /v1/openapi.json), the document the
TypeScript SDK's types are generated from; tests/test_openapi_in_step.py fails when they drift.
"""

# No `from __future__ import annotations` here: TypedDict reads NotRequired from the evaluated
# annotations, and the in-step test reads which keys are required at run time.
from typing import Any, Literal, NotRequired, TypedDict, Union

InputValue = Union[str, int, float, bool]
"""One input of a model: text, a URL, a number, a toggle or an enum value."""

GenerationStatus = Literal["queued", "succeeded", "failed", "refunded"]
GenerationEventType = Literal[
    "generation.started", "generation.succeeded", "generation.failed", "generation.refunded"
]
"""The events of a render, the ones a WebhookEvent carries a generation for."""
EventType = Literal[
    "generation.started",
    "generation.succeeded",
    "generation.failed",
    "generation.refunded",
    "account.balance_low",
    "budget.threshold_reached",
]
"""Every event type an endpoint can receive: a render's, and an account's alerts."""
BudgetPeriod = Literal["day", "week", "month", "total"]
UsageGroup = Literal["day", "model", "key", "member"]


class Field(TypedDict):
    """One input of a model."""

    name: str
    type: Literal["text", "url", "number", "toggle", "enum"]
    required: bool
    default: str | int | float | bool | None
    description: NotRequired[str]
    media: NotRequired[Literal["image"]]
    values: NotRequired[list[str | int | float]]
    minimum: NotRequired[int | float]
    maximum: NotRequired[int | float]
    integer: NotRequired[bool]
    maxLength: NotRequired[int]


class FileOutput(TypedDict):
    type: Literal["file"]
    contentType: str


class TextOutput(TypedDict):
    type: Literal["text"]


class Model(TypedDict):
    id: str
    name: str
    kind: Literal["video", "image", "text"]
    description: str
    output: FileOutput | TextOutput
    fields: list[Field]


class ModelDetail(Model):
    inputSchema: dict[str, Any]
    """The model's inputs as a JSON Schema (2020-12)."""


class CreatedBy(TypedDict):
    """Who created a key: `{"type": "member", "email"}` or `{"type": "operator"}`."""

    type: Literal["member", "operator"]
    email: NotRequired[str]


class MeKey(TypedDict):
    id: str
    name: str | None
    start: str
    createdAt: str
    dailyCapCents: int | None
    spentTodayCents: int
    rateLimitPerMinute: int
    mode: Literal["live", "test"]
    createdBy: CreatedBy


class Budget(TypedDict):
    """A budget in force: its period, limit and what the period has spent so far."""

    period: BudgetPeriod
    limitCents: int
    spentCents: int
    resetsAt: str | None


class MeBudgets(TypedDict):
    account: list[Budget]
    key: list[Budget]


class Me(TypedDict):
    accountId: str
    balanceCents: int
    currency: Literal["EUR"]
    key: MeKey
    budgets: MeBudgets


class Quote(TypedDict):
    modelId: str
    inputs: dict[str, InputValue]
    costCents: int
    currency: Literal["EUR"]


class GenerationError(TypedDict):
    code: str
    message: str


class Generation(TypedDict):
    id: str
    modelId: str
    inputs: dict[str, InputValue]
    status: GenerationStatus
    costCents: int
    refundedCents: int
    contentUrl: NotRequired[str]
    contentType: NotRequired[str]
    textOutput: NotRequired[str]
    error: NotRequired[GenerationError]
    progress: float | None
    queuePosition: int | None
    expiresAt: str | None
    createdAt: str
    startedAt: str | None
    completedAt: str | None
    mode: NotRequired[Literal["test"]]


class Upload(TypedDict):
    id: str
    url: str
    contentType: Literal["image/png", "image/jpeg", "image/webp"]
    sizeBytes: int
    width: int
    height: int
    createdAt: str
    expiresAt: str


class Deleted(TypedDict):
    id: str
    deleted: Literal[True]


class WebhookEndpoint(TypedDict):
    id: str
    url: str
    events: list[EventType]
    secret: NotRequired[str]
    enabled: bool
    mode: Literal["live", "test"]
    createdAt: str


class WebhookDelivery(TypedDict):
    id: str
    eventId: str
    type: EventType
    generationId: str | None
    attempts: int
    status: Literal["pending", "delivered", "failed"]
    lastResponseStatus: int | None
    lastError: str | None
    createdAt: str
    nextAttemptAt: str | None


class WebhookEvent(TypedDict):
    type: GenerationEventType
    timestamp: str
    livemode: bool
    data: Generation


class UsageEntry(TypedDict):
    """One group: the fields it is grouped by, then its numbers."""

    day: NotRequired[str]
    modelId: NotRequired[str]
    keyId: NotRequired[str | None]
    member: NotRequired[str | None]
    renders: int
    spentCents: int


# `from` is a Python keyword: this one is written the functional way.
Usage = TypedDict("Usage", {"from": str, "to": str, "data": list[UsageEntry]})
