"""`Authorization: Token <key>` against hashed keys (django-rest-knox's rows).

knox's own `authenticate_credentials` decodes the header as UTF-8 (a non-UTF-8
header byte would be a 500), queries with whatever was sent (a NUL byte breaks
PostgreSQL), and deletes the user's expired tokens while reading. Here a key that
cannot be one of ours is refused before any query, the token is found by its
digest (the primary key: one indexed lookup, as DRF's authtoken did), and expired
tokens are refused but kept, so `list_tokens` can show them until revoked.
"""

from __future__ import annotations

import re

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
        auth_token = (
            get_token_model().objects.select_related("user").filter(digest=hash_token(key)).first()
        )
        if auth_token is None:
            raise invalid
        if auth_token.expiry is not None and auth_token.expiry <= timezone.now():
            raise exceptions.AuthenticationFailed("Token expired.")
        return self.validate_user(auth_token)


class TokenScheme(OpenApiAuthenticationExtension):
    """OpenAPI: the same `tokenAuth` scheme (`Authorization: Token <key>`) as before."""

    target_class = TokenAuthentication
    match_subclasses = True  # the throttled one (policies.web.throttling) too
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return build_bearer_security_scheme_object(
            header_name="Authorization", token_prefix=knox_settings.AUTH_HEADER_PREFIX
        )
