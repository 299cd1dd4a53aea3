"""The async client's smaller resources: models, uploads, webhook endpoints; and paging."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, cast

from . import _calls as calls
from ._files import PathLike, image_type, read_image
from ._http import Call
from ._async_transport import AsyncTransport
from ._types import (
    Deleted,
    EventType,
    Model,
    ModelDetail,
    Upload,
    WebhookDelivery,
    WebhookEndpoint,
)


def pages(t: AsyncTransport, make: Callable[[str | None], Call]) -> AsyncIterator[Any]:
    make(None)  # the arguments are checked now, not at the first step

    async def items() -> AsyncIterator[Any]:
        cursor: str | None = None
        while True:
            page = await t.json(make(cursor))
            for item in page["data"]:
                yield item
            cursor = page.get("nextCursor")
            if not cursor:
                return

    return items()


class AsyncModels:
    def __init__(self, t: AsyncTransport) -> None:
        self._t = t

    async def list(self) -> list[Model]:
        """The catalog."""
        return cast(list[Model], (await self._t.json(calls.call("listModels")))["data"])

    async def get(self, model_id: str) -> ModelDetail:
        """One model, with its inputs as a JSON Schema (`inputSchema`)."""
        return cast(ModelDetail, await self._t.json(calls.get_model(model_id)))


class AsyncUploads:
    def __init__(self, t: AsyncTransport) -> None:
        self._t = t

    async def create(self, path: PathLike) -> Upload:
        """Uploads a PNG, JPEG or WebP file; use its `url` as any image input."""
        data, kind = read_image(path)
        return cast(Upload, await self._t.json(calls.upload(data, kind)))

    async def create_bytes(self, data: bytes) -> Upload:
        """Uploads an image held in memory."""
        return cast(Upload, await self._t.json(calls.upload(data, image_type(data, "data"))))

    def list(self) -> AsyncIterator[Upload]:
        """The account's live uploads, newest first."""
        return pages(self._t, lambda c: calls.page("listUploads", c))

    async def get(self, upload_id: str) -> bytes:
        return await self._t.bytes(calls.call("getUpload", upload_id, headers={"accept": "*/*"}))

    async def delete(self, upload_id: str) -> Deleted:
        return cast(Deleted, await self._t.json(calls.call("deleteUpload", upload_id)))


class AsyncWebhookEndpoints:
    def __init__(self, t: AsyncTransport) -> None:
        self._t = t

    async def create(self, url: str, events: Sequence[EventType] | None = None) -> WebhookEndpoint:
        """A new endpoint, with its signing `secret` (for verify_webhook)."""
        return cast(
            WebhookEndpoint, await self._t.json(calls.create_webhook_endpoint(url, events))
        )

    def list(self) -> AsyncIterator[WebhookEndpoint]:
        return pages(self._t, lambda c: calls.page("listWebhookEndpoints", c))

    async def get(self, endpoint_id: str) -> WebhookEndpoint:
        return cast(
            WebhookEndpoint, await self._t.json(calls.call("getWebhookEndpoint", endpoint_id))
        )

    async def delete(self, endpoint_id: str) -> Deleted:
        return cast(Deleted, await self._t.json(calls.call("deleteWebhookEndpoint", endpoint_id)))

    def deliveries(self, endpoint_id: str) -> AsyncIterator[WebhookDelivery]:
        return pages(self._t, lambda c: calls.page("listWebhookDeliveries", c, endpoint_id))
