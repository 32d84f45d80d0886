"""`Authorization: Token <key>` against hashed keys (django-rest-knox's rows).

knox's own `authenticate_credentials` decodes the header as UTF-8 (a non-UTF-8
header byte would be a 500), queries with whatever was sent (a NUL byte breaks
PostgreSQL), and deletes the user's expired tokens while reading. Here a key that
cannot be one of ours is refused before any query, the token is found by its
digest (the primary key: one indexed lookup, as DRF's authtoken did), and expired
tokens are refused but kept, so `list_tokens` can show them until revoked.
"""

from __future__ import annotations

import functools
import re

from django.contrib.auth import get_user_model
from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.plumbing import build_bearer_security_scheme_object
from knox.auth import TokenAuthentication as KnoxTokenAuthentication
from knox.crypto import hash_token
from knox.models import get_token_model
from knox.settings import knox_settings
from rest_framework import exceptions

from common.kernel import compat, reads
from policies.memberships import joined, remember
from policies.models import Dimension


def _key_pattern() -> re.Pattern[str]:
    length = knox_settings.AUTH_TOKEN_CHARACTER_LENGTH
    return re.compile(re.escape(knox_settings.TOKEN_PREFIX) + f"[0-9a-f]{{{length}}}")


class TokenAuthentication(KnoxTokenAuthentication):
    def authenticate_credentials(self, token: bytes):
        invalid = exceptions.AuthenticationFailed("Invalid token.")
        try:
            key = token.decode("ascii")
        except UnicodeDecodeError:
            raise invalid from None
        if not _key_pattern().fullmatch(key):
            raise invalid
        auth_token = _token_with_user(hash_token(key))
        if auth_token is None:
            raise invalid
        if auth_token.expiry is not None and auth_token.expiry <= timezone.now():
            raise exceptions.AuthenticationFailed("Token expired.")
        return self.validate_user(auth_token)


def _token_with_user(digest: str):
    """The token whose digest this is, with its user and the user's memberships, or
    None.

    Every API request asks this first, and then the user's roles (the reader, every
    role check): one plain statement gives the token's columns beside its user's,
    and a row per membership with its Dimension (one row with none if the user holds
    no role). It is what `select_related("user").filter(digest=…).first()` and
    `policies.memberships` would read, without compiling a queryset or a second
    round trip; `test_authentication.py` holds them equal.
    """
    token_model = get_token_model()
    user_model = get_user_model()
    found = reads.read(
        _token_sql(token_model, user_model),
        [digest],
        (user_model, token_model, Dimension),
    )
    if not found:
        return None
    user, token, _, _ = found[0]
    compat.related_cache(token)["user"] = user
    remember(user, [(dimension, role) for _, _, dimension, role in found])
    return token


@functools.cache
def _token_sql(token_model, user_model) -> str:
    user_key = token_model._meta.get_field("user").column
    user_pk = user_model._meta.pk.column
    membership_columns, membership_joins = joined(f"u.{user_pk}")
    return (
        f"SELECT {reads.columns(user_model, 'u')}, {reads.columns(token_model, 't')}, "
        f"{membership_columns} FROM {token_model._meta.db_table} t "
        f"JOIN {user_model._meta.db_table} u ON u.{user_pk} = t.{user_key} "
        f"{membership_joins} WHERE t.{token_model._meta.pk.column} = %s ORDER BY m.id"
    )


class TokenScheme(OpenApiAuthenticationExtension):
    """OpenAPI: the same `tokenAuth` scheme (`Authorization: Token <key>`) as before."""

    target_class = TokenAuthentication
    match_subclasses = True  # the throttled one (common.web.throttling) too
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return build_bearer_security_scheme_object(
            header_name="Authorization", token_prefix=knox_settings.AUTH_HEADER_PREFIX
        )
