"""Request rates: per user and scope (read, write, bulk), and failed authentication
per client address. Rates are read at request time.

DRF's own throttles copy the rates once at import; reading them on each request
lets settings (and GROUNDING_THROTTLE_RATES) change them without a restart.

Counters live in the default cache, which settings make a store every worker and
server shares (the database cache table, or Redis with REDIS_URL): a limit is one
limit for the whole deployment, not one per process. Counting is DRF's (read the
window, append, write back), so two requests at the same instant may both count as
one; sequential requests are counted exactly.

The client address is REMOTE_ADDR, or the X-Forwarded-For entry added by the
outermost of GROUNDING_TRUSTED_PROXIES proxies (DRF's NUM_PROXIES): a client
cannot pick its own address by sending the header.
"""

from __future__ import annotations

from rest_framework.exceptions import AuthenticationFailed, Throttled
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

from policies.authentication import TokenAuthentication

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
AUTH_FAILURE_SCOPE = "auth_failure"


class _RuntimeRateThrottle(SimpleRateThrottle):
    def __init__(self) -> None:
        # Rates are resolved per request (`_prepare`).
        pass

    def get_rate(self) -> str | None:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def _prepare(self) -> bool:
        """Load this scope's rate; False when the scope has no rate (not throttled)."""
        self.rate = self.get_rate()
        if self.rate is None:
            return False
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return True


class ScopedUserRateThrottle(_RuntimeRateThrottle):
    """Scope from the view's `throttle_scope`, else `read` or `write` by method."""

    def allow_request(self, request, view) -> bool:
        self.scope = getattr(view, "throttle_scope", None) or (
            "read" if request.method in SAFE_METHODS else "write"
        )
        if not self._prepare():
            return True
        return super().allow_request(request, view)

    def get_cache_key(self, request, view) -> str:
        if request.user is not None and request.user.is_authenticated:
            ident = f"user:{request.user.pk}"
        else:
            ident = f"ip:{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": ident}


class FailedAuthenticationThrottle(_RuntimeRateThrottle):
    """Failed token authentications per client address (scope `auth_failure`).

    Only failures are counted and only failures are refused: a valid token costs no
    counter lookup and is never locked out by someone else's guessing from the same
    address. (Tokens are 160 random bits; the limit bounds load, not guessability.)
    """

    scope = AUTH_FAILURE_SCOPE

    def get_cache_key(self, request, view=None) -> str:
        return self.cache_format % {"scope": self.scope, "ident": f"ip:{self.get_ident(request)}"}

    def count_failure(self, request) -> None:
        """Count this failure, or raise Throttled (429) when the address has none left."""
        if not self._prepare():
            return
        self.key = self.get_cache_key(request)
        self.history = self.cache.get(self.key, [])
        self.now = self.timer()
        while self.history and self.history[-1] <= self.now - self.duration:
            self.history.pop()
        if len(self.history) >= self.num_requests:
            raise Throttled(wait=self.wait())
        self.throttle_success()  # DRF's name: appends now to the window and stores it


class ThrottledTokenAuthentication(TokenAuthentication):
    """Token authentication (hashed keys: policies.authentication); a failure is
    401 until the address's failures are used up, then 429 with Retry-After."""

    def authenticate(self, request):
        try:
            return super().authenticate(request)
        except AuthenticationFailed:
            FailedAuthenticationThrottle().count_failure(request)
            raise
