"""Per-user request rates by scope (read, write, bulk), read at request time.

DRF's own throttles copy the rates once at import; reading them on each request
lets settings (and GROUNDING_THROTTLE_RATES) change them without a restart.
"""

from __future__ import annotations

from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


class ScopedUserRateThrottle(SimpleRateThrottle):
    """Scope from the view's `throttle_scope`, else `read` or `write` by method."""

    def allow_request(self, request, view) -> bool:
        self.scope = getattr(view, "throttle_scope", None) or (
            "read" if request.method in SAFE_METHODS else "write"
        )
        self.rate = self.get_rate()
        if self.rate is None:
            return True
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)

    def __init__(self) -> None:
        # Rates are resolved per request in allow_request.
        pass

    def get_rate(self) -> str | None:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def get_cache_key(self, request, view) -> str:
        if request.user is not None and request.user.is_authenticated:
            ident = f"user:{request.user.pk}"
        else:
            ident = f"ip:{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": ident}
