"""The leak matrix: every route of the URLconf, read by every kind of reader, shows
no withheld or disposed text in any status line, header or body.

Routes come from walking the resolver, so a route added later is read here without
editing this test: its path parameters are filled from the fixture by name and
converter (`values_for`), and a route whose plain GET needs query parameters is
also read with probing ones (a reserved internal recipient among them).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from django.apps import apps
from django.contrib.contenttypes.models import ContentType
from django.db.models import Model
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from grounding.models import EvidenceSet, GroundingLink
from policies.models import Dimension, DisclosureDecision, Profile
from tests.leaks import fixture

# Query strings a route that refuses its plain GET (400) is read with as well.
PROBES = (
    "?recipient=role:steward&purpose=stewardship",
    "?recipient=role:curator&purpose=curation&format=web-annotation",
)
_PARAM = re.compile(r"<(?:(?P<conv>\w+):)?(?P<name>\w+)>")
_GROUP = re.compile(r"\([^)]*\)")
_NAMED = re.compile(r"\(\?P<(\w+)>[^)]*\)")


@dataclass(frozen=True)
class Route:
    pattern: str  # the full route, converters and regex groups in place
    name: str

    @property
    def admin_model(self) -> type[Model] | None:
        found = re.match(r"admin/(\w+)/(\w+)/", self.pattern)
        if not found:
            return None
        try:
            return apps.get_model(found.group(1), found.group(2))
        except LookupError:
            return None


def routes() -> list[Route]:
    def walk(patterns, prefix: str) -> Iterator[Route]:
        for entry in patterns:
            if isinstance(entry, URLResolver):
                yield from walk(entry.url_patterns, prefix + str(entry.pattern))
            elif isinstance(entry, URLPattern):
                yield Route(prefix + str(entry.pattern), entry.name or "")

    return list(walk(get_resolver().url_patterns, ""))


def _admin_objects(model: type[Model], world: fixture.LeakWorld) -> list[Model]:
    """A few rows of the model, the fixture's most telling ones first."""
    queryset = model._default_manager.all()
    names = {f.name for f in model._meta.get_fields()}
    if model is GroundingLink:
        return list(queryset.filter(pk__in=world.link_ids))
    if "link" in names:
        # Rows of the disposed links and of one link with a withheld field.
        telling = [*world.disposed_link_ids, world.link_ids[0]]
        return list(queryset.filter(link_id__in=telling))[:6]
    if model._meta.label == "evidence.Passage":
        return list(queryset.filter(pk__in=world.passage_ids))
    return list(queryset.order_by("pk")[:3])


def values_for(route: Route, name: str, conv: str | None, world) -> list[str]:
    """Fixture values for one path parameter, by its name (then its converter)."""
    model = route.admin_model
    if name == "object_id" and model is not None:
        return [str(o.pk) for o in _admin_objects(model, world)]
    if name == "version_id" and model is not None and hasattr(model, "history"):
        keys = [o.pk for o in _admin_objects(model, world)]
        pk_name = model._meta.pk.name
        history = model.history.filter(**{f"{pk_name}__in": keys})
        return [str(h) for h in history.values_list("history_id", flat=True)[:3]]
    by_name = {
        "grounding_id": world.link_ids,
        "passage_id": world.passage_ids,
        "revision": ["1", "2", "3"],
        "ref": [
            *EvidenceSet.objects.values_list("evidence_set_ref", flat=True),
            *(p.ref for p in Profile.objects.all()),
        ],
        "key": list(DisclosureDecision.objects.values_list("decision_ref", flat=True)[:6]),
        "name": list(Dimension.objects.values_list("name", flat=True)),
        "content_type_id": [
            str(ContentType.objects.get_for_model(GroundingLink).pk),
        ],
        "object_id": world.link_ids[:3],
        "app_label": ["grounding", "evidence", "policies"],
        "url": ["grounding/groundinglink/" + world.link_ids[0]],
        "id": [str(u.pk) for u in world.users.values() if u is not None][:2],
    }
    if name in by_name:
        return [str(v) for v in by_name[name]]
    # A model whose primary key has the parameter's name: its rows.
    for candidate in apps.get_models():
        if candidate._meta.pk.name == name:
            return [str(pk) for pk in candidate._default_manager.values_list("pk", flat=True)[:6]]
    if conv == "uuid":
        return world.link_ids[:3] + world.passage_ids[:3]
    if conv == "int":
        return ["1", "2"]
    return [*world.link_ids[:2], *world.passage_ids[:2], "1"]


