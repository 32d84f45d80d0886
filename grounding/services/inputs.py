"""Validation of operation inputs, reporting every offender with a JSON pointer.

The bodies are declared once, as serializers (`grounding.bodies`); each is compiled
here, once, into a `Body`: its members' names, which are required, and one check per
member, chosen by the member's declaration (a reference, a flag, a date-time, a
choice, a structured value validated with its shipped JSON Schema and the profile's
stricter one). Every caller's input goes through these checks, over HTTP or not; the
rules across members (what the profile admits, what a generation use needs) are
`grounding.services.input_rules`.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.core.validators import RegexValidator
from rest_framework import serializers

from common.kernel import compat
from common.kernel.fields import RuledCharField
from common.kernel.refusals import Offender, pointer_join
from grounding import bodies
from grounding.services.input_rules import check_string
from grounding.values import structured
from grounding.values.fields import StructuredField
from grounding.values.timestamps import parse_rfc3339
from policies.models import Profile

# One member's check, run on a value that is present and not null.
Check = Callable[[str, Any, str, Profile | None], list[Offender]]


@dataclass(frozen=True)
class Body:
    """A body (or one of its groups) as its serializer declares it."""

    name: str
    declared: dict[str, serializers.Field]
    required: tuple[str, ...]
    # One check per member but maps, run by `validate_group` on a present, non-null
    # value. Maps are kept apart: from-citations reads `checks` as its members with a
    # scalar check (grounding.services.citations.service._STRINGS).
    checks: dict[str, Check]
    groups: dict[str, Body] = field(default_factory=dict)
    maps: dict[str, Check] = field(default_factory=dict)

    @property
    def names(self) -> Iterable[str]:
        return self.declared.keys()

    @property
    def lists(self) -> tuple[str, ...]:
        """The members declared as lists, in order."""
        return tuple(
            key
            for key, f in self.declared.items()
            if isinstance(f, serializers.ListSerializer | serializers.ListField)
        )

    def max_length(self, name: str) -> int | None:
        return getattr(self.declared[name], "max_length", None)

    def choices(self, name: str) -> list[str]:
        return list(self.declared[name].choices)

    def unknown(self, value: dict[str, Any], pointer: str = "") -> list[Offender]:
        """Members the body does not declare (top-level wording)."""
        return [
            Offender(pointer_join(pointer, key), "unknown_field", f"unknown field {key!r}.")
            for key in value
            if key not in self.declared
        ]

    def check(
        self, name: str, value: Any, *, pointer: str, profile: Profile | None = None
    ) -> list[Offender]:
        """The check of one member, on a present value."""
        check = self.checks.get(name) or self.maps[name]
        return check(name, value, pointer, profile)

    def strings(self, payload: dict[str, Any], names: Iterable[str], *, pointer: str):
        """Top-level string members, as `check_string` judges them, bounded and required
        as declared."""
        offenders: list[Offender] = []
        for name in names:
            declared = self.declared[name]
            offenders += check_string(
                payload,
                name,
                pointer=pointer,
                max_length=declared.max_length,
                required=declared.required,
            )
        return offenders


def compile_body(name: str, serializer_class: type[serializers.Serializer]) -> Body:
    """The `Body` of `serializer_class`: built once, at import, from its fields.

    Every member gets a check (`_check_for`); a field kind with no check is refused
    here, at start-up, rather than let through unchecked. The expected revision is
    left out: it is the request's precondition, which `grounding.api.conditional`
    takes out of the body before any service runs.
    """
    declared = {
        key: f
        for key, f in serializer_class().get_fields().items()
        if not isinstance(f, bodies.ExpectedRevision)
    }
    if not all(key.isidentifier() for key in declared):
        raise ValueError(f"{serializer_class.__name__}: member names must be identifiers")
    groups = {
        key: compile_body(key, type(f))
        for key, f in declared.items()
        if isinstance(f, serializers.Serializer)
    }
    checks: dict[str, Check] = {}
    maps: dict[str, Check] = {}
    for key, f in declared.items():
        where = f"{serializer_class.__name__}.{key}"
        check = _group(groups[key]) if key in groups else _check_for(f, where)
        (maps if isinstance(f, serializers.DictField) else checks)[key] = check
    required = tuple(key for key, f in declared.items() if f.required)
    return Body(name, declared, required, checks, groups, maps)


def _check_for(declared: serializers.Field, where: str) -> Check:
    """The check of one declared field; a kind this compiler does not know is refused
    (TypeError), so no member of a body goes unchecked."""
    if isinstance(declared, StructuredField):
        return _structured(declared.kind)
    if isinstance(declared, serializers.BooleanField):
        return _flag
    if isinstance(declared, serializers.DateTimeField):
        return _instant
    if isinstance(declared, serializers.MultipleChoiceField):
        raise TypeError(f"{where}: no check for MultipleChoiceField")
    if isinstance(declared, serializers.ChoiceField):
        return _choice(list(declared.choices))
    if isinstance(declared, serializers.UUIDField):
        return _reference(required=True, max_length=bodies.REF_LENGTH)
    if isinstance(declared, serializers.RegexField):
        return _pattern(declared)
    if type(declared) is serializers.CharField or type(declared) is RuledCharField:
        # A RuledCharField's rule is its service's to check (with its own offenders).
        return _reference(required=not declared.allow_blank, max_length=declared.max_length)
    if type(declared) is serializers.IntegerField:
        return _integer(declared.min_value, declared.max_value)
    if isinstance(declared, serializers.ListSerializer):
        if not isinstance(declared.child, serializers.Serializer):
            raise TypeError(f"{where}: a list of {type(declared.child).__name__}")
        child = compile_body(where, type(declared.child))
        return _items(_group(child), declared.min_length, declared.max_length)
    if type(declared) is serializers.ListField:
        child_check = _child_check(declared.child, f"{where}[]")
        return _items(child_check, declared.min_length, declared.max_length)
    if type(declared) is serializers.DictField:
        return _map(_child_check(declared.child, f"{where}{{}}"))
    # Subclasses of the kinds above may add rules of their own (EmailField, a
    # DecimalField's places…): refused until a check says what they mean.
    raise TypeError(f"{where}: no check for {type(declared).__name__}")


def _child_check(child: serializers.Field, where: str) -> Check:
    """The check of a list's or a map's item: a group, any JSON value (a DictField's
    default child, which declares nothing), or a field's own check."""
    if isinstance(child, serializers.Serializer):
        return _group(compile_body(where, type(child)))
    if compat.is_unvalidated_field(child):
        return _any
    return _check_for(child, where)


