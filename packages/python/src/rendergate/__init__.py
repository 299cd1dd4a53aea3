"""Python client of the Rendergate API: `Rendergate` (blocking) and `AsyncRendergate` (asyncio).

    from rendergate import Rendergate

    with Rendergate() as rg:  # RENDERGATE_API_KEY, RENDERGATE_BASE_URL
        g = rg.run("rendergate/shot-list", {"text": "A lighthouse at dusk."})
        print(g["textOutput"])
"""

from ._async_client import AsyncRendergate
from ._client import Rendergate
from ._errors import (
    APIConnectionError,
    AuthenticationError,
    ConflictError,
    GenerationFailedError,
    GoneError,
    InsufficientBalanceError,
    InvalidArgumentError,
    InvalidRequestError,
    InvalidResponseError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    RendergateError,
    RunTimeoutError,
    ServerError,
    ServiceUnavailableError,
    WebhookVerificationError,
)
from ._http import __version__
from ._types import (
    Deleted,
    Budget,
    BudgetPeriod,
    EventType,
    GenerationEventType,
    MeBudgets,
    Field,
    Generation,
    GenerationError,
    GenerationStatus,
    InputValue,
    Me,
    MeKey,
    Model,
    ModelDetail,
    Quote,
    Upload,
    Usage,
    UsageEntry,
    UsageGroup,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
)
from ._webhooks import verify_webhook

__all__ = [
    "APIConnectionError",
    "AsyncRendergate",
    "AuthenticationError",
    "ConflictError",
    "Deleted",
    "Budget",
    "BudgetPeriod",
    "EventType",
    "GenerationEventType",
    "MeBudgets",
    "Field",
    "Generation",
    "GenerationError",
    "GenerationFailedError",
    "GenerationStatus",
    "GoneError",
    "InputValue",
    "InsufficientBalanceError",
    "InvalidArgumentError",
    "InvalidRequestError",
    "InvalidResponseError",
    "Me",
    "MeKey",
    "Model",
    "ModelDetail",
    "NotFoundError",
    "PermissionDeniedError",
    "Quote",
    "RateLimitError",
    "Rendergate",
    "RendergateError",
    "RunTimeoutError",
    "ServerError",
    "ServiceUnavailableError",
    "Upload",
    "Usage",
    "UsageEntry",
    "UsageGroup",
    "WebhookDelivery",
    "WebhookEndpoint",
    "WebhookEvent",
    "WebhookVerificationError",
    "__version__",
    "verify_webhook",
]
