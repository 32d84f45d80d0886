"""What the attacker matrices share: one client per reader, every answer checked for
withheld, disposed and foreign text, answers compared with the ones for unknown ids
or never-stored values, row Dimensions, and table snapshots.

A reader's own input comes back in answers (a search box shows its query, a login
redirect its `next`): such echoes are never counted as leaks. A probe that sends a
marker is instead compared, whole, with the same probe sending a never-stored string
(`same_as`), which both finds an oracle and a leak of the marker itself.
"""

from __future__ import annotations

import html
import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import quote, quote_plus

from django.apps import apps
from django.contrib.admin.utils import quote as admin_quote
from django.db.models import Model
from django.test import Client

from policies.models import Dimension
from tests.leaks import fixture

PROJECT_APPS = ("policies", "evidence", "grounding", "feed")
# Audit events record refused probes and throttle counters count every request: they
# are the requests' own bookkeeping (like sessions and sign-in attempts), not a row the
# probes may change.
NOT_SNAPSHOT = ("policies.AuditEvent", "policies.HistoricalAuditEvent", "policies.ThrottleCounter")
_MARKER = re.compile(r"Mk[A-Z0-9]{1,3}X\dQ")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_VOLATILE = (
    (re.compile(r'name="csrfmiddlewaretoken" value="[^"]*"'), 'name="csrfmiddlewaretoken"'),
    (re.compile(r'nonce="[^"]*"'), 'nonce=""'),
    (re.compile(r"csrftoken=[^;\s]*"), "csrftoken="),
)


@dataclass
class Answer:
    reader: str
    method: str
    url: str
    status: int
    location: str
    body: str

    @property
    def text(self) -> str:
        return f"{self.status}\n{self.location}\n{self.body}"

    def where(self) -> str:
        return f"{self.method} {self.url} as {self.reader} ({self.status})"


def _body(response) -> str:
    raw = b"".join(response.streaming_content) if response.streaming else response.content
    return raw.decode("utf-8", "replace")


def spellings(value: str) -> set[str]:
    """The forms a value takes in an answer: as is, URL-quoted, HTML-escaped, admin-quoted."""
    forms = {value, quote(value), quote(value, safe=""), quote_plus(value), admin_quote(value)}
    forms |= {html.escape(f) for f in list(forms)}
    forms |= {quote(f, safe="") for f in list(forms)}  # a quoted URL inside ?next=
    return {f for f in forms if f}


def normalized(answer: Answer, values: dict[str, str]) -> str:
    """The answer with each value spelled as its placeholder and per-request noise gone."""
    text = answer.text
    for value, placeholder in sorted(values.items(), key=lambda kv: -len(kv[0])):
        if value.isdigit():  # a number only where it stands alone (not inside "302")
            text = re.sub(rf"(?<!\d){value}(?!\d)", placeholder, text)
            continue
        for form in sorted(spellings(value), key=len, reverse=True):
            text = text.replace(form, placeholder)
    for pattern, fixed in _VOLATILE:
        text = pattern.sub(fixed, text)
    return text


def never_stored(like: str) -> str:
    """A letters-and-digits string no fixture text holds, as long as `like`."""
    return ("Rn" + uuid.uuid4().hex + uuid.uuid4().hex)[: max(len(like), 4)]


@dataclass(frozen=True)
class Failure:
    kind: str  # what rule broke ("shows withheld text", "lookup not refused", …)
    subject: str  # where: the route, ids and query left out
    reader: str
    detail: str  # the URL and what was seen


def subject_of(url: str) -> str:
    """The route of a URL: path only, ids as <id>."""
    path = url.split("?")[0]
    path = re.sub(r"/[0-9a-f]{64}/", "/<id>/", _UUID.sub("<id>", path))
    return re.sub(r"/\d+/", "/<n>/", path)