def _reference(*, required: bool, max_length: int | None) -> Check:
    def check(key: str, value: Any, pointer: str, profile: Profile | None) -> list[Offender]:
        if not isinstance(value, str) or (required and not value.strip()):
            return [Offender(pointer, "type", f"{key} must be a non-empty string.")]
        if max_length is not None and len(value) > max_length:
            detail = f"{key} is longer than {max_length} characters."
            return [Offender(pointer, "max_length", detail)]
        return []

    return check


def _flag(key: str, value: Any, pointer: str, profile: Profile | None) -> list[Offender]:
    return [] if isinstance(value, bool) else [Offender(pointer, "type", "must be a boolean.")]


def _instant(key: str, value: Any, pointer: str, profile: Profile | None) -> list[Offender]:
    if not isinstance(value, str) or parse_rfc3339(value) is None:
        return [Offender(pointer, "format", f"{key} must be an RFC 3339 date-time.")]
    return []


def _choice(allowed: list[str]) -> Check:
    detail = ", ".join(allowed)

    def check(key: str, value: Any, pointer: str, profile: Profile | None) -> list[Offender]:
        if value not in allowed:
            return [Offender(pointer, "enum", f"{key} must be one of {detail}.")]
        return []

    return check


def _pattern(declared: serializers.RegexField) -> Check:
    regex = next(v.regex for v in declared.validators if isinstance(v, RegexValidator))

    def check(key: str, value: Any, pointer: str, profile: Profile | None) -> list[Offender]:
        if not isinstance(value, str) or not regex.search(value):
            return [Offender(pointer, "pattern", f"{key} must match {regex.pattern}.")]
        return []

    return check


def _integer(minimum: int | None, maximum: int | None) -> Check:
    def check(key: str, value: Any, pointer: str, profile: Profile | None) -> list[Offender]:
        # bool is an int in Python, not in JSON.
        if not isinstance(value, int) or isinstance(value, bool):
            return [Offender(pointer, "type", f"{key} must be an integer.")]
        if minimum is not None and value < minimum:
            return [Offender(pointer, "minimum", f"{key} must be at least {minimum}.")]
        if maximum is not None and value > maximum:
            return [Offender(pointer, "maximum", f"{key} must be at most {maximum}.")]
        return []

    return check


def _items(item: Check, min_length: int | None, max_length: int | None) -> Check:
    """A list: its length as declared, and every item by the child's check, located
    by its index (a null item is checked too: a list has no optional items)."""

    def check(key: str, value: Any, pointer: str, profile: Profile | None) -> list[Offender]:
        if not isinstance(value, list):
            return [Offender(pointer, "type", f"{key} must be a list.")]
        if min_length is not None and len(value) < min_length:
            return [Offender(pointer, "min_items", f"{key} needs {min_length} items or more.")]
        if max_length is not None and len(value) > max_length:
            return [Offender(pointer, "max_items", f"{key} takes {max_length} items at most.")]
        offenders: list[Offender] = []
        for index, each in enumerate(value):
            at = f"{pointer}/{index}"
            if each is None:
                offenders.append(Offender(at, "type", f"an item of {key} cannot be null."))
            else:
                offenders += item(f"an item of {key}", each, at, profile)
        return offenders

    return check


