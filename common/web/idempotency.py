"""Retries and idempotency (API.md "Retries and idempotency"): every write's answer
is rendered inside its transaction, and an `Idempotency-Key` replays it.

One `WriteScope` per write request (POST, PATCH, DELETE; `ApiView.initial`). The
view hands it the write and the renderer of its answer (`ApiView.answer`); the scope
hooks into every public entry the write runs (`policies.actions.hooked_writes`):

- `begin()`, inside the entry's transaction before the body: with a key, on
  PostgreSQL `pg_try_advisory_xact_lock` of (caller, key), else `409
  idempotency_in_progress` (another request with that key is inside its
  transaction); then the stored answer of the key, if any: the same fingerprint
  raises `Replayed` (the transaction rolls back, nothing is written and the view
  answers the stored answer with `Idempotent-Replayed: true`), another one is `422
  idempotency_key_reuse`. SQLite has one writer at a time: no lock there. A stored
  answer a disposal purged (`IdempotencyKey.forget_answers_about`) replays as `410
  answer_disposed`: the key stays used, the write is not run again.
- `finish(result)`, inside it after the body returned: the renderer makes the answer
  from what the body returned (None: not the last of the write's transactions, as a
  change notification's further batches), and, with a key, the answer is stored in
  the same transaction. COMMIT is then the last thing the database does for the
  request: no error after it can change the answer (issue 27).

The stored key is checked once more before the view runs (outside any transaction,
a fast path: a replay then needs no service at all); the check inside the
transaction is the authority. A refused write stores no key (its rollback removes
everything), so its retry runs again. Keys are per caller: another caller's equal key
is another key. The fingerprint is the sha256 of the canonical JSON of the method,
the path with its query and the parsed body.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection
from django.http import QueryDict
from django.utils import timezone
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from common.kernel.canonical import canonical_sha256
from common.kernel.refusals import Offender, Refusal
from common.web.errors import PROBLEM_CONTENT_TYPE
from policies.actions import hooked_writes
from policies.models import IdempotencyKey

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
WRITE_METHODS = frozenset({"POST", "PATCH", "DELETE"})
# The headers of an answer a replay repeats (the rest are the server's own).
STORED_HEADERS = ("Location", "ETag")
_KEY = re.compile(r"[\x20-\x7e]{1,255}")

# The answer to a write from what its last transaction returned; None: not yet.
Renderer = Callable[[Any], Response | None]


class Replayed(Exception):  # a signal, not an error
    """The key's first answer is stored: answer it again (ApiView.handle_exception)."""

    def __init__(self, stored: IdempotencyKey) -> None:
        super().__init__(stored.key)
        self.stored = stored

    def response(self) -> Response:
        stored = self.stored
        data = json.loads(stored.body) if stored.body else None
        headers = {**stored.headers, REPLAYED_HEADER: "true"}
        response = Response(data, status=stored.status, headers=headers)
        if stored.status >= 400:  # 410 answer_disposed: the answer a disposal purged
            response.content_type = PROBLEM_CONTENT_TYPE
        return response


def key_of(request: Request) -> str | None:
    """The request's Idempotency-Key; 400 invalid_idempotency_key unless it is 1–255
    printable ASCII characters."""
    key = request.headers.get(HEADER)
    if key is None:
        return None
    if not _KEY.fullmatch(key):
        raise Refusal(
            "invalid_idempotency_key",
            "Idempotency-Key must be 1 to 255 printable ASCII characters.",
            offenders=[Offender("/headers/Idempotency-Key", "format", "not a valid key.")],
        )
    return key


def fingerprint(request: Request) -> str:
    body = request.data
    if isinstance(body, QueryDict):  # no body at all, or a form (a PDF upload)
        body = {key: _form_value(value) for key, value in body.dict().items()}
    return canonical_sha256(
        {"method": request.method, "path": request.get_full_path(), "body": body}
    )


def _form_value(value: Any) -> Any:
    """A form field as it is, an uploaded file as the digest of its bytes."""
    if not hasattr(value, "chunks"):
        return value
    digest = hashlib.sha256()
    for chunk in value.chunks():
        digest.update(chunk)
    value.seek(0)
    return {"sha256": digest.hexdigest(), "size": value.size}


def _lock_id(user_id: int, key: str) -> int:
    digest = hashlib.sha256(f"idempotency:{user_id}:{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


@dataclass
class WriteScope:
    """One write request's key, renderer and answer (module docstring)."""

    request: Request
    key: str | None
    fingerprint: str = ""
    render: Renderer | None = None
    response: Response | None = None
    _user_id: int | None = field(default=None, repr=False)

    @classmethod
    def of(cls, request: Request) -> WriteScope:
        """The scope of an authenticated write request; a stored answer of its key
        already replays (or refuses) here."""
        scope = cls(request, key_of(request))
        if scope.key is not None:
            scope._user_id = request.user.pk
            scope.fingerprint = fingerprint(request)
            scope._check(scope._stored())
        return scope

    def answer(self, write: Callable[[], Any], render: Renderer) -> Response:
        """Run `write` (a service: one or more public entries) with `render` making
        its answer inside the transaction; the answer so rendered."""
        self.render = render
        with hooked_writes(self):
            write()
        if self.response is None:
            raise RuntimeError("the write ran no public entry, so its answer was not rendered")
        return self.response

    # -- inside each public entry's transaction (policies.actions.WriteHook)

    def begin(self) -> None:
        if self.key is None or self.response is not None:
            return
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_try_advisory_xact_lock(%s)", [_lock_id(self._user_id, self.key)]
                )
                if not cursor.fetchone()[0]:
                    raise Refusal(
                        "idempotency_in_progress",
                        "a request with this Idempotency-Key is still running; retry later.",
                    )
        self._check(self._stored(expired_removed=True))

    def finish(self, result: Any) -> None:
        if self.render is None or self.response is not None:
            return
        response = self.render(result)
        if response is None:
            return
        if self.key is not None:
            self._store(response)
        self.response = response

    # -- the stored answers

    def _stored(self, *, expired_removed: bool = False) -> IdempotencyKey | None:
        found = IdempotencyKey.objects.filter(user_id=self._user_id, key=self.key).first()
        if found is not None and found.expires_at <= timezone.now():
            if expired_removed:  # under the key's lock: a new answer takes its place
                found.delete()
            return None
        return found

    def _check(self, found: IdempotencyKey | None) -> None:
        if found is None:
            return
        if found.fingerprint != self.fingerprint:
            raise Refusal(
                "idempotency_key_reuse",
                "this Idempotency-Key was sent with another request; use a new key.",
                offenders=[Offender("/headers/Idempotency-Key", "reused", "used before.")],
            )
        raise Replayed(found)

    def _store(self, response: Response) -> None:
        now = timezone.now()
        body = "" if response.data is None else JSONRenderer().render(response.data).decode()
        row = IdempotencyKey(
            user_id=self._user_id,
            key=self.key,
            fingerprint=self.fingerprint,
            status=response.status_code,
            body=body,
            headers={name: response[name] for name in STORED_HEADERS if response.has_header(name)},
            created_at=now,
            expires_at=now + timedelta(hours=settings.GROUNDING_IDEMPOTENCY_TTL_HOURS),
        )
        # A write of several transactions (a change notification's batches) may meet a
        # concurrent retry's equal answer stored first: that one stands.
        IdempotencyKey.objects.bulk_create([row], ignore_conflicts=True)
