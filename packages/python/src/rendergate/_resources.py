"""The sync client's smaller resources: models, uploads, webhook endpoints; and paging."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, cast

from . import _calls as calls
from ._files import PathLike, image_type, read_image
from ._http import Call
from ._sync_transport import SyncTransport
from ._types import (
    Deleted,
    EventType,
    Model,
    ModelDetail,
    Upload,
    WebhookDelivery,
    WebhookEndpoint,
)


def pages(t: SyncTransport, make: Callable[[str | None], Call]) -> Iterator[Any]:
    make(None)  # the arguments are checked now, not at the first next()

    def items() -> Iterator[Any]:
        cursor: str | None = None
        while True:
            page = t.json(make(cursor))
            yield from page["data"]
            cursor = page.get("nextCursor")
            if not cursor:
                return

    return items()


class Models:
    def __init__(self, t: SyncTransport) -> None:
        self._t = t

    def list(self) -> list[Model]:
        """The catalog."""
        return cast(list[Model], self._t.json(calls.call("listModels"))["data"])

    def get(self, model_id: str) -> ModelDetail:
        """One model, with its inputs as a JSON Schema (`inputSchema`)."""
        return cast(ModelDetail, self._t.json(calls.get_model(model_id)))


class Uploads:
    def __init__(self, t: SyncTransport) -> None:
        self._t = t

    def create(self, path: PathLike) -> Upload:
        """Uploads a PNG, JPEG or WebP file; use its `url` as any image input."""
        data, kind = read_image(path)
        return cast(Upload, self._t.json(calls.upload(data, kind)))

    def create_bytes(self, data: bytes) -> Upload:
        """Uploads an image held in memory."""
        return cast(Upload, self._t.json(calls.upload(data, image_type(data, "data"))))

    def list(self) -> Iterator[Upload]:
        """The account's live uploads, newest first."""
        return pages(self._t, lambda c: calls.page("listUploads", c))

    def get(self, upload_id: str) -> bytes:
        return self._t.bytes(calls.call("getUpload", upload_id, headers={"accept": "*/*"}))

    def delete(self, upload_id: str) -> Deleted:
        return cast(Deleted, self._t.json(calls.call("deleteUpload", upload_id)))


class WebhookEndpoints:
    def __init__(self, t: SyncTransport) -> None:
        self._t = t

    def create(self, url: str, events: Sequence[EventType] | None = None) -> WebhookEndpoint:
        """A new endpoint, with its signing `secret` (for verify_webhook)."""
        return cast(WebhookEndpoint, self._t.json(calls.create_webhook_endpoint(url, events)))

    def list(self) -> Iterator[WebhookEndpoint]:
        return pages(self._t, lambda c: calls.page("listWebhookEndpoints", c))

    def get(self, endpoint_id: str) -> WebhookEndpoint:
        return cast(WebhookEndpoint, self._t.json(calls.call("getWebhookEndpoint", endpoint_id)))

    def delete(self, endpoint_id: str) -> Deleted:
        return cast(Deleted, self._t.json(calls.call("deleteWebhookEndpoint", endpoint_id)))

    def deliveries(self, endpoint_id: str) -> Iterator[WebhookDelivery]:
        return pages(self._t, lambda c: calls.page("listWebhookDeliveries", c, endpoint_id))
