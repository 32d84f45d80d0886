"""Sign-in lockout (django-axes): the client address it counts by, the page a
locked-out sign-in gets, and the audit event of each lockout.

Axes counts failed sign-ins per (username, client address) pair (settings
`AXES_LOCKOUT_PARAMETERS`); after `GROUNDING_LOGIN_FAILURE_LIMIT` of them that pair
is refused for `GROUNDING_LOGIN_COOLOFF_MINUTES`. Another username at that address,
and that username at another address, sign in as before. README "Sign-in lockout".
"""

from __future__ import annotations

import ipaddress
import logging
from typing import Any

from axes.helpers import get_cool_off, get_failure_limit
from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse
from django.utils.crypto import salted_hmac
from rest_framework.throttling import BaseThrottle

from common.kernel.refusals import status_for
from policies.actions import audit_refusal

logger = logging.getLogger("grounding.audit")

ACTION = "admin_login_lockout"
CODE = "login_locked_out"
STATUS = status_for(CODE)  # 429
_REF_SALT = "grounding.lockout"


def client_address(request: HttpRequest) -> str | None:
    """The client address throttling uses too (DRF's `get_ident`): REMOTE_ADDR, or
    the X-Forwarded-For entry added by the outermost of GROUNDING_TRUSTED_PROXIES
    proxies; 0 proxies (the default) ignores the header, so a direct client cannot
    pick its own address. A value that is no address falls back to REMOTE_ADDR:
    axes stores it in an address column."""
    for candidate in (BaseThrottle().get_ident(request), request.META.get("REMOTE_ADDR")):
        try:
            return str(ipaddress.ip_address((candidate or "").strip()))
        except ValueError:
            continue
    return None


def opaque_ref(kind: str, value: str | None) -> str:
    """A keyed digest of `value`: the same username (or address) gives the same ref,
    so lockouts can be told apart and matched, but the audit row, which is never
    erased, holds neither what was typed into the username field nor the address."""
    digest = salted_hmac(_REF_SALT, f"{kind}:{value or ''}", algorithm="sha256").hexdigest()
    return f"{kind}:{digest[:32]}"


def _cool_off_seconds(request: HttpRequest) -> int:
    cool_off = get_cool_off(request)
    return int(cool_off.total_seconds()) if cool_off else 0


def lockout_response(
    request: HttpRequest,
    original_response: HttpResponse | None = None,
    credentials: dict[str, Any] | None = None,
) -> HttpResponse:
    """The plain page of a locked-out sign-in (AXES_LOCKOUT_CALLABLE): 429 with
    Retry-After, the same whether or not the password was right."""
    seconds = _cool_off_seconds(request)
    minutes = max(1, -(-seconds // 60))
    response = HttpResponse(
        "Too many failed sign-ins for this username from this address. "
        f"Try again in {minutes} minute{'s' if minutes != 1 else ''}.\n",
        status=STATUS,
        content_type="text/plain; charset=utf-8",
    )
    response["Retry-After"] = str(seconds)
    response["Cache-Control"] = "no-store"
    return response


def record_lockout(
    sender: Any,
    request: HttpRequest | None = None,
    username: str | None = None,
    ip_address: str | None = None,
    **kwargs: Any,
) -> None:
    """Receiver of axes' `user_locked_out`: one refused audit event per lockout.

    Axes sends the signal when a pair reaches the limit and again for every sign-in
    it refuses during the lockout. Only the first is a lockout: axes counted that
    failure (`axes_failures_since_start` is set); a refused one is not counted.
    """
    if request is None or getattr(request, "axes_failures_since_start", None) is None:
        return
    references: dict[str, Any] = {
        "username_ref": opaque_ref("username", username),
        "address_ref": opaque_ref("address", ip_address),
        "failure_limit": get_failure_limit(request, {"username": username}),
        "cooloff_seconds": _cool_off_seconds(request),
    }
    if username:
        user_model = get_user_model()
        user_id = (
            user_model._default_manager.filter(**{user_model.USERNAME_FIELD: username})
            .values_list("pk", flat=True)
            .first()
        )
        if user_id is not None:
            references["user_id"] = user_id
    try:
        audit_refusal(ACTION, CODE, actor=None, references=references)
    except Exception:  # the lockout holds even when its event cannot be written
        logger.exception("could not write the audit event of a sign-in lockout")