@dataclass
class Probe:
    """One client per reader; every answer is checked as it comes."""

    world: fixture.LeakWorld
    admin_text: bool = True  # also hold foreign Dimension names out of admin answers
    clients: dict[str, Client] = field(default_factory=dict)
    failures: list[Failure] = field(default_factory=list)
    requests: int = 0
    sent: dict[str, set[str]] = field(default_factory=dict)  # every value each reader sent
    # Model -> str(pk) -> the row's Dimensions (None: shared), as the fixture stored them.
    rows: dict[type[Model], dict[str, frozenset[int] | None]] = field(default_factory=dict)
    own: dict[str, set[int]] = field(default_factory=dict)  # each reader's Dimensions
    cache: dict = field(default_factory=dict)  # the walk's own lookups, once per probe
    _forbidden_ids: dict[str, set[str]] = field(default_factory=dict)
    _foreign_names: dict[str, set[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.rows = {m: row_dimensions(m) for m in project_models() if not _historical(m)}
        for reader in fixture.READERS:
            client = Client(raise_request_exception=False)
            user = self.world.users[reader]
            if user is not None:
                client.force_login(user)
            self.clients[reader] = client
            self.sent[reader] = set()
            own = self.own[reader] = self.world.reader_dimensions(reader)
            self._foreign_names[reader] = set(
                Dimension.objects.exclude(pk__in=own).values_list("name", flat=True)
            )
            self._forbidden_ids[reader] = {
                pk
                for model, rows in self.rows.items()
                if model._meta.pk.get_internal_type() == "UUIDField"
                for pk, dims in rows.items()
                if foreign_to(dims, own)
            }

    def fail(self, kind: str, answer: Answer, detail: str = "") -> None:
        where = f"{answer.method} {answer.url} -> {answer.status}"
        self.failures.append(
            Failure(
                kind,
                f"{answer.method} {subject_of(answer.url)}",
                answer.reader,
                f"{where}{': ' + detail if detail else ''}",
            )
        )

    def report(self) -> str:
        """The failures grouped by rule and route, with the readers and an example each."""
        groups: dict[tuple[str, str], list[Failure]] = {}
        for failure in self.failures:
            groups.setdefault((failure.kind, failure.subject), []).append(failure)
        lines = [
            f"{len(self.failures)} failures in {len(groups)} groups ({self.requests} requests):"
        ]
        for (kind, subject), found in sorted(groups.items()):
            readers = ", ".join(dict.fromkeys(f.reader for f in found))
            lines.append(f"- {kind} | {subject} | {len(found)}x as {readers}")
            for example in list(dict.fromkeys(f.detail for f in found))[:2]:
                lines.append(f"    e.g. {example[:400]}")
        return "\n".join(lines)

    # -- requests

    def get(self, reader: str, url: str, *, echo: Iterable[str] = ()) -> Answer:
        return self._send(reader, "GET", url, None, echo)

    def post(self, reader: str, url: str, data=None, *, echo: Iterable[str] = (), **extra):
        return self._send(reader, "POST", url, data, echo, **extra)

    def request(self, reader: str, url: str, data=None, *, echo: Iterable[str] = ()) -> Answer:
        """GET without `data`, else POST it."""
        if data is None:
            return self.get(reader, url, echo=echo)
        return self.post(reader, url, data, echo=echo)

    def send(self, reader: str, method: str, url: str, *, echo: Iterable[str] = (), **extra):
        return self._send(reader, method, url, None, echo, **extra)

    def _send(self, reader, method, url, form, echo, **extra) -> Answer:
        client = self.clients[reader]
        self.sent[reader] |= set(echo) | set(_UUID.findall(url))
        if method == "GET":
            response = client.get(url, **extra)
        elif method == "POST" and "data" not in extra:  # a form
            response = client.post(url, form if form is not None else {}, **extra)
        else:
            response = client.generic(method, url, **extra)
        self.requests += 1
        answer = Answer(
            reader, method, url, response.status_code, response.get("Location", ""), _body(response)
        )
        headers = "\n".join(f"{k}: {v}" for k, v in response.items())
        self.check(answer, set(echo), extra_text=headers)
        return answer

    # -- checks every answer passes

    def check(self, answer: Answer, echo: set[str], *, extra_text: str = "") -> None:
        reader = answer.reader
        if answer.status >= 500:
            self.fail("server error", answer)
        text = answer.text + "\n" + extra_text
        forbidden = self.world.forbidden(reader)
        for mark in sorted(set(_MARKER.findall(text))):
            if mark in forbidden and not any(mark in e or e in mark for e in echo):
                owner, group = forbidden[mark]
                self.fail(
                    "shows a text the reader may not see", answer, f"{owner}'s {group} ({mark})"
                )
        seen_ids = set(_UUID.findall(text)) & self._forbidden_ids[reader]
        for value in sorted(seen_ids - self.sent[reader]):
            self.fail("names a row of another Dimension", answer, value)
        if self.admin_text and answer.url.startswith("/admin/"):
            for name in sorted(self._foreign_names[reader]):
                if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w])", answer.body):
                    self.fail("names another Dimension", answer, repr(name))

    def same_as(self, answer: Answer, control: Answer, values: dict[str, str], kind: str) -> bool:
        """`answer` must be `control` but for the values (each spelled as its placeholder)."""
        mine, theirs = normalized(answer, values), normalized(control, values)
        if mine == theirs:
            return True
        self.fail(
            kind,
            answer,
            f"but {control.method} {control.url} -> {control.status}"
            + _first_difference(mine, theirs),
        )
        return False