def urls_of(route: Route, world) -> list[str]:
    """Every URL of the route over the fixture's values (regex groups positionally)."""
    # Named regex groups become placeholders like converters; unnamed ones stay groups.
    pattern = _NAMED.sub(r"<\1>", route.pattern).replace("^", "").replace("$", "")
    params = [(m.group("name"), m.group("conv")) for m in _PARAM.finditer(pattern)]
    groups = _GROUP.findall(pattern)
    # A regex route's groups, positionally (simple-history's (object id)/history/(version id)).
    params += [(n, None) for n in ["object_id", "version_id", "extra"][: len(groups)]]
    urls = ["/" + pattern]
    for name, conv in params:
        values = values_for(route, name, conv, world)
        urls = [_fill_first(url, value) for url in urls for value in values]
    return urls


def _fill_first(url: str, value: str) -> str:
    """The URL with its first placeholder (a converter or a regex group) filled."""
    found = [m for m in (_PARAM.search(url), _GROUP.search(url)) if m]
    first = min(found, key=lambda m: m.start())
    return url[: first.start()] + value + url[first.end() :]


def _everything(response) -> str:
    headers = "\n".join(f"{k}: {v}" for k, v in response.items())
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return f"{response.status_code} {response.reason_phrase}\n{headers}\n" + body.decode(
        "utf-8", "replace"
    )


@pytest.mark.django_db
# One test per reader, so the suite's parallel workers share the walk.
@pytest.mark.parametrize("reader", fixture.READERS)
def test_no_route_shows_a_reader_any_withheld_or_disposed_text(reader):
    world = fixture.build()
    client = Client(raise_request_exception=False)
    user = world.users[reader]
    if user is not None:
        client.force_login(user)
    clients = {reader: client}

    all_routes = routes()
    reads = 0
    leaks: list[str] = []
    errors: list[str] = []
    for route in all_routes:
        for url in urls_of(route, world):
            for reader, client in clients.items():
                forbidden = world.forbidden(reader)
                queue = [url]
                while queue:
                    target = queue.pop()
                    response = client.get(target)
                    reads += 1
                    if response.status_code >= 500:
                        errors.append(f"{target} as {reader}: {response.status_code}")
                    text = _everything(response)
                    for mark, (owner, field_name) in forbidden.items():
                        if mark in text:
                            leaks.append(
                                f"{route.name or route.pattern} {target} as {reader}: "
                                f"{owner}'s {field_name} ({response.status_code})"
                            )
                    if response.status_code == 400 and "?" not in target:
                        queue += [target + probe for probe in PROBES]
    assert not leaks, "\n".join(leaks[:40])
    assert not errors, "\n".join(errors[:40])
    # The walk reached the link, evidence, page and admin routes at least.
    names = {r.name for r in all_routes}
    assert {"link-detail", "passage-detail", "grounding-page", "grounding_link_compare"} <= names
    assert reads > 150


@pytest.mark.django_db
def test_the_matrix_sees_what_each_reader_may_see():
    """The fixture is not vacuous: the markers a reader may see do show up."""
    world = fixture.build()
    curator = Client()
    curator.force_login(world.users["curator"])
    body = curator.get(f"/api/v1/groundings/{world.link_ids[0]}/").content.decode()
    shown = [m for m, (owner, _) in world.markers.items() if owner == "W0" and m in body]
    assert len(shown) == len(fixture.TEXT_FIELDS)
    reviewer = Client()
    reviewer.force_login(world.users["reviewer"])
    body = reviewer.get(f"/api/v1/groundings/{world.link_ids[0]}/").content.decode()
    assert fixture.marker("W0", fixture.TEXT_FIELDS[0]) not in body
    assert fixture.marker("W0", fixture.TEXT_FIELDS[1]) in body
