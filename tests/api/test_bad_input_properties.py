"""Property (#26 "Bad input"): on every route and method of the API, whatever a client
puts in the path parameters, the query parameters and the Accept, conditional or
idempotency headers — Unicode digits, lone surrogates, control characters, over-long or
wrong-typed values — the answer is one the operation declares (never a 5xx), a
refusal is problem+json, and it leaves exactly one refused audit event under the
operation's declared action (401 and 429 leave none).

The routes and their path parameters come from the URLconf and the operations'
declarations (common.web.operations.api_routes); the query parameters from the
OpenAPI description derived from them (declared `query`, filters, pagination).
GROUNDING_STRICT_ANSWERS (tests/conftest.py) makes any undeclared status or code
fail the request. Derandomized and bounded, so CI is reproducible.
"""

from __future__ import annotations

import json
from urllib.parse import quote, unquote_to_bytes

import pytest
from django.test import Client
from django.urls import Resolver404, resolve
from django.utils.encoding import repercent_broken_unicode
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from common.web.operations import answers, api_routes, operation_of
from policies.choices import Role
from policies.models import AuditEvent
from tests import factories
from tests.api.helpers import PROBLEM, client_for

EXAMPLES = int(__import__("os").environ.get("OPS_EXAMPLES", 12))
ROUTES = sorted(api_routes(), key=lambda r: (r.name, r.method))
UNAUDITED = {401, 429}

# What a hostile or careless client sends in a path segment, a query value or a header.
NASTY = st.one_of(
    st.sampled_from(
        [
            "²",  # a Unicode digit: isdigit() but not int()'s ASCII
            "٣",
            "１２",
            "\U0001d7d9",
            "\ud800",  # a lone surrogate (sent as its UTF-8-like bytes)
            "a\udfffb",
            "\x00",
            "a\x00b",
            "\n",
            "\x7f",
            "-1",
            "0",
            "1.5",
            "1e309",
            "9" * 40,
            "true",
            "null",
            "[]",
            "{}",
            '"3"',
            'W/"1"',
            "*",
            "'",
            "%",
            "%00",
            "../",
            "a/../b",
            " ",
            "",
            "00000000-0000-0000-0000-000000000000",
            "2026-13-45T99:99:99Z",
        ]
    ),
    st.text(max_size=12),
    st.integers().map(str),
    st.builds(lambda c, n: c * n, st.sampled_from(["a", "9", "²", "é"]), st.integers(256, 20_000)),
)
HEADERS = ("HTTP_IF_MATCH", "HTTP_IF_NONE_MATCH", "HTTP_IDEMPOTENCY_KEY", "HTTP_ACCEPT")


def _segment(value: str) -> str:
    return quote(value, safe="", errors="surrogatepass")


def _path_info(url: str) -> str:
    """The path Django resolves for this URL (its bytes, broken UTF-8 re-percented)."""
    return repercent_broken_unicode(unquote_to_bytes(url.split("?")[0])).decode()


def _wire(value: str) -> str:
    """A header value as a WSGI server hands it over: its bytes read as latin-1."""
    return value.encode("utf-8", errors="surrogatepass").decode("latin-1")


@pytest.fixture(scope="module")
def query_parameters(django_db_blocker) -> dict[tuple[str, str], list[str]]:
    """Each route's query parameters, as the OpenAPI description declares them."""
    with django_db_blocker.unblock():
        schema = Client().get("/api/schema/?format=json").json()
    found = {}
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            found[(path, method.upper())] = [
                p["name"] for p in operation.get("parameters", []) if p["in"] == "query"
            ]
    return found


def _schema_path(route) -> str:
    path = "/" + route.pattern
    for name, converter in route.converters.items():
        path = path.replace(f"<{converter}:{name}>", f"{{{name}}}")
    return path


@pytest.fixture
def everyone(world):
    """A caller holding every role of the world's Dimension: every check is reached."""
    return factories.user_with_roles(world.dimension, *Role)


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: f"{r.method} {r.name}")
def test_bad_path_query_and_header_values_are_declared_refusals_audited_once(
    everyone, query_parameters, route
):
    names = query_parameters[(_schema_path(route), route.method)]
    client = client_for(everyone)

    @hypothesis_settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=not __import__("os").environ.get("OPS_RANDOM"),
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(
        path=st.fixed_dictionaries({name: NASTY for name in route.converters}),
        query=st.dictionaries(st.sampled_from(names), NASTY, max_size=3) if names else st.just({}),
        headers=st.dictionaries(st.sampled_from(HEADERS), NASTY, max_size=2),
    )
    def check(path, query, headers):
        url = "/" + route.pattern
        for name, converter in route.converters.items():
            url = url.replace(f"<{converter}:{name}>", _segment(path[name]))
        if query:
            url += "?" + "&".join(f"{k}={_segment(v)}" for k, v in query.items())
        before = set(AuditEvent.objects.values_list("pk", flat=True))
        send = getattr(client, route.method.lower())
        extra = {key: _wire(value) for key, value in headers.items()}
        if route.method == "GET":
            response = send(url, **extra)
        else:
            response = send(url, data=json.dumps({}), content_type="application/json", **extra)
        status = response.status_code
        assert status < 500, (url, headers, response.content[:300])
        if status >= 400:
            assert response["Content-Type"].startswith(PROBLEM), (url, status)
        events = list(
            AuditEvent.objects.exclude(pk__in=before).values_list("action", "outcome", "code")
        )
        try:
            match = resolve(_path_info(url))
        except Resolver404:
            # A value the route's converter does not take addresses no operation.
            assert (status, events) == (404, []), (url, status)
            return
        # A greedy `path` parameter may take the URL to another route (a set ref
        # holding "/members/"): that route's operation answers, or 405.
        target = operation_of(match.func.view_class, route.method)
        if target is None:
            # The Accept header is negotiated before the method is looked up.
            assert status in (405, 406) and events == [], (url, status)
            return
        declared = answers(target, route.method)
        assert status in declared, (url, status)
        if status >= 400:
            code = response.json()["code"]
            assert code in declared[status], (url, status, code)
            audited = target.audited and status not in UNAUDITED
            expected = [(target.action, "refused", code)] if audited else []
            assert events == expected, (url, status)

    check()