def _map(item: Check) -> Check:
    """An object of arbitrary keys (each escaped into the pointer), every value by the
    child's check."""

    def check(key: str, value: Any, pointer: str, profile: Profile | None) -> list[Offender]:
        if not isinstance(value, dict):
            return [Offender(pointer, "type", f"{key} must be an object.")]
        offenders: list[Offender] = []
        for name, each in value.items():
            at = pointer_join(pointer, str(name))
            if each is None:
                offenders.append(Offender(at, "type", f"a value of {key} cannot be null."))
            else:
                offenders += item(f"a value of {key}", each, at, profile)
        return offenders

    return check


def _group(group: Body) -> Check:
    def check(key: str, value: Any, pointer: str, profile: Profile | None) -> list[Offender]:
        return validate_group(group, value, profile=profile, pointer=pointer)

    return check


def _any(key: str, value: Any, pointer: str, profile: Profile | None) -> list[Offender]:
    return []  # declared as any JSON value: the parsed body is one


def _structured(kind: str) -> Check:
    def check(key: str, value: Any, pointer: str, profile: Profile | None) -> list[Offender]:
        profile_schema = (profile.field_schemas or {}).get(key) if profile else None
        return structured.validate(kind, value, pointer=pointer, profile_schema=profile_schema)

    return check


REGISTER = compile_body("register", bodies.RegisterSerializer)
STATEMENT = REGISTER.groups["statement"]
PASSAGE = REGISTER.groups["passage"]
ANCHOR = REGISTER.groups["anchor"]
SUPPORT = REGISTER.groups["support"]
TIME = REGISTER.groups["time"]
DISCLOSURE = REGISTER.groups["disclosure"]
REVISE = compile_body("revise", bodies.ReviseSerializer)
ASSESSMENT = compile_body("assessment", bodies.AssessmentSerializer)
WITHDRAWAL = compile_body("withdrawal", bodies.WithdrawalSerializer)
DISPOSAL = compile_body("disposal", bodies.DisposalSerializer)
EVIDENCE_SET = compile_body("evidence_set", bodies.EvidenceSetCreateSerializer)
CHANGE_NOTIFICATION = compile_body(
    "change_notification", bodies.ChangeNotificationRequestSerializer
)
FROM_CITATIONS = compile_body("from_citations", bodies.FromCitationsRequestSerializer)


def declared_bodies() -> list[type[serializers.Serializer]]:
    """Every body and group the modules of `grounding.bodies` declare, those the
    package does not re-export included (a list's item, `records._MatchSerializer`)."""
    modules = [
        importlib.import_module(f"{bodies.__name__}.{info.name}")
        for info in pkgutil.iter_modules(bodies.__path__)
    ]
    return [
        value
        for module in modules
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, serializers.Serializer)
        and value.__module__ == module.__name__
    ]


# Each declared body compiled at start-up, the ones no service walks yet included
# (bulk registration's envelope, a supplied anchor observation, a member to add):
# a field kind the compiler cannot check stops the process here.
COMPILED = {cls.__name__: compile_body(cls.__name__, cls) for cls in declared_bodies()}
# The body each operation's declared `input` compiles to (policies.operations): the
# operations' bodies check what their declaration names.
_BY_INPUT: dict[type, Body] = {
    **{cls: COMPILED[cls.__name__] for cls in declared_bodies()},
    bodies.RegisterSerializer: REGISTER,
    bodies.ReviseSerializer: REVISE,
    bodies.AssessmentSerializer: ASSESSMENT,
    bodies.WithdrawalSerializer: WITHDRAWAL,
    bodies.DisposalSerializer: DISPOSAL,
    bodies.EvidenceSetCreateSerializer: EVIDENCE_SET,
    bodies.ChangeNotificationRequestSerializer: CHANGE_NOTIFICATION,
    bodies.FromCitationsRequestSerializer: FROM_CITATIONS,
}


def of(operation: Any) -> Body:
    """The compiled checks of an operation's declared input (a `grounding.bodies`
    serializer); KeyError for an input that is not one."""
    return _BY_INPUT[operation.input]


def validate_group(
    group: Body,
    value: Any,
    *,
    profile: Profile | None = None,
    pointer: str | None = None,
    partial: bool = False,
) -> list[Offender]:
    """Check one group: an object, no unknown keys, required keys present (unless
    `partial`: a revision merges the group into the link's), values typed."""
    name = group.name
    base = pointer if pointer is not None else f"/{name}"
    if not isinstance(value, dict):
        return [Offender(base, "type", f"{name} must be an object.")]
    declared = group.declared
    offenders = [
        Offender(pointer_join(base, key), "unknown_field", f"{name} has no field {key!r}.")
        for key in value
        if key not in declared
    ]
    if not partial:
        offenders += [
            Offender(pointer_join(base, key), "required", f"{key} is required.")
            for key in group.required
            if value.get(key) in (None, "")
        ]
    for key, check in (group.checks | group.maps).items():
        item = value.get(key)
        if item is not None:
            # A declared name is a plain identifier: joined as is, no escaping needed.
            offenders += check(key, item, f"{base}/{key}", profile)
    return offenders
