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
from django.db import connections
from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.plumbing import build_bearer_security_scheme_object
from knox.auth import TokenAuthentication as KnoxTokenAuthentication
from knox.crypto import hash_token
from knox.models import get_token_model
from knox.settings import knox_settings
from rest_framework import exceptions


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
    """The token whose digest this is, with its user, or None.

    Every API request asks this first: one plain statement (the token's columns
    beside its user's), as `select_related("user").filter(digest=…).first()` would
    send, without compiling that queryset each time; `test_authentication.py` holds
    the two equal.
    """
    token_model = get_token_model()
    user_model = get_user_model()
    token_fields = token_model._meta.concrete_fields
    found = user_model.objects.raw(_token_sql(token_model, user_model), [digest])
    for user in found:
        # The token's columns come as extra columns, which a raw query leaves as the
        # driver gave them: each takes its field's converters, as a queryset's would
        # (SQLite's datetimes are text until converted).
        values = [
            _converted(found.db, field, getattr(user, f"token__{field.attname}"))
            for field in token_fields
        ]
        token = token_model.from_db(found.db, [f.attname for f in token_fields], values)
        token._state.fields_cache["user"] = user
        return token
    return None


def _converted(alias: str, field, value):
    for converter, column in _converters(alias, field):
        value = converter(value, column, connections[alias])
    return value


@functools.cache
def _converters(alias: str, field):
    connection = connections[alias]
    column = field.get_col(field.model._meta.db_table)
    found = connection.ops.get_db_converters(column) + field.get_db_converters(connection)
    return [(converter, column) for converter in found]


@functools.cache
def _token_sql(token_model, user_model) -> str:
    columns = ", ".join(
        f't."{f.column}" AS "token__{f.attname}"' for f in token_model._meta.concrete_fields
    )
    user_key = token_model._meta.get_field("user").column
    return (
        f"SELECT u.*, {columns} FROM {token_model._meta.db_table} t "
        f"JOIN {user_model._meta.db_table} u ON u.{user_model._meta.pk.column} = t.{user_key} "
        f"WHERE t.{token_model._meta.pk.column} = %s"
    )


class TokenScheme(OpenApiAuthenticationExtension):
    """OpenAPI: the same `tokenAuth` scheme (`Authorization: Token <key>`) as before."""

    target_class = TokenAuthentication
    match_subclasses = True  # the throttled one (policies.web.throttling) too
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return build_bearer_security_scheme_object(
            header_name="Authorization", token_prefix=knox_settings.AUTH_HEADER_PREFIX
        )
