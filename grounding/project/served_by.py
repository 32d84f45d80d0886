"""`X-Served-By`: which app server answered, when it is given a name.

Several stateless app servers run behind one proxy; naming each
(`GROUNDING_SERVER_NAME=web-a`) lets an operator, a load-balancer check or
`make prod-smoke` tell which one served a response. Installed by settings only
when the name is set; the name is an operator's token, never a host or address
learned from the request.
"""

from __future__ import annotations

import re

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

HEADER = "X-Served-By"
# A header-safe token, as for request ids: nothing a proxy or log could misread.
_NAME = re.compile(r"[A-Za-z0-9._:-]{1,64}")


class ServedByMiddleware:
    def __init__(self, get_response):
        name = settings.GROUNDING_SERVER_NAME
        if not _NAME.fullmatch(name):
            raise ImproperlyConfigured(
                "GROUNDING_SERVER_NAME must be 1-64 characters of [A-Za-z0-9._:-]."
            )
        self.get_response = get_response
        self.name = name

    def __call__(self, request):
        response = self.get_response(request)
        response[HEADER] = self.name
        return response
