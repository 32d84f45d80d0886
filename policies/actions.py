"""The one write idiom: action bodies, their public entries, and refusal audit.

Every write of the registry is a keyword-only *body*, `do_<name>(*, actor, ...)`,
that runs inside its caller's transaction, and a *public entry* made from it,
`<name> = public_entry("<action>", do_<name>, ...)`, that views, commands and the
other apps call when they are not inside a transaction themselves. Both are
module-level names: a caller that composes several operations in one transaction
(from-citations registering links and recording their anchor observations, the
admin's change page inside Django's change view, seed_demo, the admin's WSP upload)
calls the bodies; everyone else calls the entries.

Bodies are decorated with `composable`, which is `transaction.atomic(savepoint=False)`
rather than an assertion that a transaction is open, because:

- inside a caller's transaction it joins it at no cost (no savepoint), and if the
  body raises, Django marks that transaction for rollback: a caller that catches a
  body's refusal without giving the body a savepoint of its own (`refusal_audited`)
  cannot go on to commit half of the body's writes (its next query fails with
  TransactionManagementError);
- called on its own (a test, a shell) a body still writes all or nothing.

A public entry (1) refuses input no column can store, before any lookup; (2) runs
the body in one `atomic(durable=True)`, so it refuses to run inside another
transaction (`NestedEntryError`: call the body there); (3) on a Refusal, after the
rollback, writes the refused audit event through `audit_refusal` and re-raises.

A request may hook into (2): the web layer sets a `WriteHook` (`hooked_writes`;
common.web.idempotency) whose `begin()` runs inside each public entry's transaction
before the body and whose `finish(result)` runs inside it after the body returned,
so the answer is rendered, and an idempotency key stored, before COMMIT.

`refusal_audited` is (3) for a body run inside a caller's transaction: the body runs
in a savepoint, so a refusal rolls back that body's writes only, and its event is
written in the caller's transaction. `audit_refusal` is the one writer of refused
events; the web layer's audit of requests refused before any service
(common.web.refusal_audit) goes through it too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar
from typing import Any, Protocol, TypeVar

from django.conf import settings
from django.db import transaction
from django.db.transaction import TransactionManagementError

from common.kernel import lost_connection
from common.kernel.refusals import Offender, Refusal
from common.kernel.request_context import note_in_doubt
from common.kernel.text import (
    overlong_offenders,
    plainly_fine,
    plausible_ref,
    unstorable_offenders,
)
from policies import audit
from policies.choices import AuditOutcome
from policies.models import AuditEvent, Dimension

F = TypeVar("F", bound=Callable[..., Any])
R = TypeVar("R")
# From a body's keyword arguments to the fields of its refused audit event
# (`audit_refusal`'s keywords: actor, grounding_id, dimension, expected_revision,
# references).
Context = Callable[[dict[str, Any]], dict[str, Any]]
# From a body's keyword arguments to the offenders that refuse them before it runs.
Screen = Callable[[dict[str, Any]], list[Offender]]

# Inputs whose strings are not stored as they are, so GROUNDING_MAX_STRING_LENGTH does
# not bound them: from-citations' provider payload and passage texts (the 8 MiB body
# limit does; every link they produce passes the per-value limits of registration).
UNBOUNDED_KWARGS = frozenset({"request"})


class NestedEntryError(TransactionManagementError):
    """A public entry was called inside another transaction: call its body there."""


class WriteHook(Protocol):
    """What a request runs inside each public entry's transaction (module docstring)."""

    def begin(self) -> None: ...

    def finish(self, result: Any) -> None: ...


_write_hook: ContextVar[WriteHook | None] = ContextVar("write_hook", default=None)


@contextmanager
def hooked_writes(hook: WriteHook) -> Iterator[None]:
    """Run `hook` inside every public entry's transaction entered in the block."""
    token = _write_hook.set(hook)
    try:
        yield
    finally:
        _write_hook.reset(token)


def composable(fn: F) -> F:
    """Make `fn` an action body: it joins its caller's transaction (module docstring)."""
    return transaction.atomic(savepoint=False)(fn)  # type: ignore[return-value]


def refuse_invalid(offenders: list[Offender]) -> None:
    if offenders:
        raise Refusal("validation_error", "the request is not valid.", offenders=offenders)