def _first_difference(a: str, b: str) -> str:
    at = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    return f" — at {at}: {a[max(at - 60, 0) : at + 60]!r} vs {b[max(at - 60, 0) : at + 60]!r}"


# -- which Dimensions a row belongs to


def dimension_paths(model: type[Model]) -> list[str]:
    """Lookups from `model` to the Dimensions its rows belong to: the nearest forward
    foreign keys to Dimension (a Dimension its own), else a `dimension_ref` name, else
    through the rows that point at it (a content, a source, a profile, a user)."""
    if model is Dimension:
        return ["pk"]
    paths = _forward(model, "", 3, {model})
    if paths:
        return paths
    names = {f.name for f in model._meta.concrete_fields}
    if "dimension_ref" in names:
        return ["dimension_ref"]
    found = []
    for rel in model._meta.related_objects:
        if rel.one_to_many or rel.one_to_one:
            inner = _forward(rel.related_model, "", 2, {model})
            found += [f"{rel.name}__{p}" for p in inner]
    return found


def _forward(model, prefix: str, depth: int, seen: set) -> list[str]:
    relations = [
        f for f in model._meta.concrete_fields if f.is_relation and (f.many_to_one or f.one_to_one)
    ]
    here = [f"{prefix}{f.name}__pk" for f in relations if f.related_model is Dimension]
    if here or depth <= 1:
        return here
    deeper: list[str] = []
    for f in relations:
        target = f.related_model
        if target is None or target in seen or target._meta.app_label not in PROJECT_APPS:
            continue
        deeper += _forward(target, f"{prefix}{f.name}__", depth - 1, seen | {target})
    return deeper


def row_dimensions(model: type[Model]) -> dict[str, frozenset[int] | None]:
    """str(pk) -> the Dimensions the row belongs to (None: it belongs to none, shared)."""
    by_name = dict(Dimension.objects.values_list("name", "pk"))
    rows: dict[str, set[int]] = {
        str(pk): set() for pk in model._base_manager.values_list("pk", flat=True)
    }
    for path in dimension_paths(model):
        for pk, value in model._base_manager.values_list("pk", path):
            if value is not None:
                rows[str(pk)].add(by_name.get(value, -1) if path == "dimension_ref" else value)
    return {pk: (frozenset(dims) if dims else None) for pk, dims in rows.items()}


def foreign_to(dims: frozenset[int] | None, own: set[int]) -> bool:
    return dims is not None and not (dims & own)


# -- snapshots


def project_models() -> list[type[Model]]:
    return [m for label in PROJECT_APPS for m in apps.get_app_config(label).get_models()]


def _historical(model: type[Model]) -> bool:
    return model.__name__.startswith("Historical")


def snapshot() -> dict[str, list[tuple]]:
    """Every row of every model of the project's apps, history tables included."""
    return {
        model._meta.label: sorted(map(repr, model._base_manager.order_by().values_list()))
        for model in project_models()
        if model._meta.label not in NOT_SNAPSHOT
    }


def model_state(model: type[Model]) -> list[str]:
    """A model's rows and its history rows, to tell whether one request changed them."""
    history = getattr(model._meta, "simple_history_manager_attribute", None)
    models = [model] + ([getattr(model, history).model] if history else [])
    return [repr(r) for m in models for r in m._base_manager.order_by("pk").values_list()]


def changed_rows(before: dict, after: dict) -> list[str]:
    out = []
    for label in sorted(before):
        gone = sorted(set(before[label]) - set(after[label]))
        new = sorted(set(after[label]) - set(before[label]))
        if gone or new:
            out.append(
                f"{label}: {len(gone)} rows gone or changed, {len(new)} new — "
                f"first new: {new[:1]!s:.300}, first gone: {gone[:1]!s:.300}"
            )
    return out
