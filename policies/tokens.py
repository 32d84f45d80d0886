"""Client tokens: issued, listed and revoked by operators; only a hash is stored.

The rows are django-rest-knox's `AuthToken`: `digest` is the SHA-512 of the key,
`token_key` its first 15 characters (enough to name a token in a listing, far too
few to use it), `expiry` when it stops working. The key itself exists only in the
answer to `issue_token`. Issuing and revoking are audited like every operation:
each is a body `do_<name>` and its public entry `<name>` (policies.actions).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone
from knox.models import AuthToken
from knox.settings import CONSTANTS

from common.kernel.refusals import Offender, Refusal
from policies import audit
from policies.actions import composable
from policies.operations import Operation

# Longest lifetime a token may be issued for; there are no tokens that never expire.
MAX_TTL = timedelta(days=3650)


@dataclass(frozen=True)
class IssuedToken:
    token: AuthToken
    key: str  # shown once; only its hash is stored


def default_ttl() -> timedelta:
    return timedelta(days=settings.GROUNDING_TOKEN_TTL_DAYS)


@composable
def do_issue_token(*, actor, user, ttl: timedelta | None = None) -> IssuedToken:
    """A new key for `user`, valid for `ttl` (default GROUNDING_TOKEN_TTL_DAYS)."""
    ttl = default_ttl() if ttl is None else ttl
    if not timedelta(0) < ttl <= MAX_TTL:
        raise Refusal(
            "validation_error",
            "a token lives between one second and ten years.",
            offenders=[Offender("/ttl", "out_of_range", "the lifetime is out of range.")],
        )
    token, key = AuthToken.objects.create(user=user, expiry=ttl)
    audit.record(
        actor=actor,
        action=ISSUE_TOKEN.action,
        references={"user": user.get_username(), "token_key": token.token_key},
    )
    return IssuedToken(token=token, key=key)


def tokens(*, user=None) -> QuerySet[AuthToken]:
    """Every stored token (or one user's), newest first, expired ones included."""
    qs = AuthToken.objects.select_related("user").order_by("-created", "token_key")
    return qs if user is None else qs.filter(user=user)


def is_expired(token: AuthToken) -> bool:
    return token.expiry is not None and token.expiry <= timezone.now()


@composable
def do_revoke_token(*, actor, token_key: str) -> AuthToken:
    """Delete the token named by its `token_key` (as `list_tokens` shows it)."""
    if len(token_key) != CONSTANTS.TOKEN_KEY_LENGTH:
        raise Refusal("not_found", "no token has this key prefix.")
    token = AuthToken.objects.select_related("user").filter(token_key=token_key).first()
    if token is None:
        raise Refusal("not_found", "no token has this key prefix.")
    AuthToken.objects.filter(digest=token.digest).delete()
    _record_revocation(actor, token)
    return token


@composable
def do_revoke_tokens(*, actor, user, expired_only: bool = False) -> list[AuthToken]:
    """Delete all of `user`'s tokens (or only the expired ones)."""
    qs = tokens(user=user)
    if expired_only:
        qs = qs.filter(expiry__lte=timezone.now())
    revoked = list(qs)
    AuthToken.objects.filter(digest__in=[t.digest for t in revoked]).delete()
    for token in revoked:
        _record_revocation(actor, token)
    return revoked


# A key prefix is looked up as given (a wrong one is `not_found`): nothing to screen.
# Commands' operations (manage.py issue_token, revoke_token); no route serves them.
ISSUE_TOKEN = Operation("issue_token", body=do_issue_token, screen=None)
REVOKE_TOKEN = Operation("revoke_token", body=do_revoke_token, screen=None)
# Each token it deletes is recorded as a revoke_token event.
REVOKE_TOKENS = Operation("revoke_tokens", body=do_revoke_tokens, screen=None)
issue_token = ISSUE_TOKEN.entry
revoke_token = REVOKE_TOKEN.entry
revoke_tokens = REVOKE_TOKENS.entry


def _record_revocation(actor, token: AuthToken) -> None:
    audit.record(
        actor=actor,
        action=REVOKE_TOKEN.action,
        references={"user": token.user.get_username(), "token_key": token.token_key},
    )