def unstorable_input(kwargs: dict[str, Any]) -> list[Offender]:
    """Strings in the operation's input that no column can hold, located in the body
    they came from (a bulk body is {"items": [...]}, any other is the value itself;
    a string argument, such as a ref from the path, is `/<its name>`), and strings
    longer than GROUNDING_MAX_STRING_LENGTH. Checked before any lookup: even a query
    naming such a string fails."""
    max_length = settings.GROUNDING_MAX_STRING_LENGTH
    offenders: list[Offender] = []
    for name, value in kwargs.items():
        if isinstance(value, dict | list):
            base = "/items" if name == "items" else ""
        elif isinstance(value, str):
            base = f"/{name}"
        else:
            continue
        bounded = name not in UNBOUNDED_KWARGS
        # Each item of a bulk body on its own: the whole body is longer than the limit.
        parts = value if isinstance(value, list) else [value]
        if all(plainly_fine(part, max_length if bounded else None) for part in parts):
            continue
        found = unstorable_offenders(value, base)
        if bounded:
            found += overlong_offenders(value, max_length, base)
        offenders += found
    return offenders


def dimension_context(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The refused event's fields from a body's arguments: its actor and the Dimension
    a `dimension` argument names (a Dimension, or a name fit for the audit column)."""
    dimension = kwargs.get("dimension")
    if not isinstance(dimension, Dimension) and not plausible_ref(dimension, 63):
        dimension = None
    return {"actor": kwargs.get("actor"), "dimension": dimension}


def audit_refusal(
    action: str,
    code: str,
    *,
    actor,
    grounding_id=None,
    dimension: Dimension | str | None = None,
    expected_revision: int | None = None,
    references: dict[str, Any] | None = None,
) -> AuditEvent:
    """Write the refused event of `action`: the one writer of refused events.

    Called after the refused writes were rolled back: by a public entry outside any
    transaction (the event is then a short transaction of its own), by
    `refusal_audited` inside its caller's (the event commits with it).
    """
    with transaction.atomic():
        return audit.record(
            actor=actor,
            action=action,
            outcome=AuditOutcome.REFUSED,
            code=code,
            grounding_id=grounding_id,
            dimension=dimension,
            expected_revision=expected_revision,
            references=references,
        )


def public_entry(
    action: str,
    body: Callable[..., R],
    *,
    context: Context = dimension_context,
    screen: Screen | None = unstorable_input,
) -> Callable[..., R]:
    """The public entry of `body`: screened input, one durable transaction, and the
    refused audit event of `action` after the rollback (module docstring).

    `context` names the refused event's fields from the keyword arguments; `screen`
    (None: no screen) refuses input before anything is looked up.
    """

    def entry(**kwargs: Any) -> R:
        committing = False
        try:
            if screen is not None:
                refuse_invalid(screen(kwargs))
            with ExitStack() as stack:
                try:
                    stack.enter_context(transaction.atomic(durable=True))
                except RuntimeError as exc:  # Django's "durable block cannot be nested"
                    raise NestedEntryError(
                        f"{entry.__name__} opens its own durable transaction and cannot run "
                        f"inside another one: call {body.__name__} there (under "
                        "refusal_audited, for a savepoint and the refused event)."
                    ) from exc
                hook = _write_hook.get()
                if hook is not None:
                    hook.begin()
                result = body(**kwargs)
                if hook is not None:
                    hook.finish(result)
                committing = True  # what fails from here on fails in the COMMIT
                return result
        except Refusal as refusal:
            audit_refusal(action, refusal.code, **context(kwargs))
            raise
        except Exception as exc:
            if committing and lost_connection.is_lost(exc):
                note_in_doubt()
            raise

    # Named and documented like the body it runs. No attribute leads to the body:
    # composite callers import it by its own name.
    name = body.__name__
    entry.__name__ = entry.__qualname__ = (
        "_" + name[4:] if name.startswith("_do_") else name.removeprefix("do_")
    )
    entry.__module__ = body.__module__
    entry.__doc__ = body.__doc__
    return entry


@contextmanager
def refusal_audited(action: str, **context: Any) -> Iterator[None]:
    """Run the block (a body) in a savepoint of the caller's transaction: a Refusal
    rolls back the block's writes only, writes the refused event of `action` (with
    `context`: audit_refusal's keywords) in the caller's transaction, and is re-raised
    for the caller to show. Outside any transaction the block is a transaction of its
    own and the event is written after its rollback, as by a public entry.
    """
    try:
        with transaction.atomic():
            yield
    except Refusal as refusal:
        audit_refusal(action, refusal.code, **context)
        raise
