"""One declaration per operation (ARCHITECTURE.md "One declaration per operation").

An operation of the registry — register, withdraw, read a link, import a WSP
document, … — is declared once, as an `Operation`, and everything else is derived
from that declaration so that it cannot drift:

- its **public entry** (`operation.entry`: `policies.actions.public_entry` of its body
  under its action, context and screen), and the entries of the bodies a composite
  operation runs one transaction at a time (`operation.entry_of(body)`);
- the **audit action** of its accepted and refused events (`operation.action`: the
  body records it, the entry and the web layer's refusal audit file refusals under it);
- the **roles** the body requires (`operation.roles`);
- its **input checks**: the body's serializer (`input`) is compiled into the checks
  the services run (grounding.services.inputs) or validated by the view;
- its **OpenAPI operation** (common.web.openapi.operation_schema): request and
  response schemas, query parameters, conditional headers, and the problem responses
  its refusal codes answer (`common.kernel.refusals.STATUS_BY_CODE`);
- the **answers the server may give** (common.web.operations.answers): under test
  settings an answer outside them fails the request.

A view serves it (`common.web.views.ApiView`, `operation = ...`). Declarations of
writes sit beside their bodies, in the core; the response serializer is a face's, so
the core names it by its dotted path and never imports it (`output`). Declarations of
plain reads, which have no body, sit in the views that serve them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from common.kernel.refusals import STATUS_BY_CODE
from policies.actions import Context, Screen, dimension_context, public_entry, unstorable_input


@dataclass(frozen=True)
class Param:
    """A query parameter of an operation: its JSON Schema and whether it is required."""

    name: str
    schema: dict[str, Any] = field(default_factory=lambda: {"type": "string"})
    required: bool = False
    description: str = ""


@dataclass(frozen=True, eq=False)
class Operation:
    """An operation, declared once (module docstring).

    `action` names its audit events, accepted and refused. `body` is its `do_<name>`
    (None for a read served by a view); `run` the function callers call instead of
    an entry for a composite operation, whose steps are entries of their own
    (`entry_of`). `input` is the serializer of its request body (a class, or a face's
    dotted path); `output` the serializer of its answer (likewise), a list of them when
    `many`; or, for an answer that is not JSON, drf-spectacular's responses as they
    are (`{(200, "text/event-stream"): ...}`). `refusals` are the codes of the
    refusals it answers itself (the web layer adds those of parsing, authentication,
    conditional requests and idempotency keys); each has its status in
    `STATUS_BY_CODE`. `success` are its success statuses, `headers` the headers of a
    success (ETag, Location). `conditional`: it mutates an existing aggregate and
    names the revision it expects (If-Match). `audited`: a refused request leaves an
    event (every operation but the public API root, which refuses nothing an event
    would record).
    """

    action: str
    body: Callable[..., Any] | None = None
    run: Callable[..., Any] | None = None
    input: type | str | None = None
    output: type | str | dict | None = None
    many: bool = False
    roles: tuple[str, ...] = ()
    refusals: tuple[str, ...] = ()
    success: tuple[int, ...] = (200,)
    headers: tuple[str, ...] = ()
    conditional: bool = False
    query: tuple[Param, ...] = ()
    summary: str = ""
    description: str = ""
    operation_id: str | None = None
    tags: tuple[str, ...] | None = None
    public: bool = False
    audited: bool = True
    context: Context = dimension_context
    screen: Screen | None = unstorable_input

    def __post_init__(self) -> None:
        unknown = [code for code in self.refusals if code not in STATUS_BY_CODE]
        if unknown:
            # A code with no status of its own would be answered 409 and documented as
            # such by accident: every declared code is in the one map.
            raise ValueError(f"{self.action}: refusal codes with no status: {unknown}")
        if not self.success:
            raise ValueError(f"{self.action}: an operation answers some success status")

    @cached_property
    def entry(self) -> Callable[..., Any]:
        """The public entry of `body`: screened, one durable transaction, refusals
        audited under `action` (policies.actions.public_entry)."""
        if self.body is None:
            raise TypeError(f"{self.action} has no body: it has no entry of its own")
        return self.entry_of(self.body)

    def entry_of(self, body: Callable[..., Any], **overrides: Any) -> Callable[..., Any]:
        """A public entry of `body` under this operation's action (a composite
        operation's steps, each one durable transaction); `overrides` replaces the
        context or screen."""
        options = {"context": self.context, "screen": self.screen, **overrides}
        return public_entry(self.action, body, **options)

    @property
    def statuses(self) -> frozenset[int]:
        """The statuses of its own refusals."""
        return frozenset(STATUS_BY_CODE[code] for code in self.refusals)

    def __repr__(self) -> str:
        return f"Operation({self.action!r})"
