"""JSON Schema (Draft 2020-12) validation by jsonschema-rs, failures as jsonschema words them.

A `Schema` is compiled once by jsonschema-rs; `is_valid` answers the common case in Rust
and `failures` walks an instance only once it is known to be invalid. Each `Failure`
carries what jsonschema's ValidationError would: the keyword, the location in the
instance (original member names), the value found there, the subschema the keyword
belongs to and, for anyOf/oneOf, the failures of every branch. Failures come in
jsonschema's order (depth first, in the order the schema writes its keywords), so the
offenders callers build from them are those jsonschema led to (tests/grounding/
test_structured_against_jsonschema.py and tests/evidence/test_wsp_against_jsonschema.py
hold both to each other).

Known departures from jsonschema. Towards the specification: patterns are ECMA-262
regular expressions (``\\d`` is ASCII, ``$`` does not match before a final newline),
NaN and infinities are not numbers, ``multipleOf`` is exact for decimals (0.3 is a
multiple of 0.1). In the description: a false subschema fails at the member it refuses
(jsonschema names the parent object), members of additionalProperties come in the
instance's order (jsonschema's is a set's), and a failing contains is named by the
bound jsonschema-rs checked (``minContains``/``maxContains`` when the schema gives one,
where jsonschema says ``contains`` if no item matches). A ``$ref`` is only ever resolved
within the given resources: nothing is read from files or the network.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin

import jsonschema_rs

__all__ = ["Failure", "FormatCheck", "Schema", "SchemaInvalid", "best_match", "check_schema"]

# A format's check: called with strings only, True when the string conforms.
FormatCheck = Callable[[str], bool]
InstancePath = tuple[str | int, ...]

# Keywords whose subschema applies to a member or item of the instance: descending
# through them moves one step down the instance path.
_TO_MEMBER = frozenset(
    {"items", "additionalProperties", "unevaluatedItems", "unevaluatedProperties"}
)
_IN_PLACE = frozenset({"not", "if", "then", "else", "propertyNames", "contains"})
# Keywords mapping a name (or index) to a subschema: the evaluation path names it next.
_BY_NAME = frozenset({"properties", "patternProperties", "dependentSchemas"})
_BY_INDEX = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
# A failure whose place in jsonschema's order cannot be worked out goes last.
_UNORDERED = [1 << 30]


class SchemaInvalid(ValueError):
    """The schema is not a Draft 2020-12 schema jsonschema-rs can compile."""


@dataclass(frozen=True, eq=False)
class Failure:
    """One failing keyword, as jsonschema's ValidationError describes it."""

    keyword: str  # "minLength", "required", …; "false" for a false schema
    path: InstancePath  # member names and indices from the instance's root
    instance: Any  # what is at `path`
    schema: dict[str, Any]  # the subschema holding the keyword ({} for a false schema)
    value: Any  # schema[keyword], jsonschema's validator_value
    context: tuple[Failure, ...] = ()  # anyOf/oneOf matching no branch: every branch's

    @property
    def pointer(self) -> str:
        """`path` as an RFC 6901 JSON pointer."""
        return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in self.path)

    def matches_type(self) -> bool:
        """Whether the instance has a type the holding subschema allows (best_match)."""
        expected = self.schema.get("type")
        if expected is None:
            return False
        kinds = [expected] if isinstance(expected, str) else expected
        return any(_is_type(self.instance, kind) for kind in kinds)


def _is_type(value: Any, kind: str) -> bool:
    # jsonschema's Draft 2020-12 type checker: bool is no number, 1.0 is an integer.
    match kind:
        case "object":
            return isinstance(value, dict)
        case "array":
            return isinstance(value, list)
        case "string":
            return isinstance(value, str)
        case "null":
            return value is None
        case "boolean":
            return isinstance(value, bool)
        case "number":
            return isinstance(value, int | float) and not isinstance(value, bool)
        case "integer":
            if isinstance(value, float):
                return value.is_integer()
            return isinstance(value, int) and not isinstance(value, bool)
    return False


_WEAK = frozenset({"anyOf", "oneOf"})


def _relevance(failure: Failure) -> tuple:
    # jsonschema.exceptions.relevance, with no strong keywords.
    return (
        -len(failure.path),
        failure.path,
        failure.keyword not in _WEAK,
        False,
        not failure.matches_type(),
    )


def best_match(failure: Failure) -> Failure:
    """The branch failure of an anyOf/oneOf that stands out, as jsonschema.best_match:
    the deepest, then the earliest; the failure itself when two are as relevant."""
    best = failure
    while best.context:
        smallest = heapq.nsmallest(2, best.context, key=_relevance)
        if len(smallest) == 2 and _relevance(smallest[0]) == _relevance(smallest[1]):
            return best
        best = smallest[0]
    return best


def check_schema(contents: Any) -> None:
    """Raise SchemaInvalid unless `contents` is a Draft 2020-12 schema jsonschema-rs
    compiles. A $ref it cannot resolve here is not an error: the caller's registry may
    hold its target."""
    try:
        jsonschema_rs.meta.validate(contents)
        jsonschema_rs.Draft202012Validator(contents, offline=True)
    except jsonschema_rs.ValidationError as error:
        if not isinstance(error.kind, jsonschema_rs.ValidationErrorKind.Referencing):
            raise SchemaInvalid(error.message) from None
    except (ValueError, TypeError) as error:  # not JSON at all
        raise SchemaInvalid(str(error)) from None


class Schema:
    """A schema compiled once. ``resources`` maps an ``$id`` to the schema a ``$ref``
    may point into; ``formats`` replaces jsonschema-rs's check of those formats, and
    without it ``format`` only annotates (as for a jsonschema validator with no format
    checker)."""

    def __init__(
        self,
        contents: dict[str, Any] | bool,
        *,
        resources: Mapping[str, Any] | None = None,
        formats: Mapping[str, FormatCheck] | None = None,
    ) -> None:
        self.contents = contents
        base = contents.get("$id", "") if isinstance(contents, dict) else ""
        self._base = urldefrag(base).url
        self._resources = {**(resources or {}), self._base: contents}
        for uri, resource in list(self._resources.items()):
            _embedded(resource, uri, self._resources)
        try:
            self._validator = jsonschema_rs.Draft202012Validator(
                contents,
                registry=jsonschema_rs.Registry(list(resources.items())) if resources else None,
                formats=dict(formats) if formats else None,
                validate_formats=formats is not None,
                offline=True,  # a $ref outside `resources` is an error, never a file or URL read
            )
        except jsonschema_rs.ValidationError as error:
            raise SchemaInvalid(error.message) from None
        except ValueError as error:  # e.g. a lone surrogate in a member name
            raise SchemaInvalid(str(error)) from None

    def is_valid(self, instance: Any) -> bool:
        try:
            return self._validator.is_valid(instance)
        except UnicodeEncodeError:  # a lone surrogate: Rust strings are UTF-8
            return self._validator.is_valid(_encodable(instance))

    def failures(self, instance: Any) -> list[Failure]:
        """Every failure of `instance`, in jsonschema's order (empty when valid)."""
        if self.is_valid(instance):
            return []
        try:
            errors = list(self._validator.iter_errors(instance))
        except UnicodeEncodeError:
            errors = list(self._validator.iter_errors(_encodable(instance)))
        ordered: list[tuple[list[int], Failure]] = []
        seen: set[tuple[str, InstancePath]] = set()
        for error in errors:
            failure = self._failure(error, instance)
            if failure.keyword == "items" and failure.value is False:
                # jsonschema reports the items past prefixItems once, on the array.
                if ("items", failure.path) in seen:
                    continue
                seen.add(("items", failure.path))
            ordered.append((self._order(error.evaluation_path, failure.path, instance), failure))
        ordered.sort(key=lambda pair: pair[0])
        return [failure for _, failure in ordered]

    # -- one error -----------------------------------------------------------------

    def _failure(self, error: jsonschema_rs.ValidationError, root: Any) -> Failure:
        kind = error.kind
        path, instance = _locate(root, error.instance_path)
        where = error.schema_path
        if isinstance(kind, jsonschema_rs.ValidationErrorKind.PropertyNames):
            # jsonschema validates each member name in place of the object.
            inner = kind.error
            name = _original_key(instance, inner.instance) if isinstance(instance, dict) else None
            keyword, holder = self._keyword(inner)
            return Failure(keyword, path, name, holder, holder.get(keyword))
        keyword, holder = self._keyword(error)
        if keyword == "false":
            if where and where[-1] == "items" and _ends_with_keyword(where):
                parent, array = _locate(root, error.instance_path[:-1])
                return Failure("items", parent, array, holder, False)
            return Failure("false", path, instance, {}, False)
        context: tuple[Failure, ...] = ()
        if isinstance(
            kind,
            jsonschema_rs.ValidationErrorKind.AnyOf
            | jsonschema_rs.ValidationErrorKind.OneOfNotValid,
        ):
            context = tuple(self._failure(e, root) for branch in kind.context for e in branch)
        return Failure(keyword, path, instance, holder, holder.get(keyword), context)

    def _keyword(self, error: jsonschema_rs.ValidationError) -> tuple[str, dict[str, Any]]:
        """The failing keyword and the subschema holding it."""
        where = error.schema_path
        holder = self._holder(error.absolute_keyword_location, where)
        if isinstance(error.kind, jsonschema_rs.ValidationErrorKind.FalseSchema):
            return "false", holder
        return (str(where[-1]) if where else str(error.kind.name)), holder

    def _holder(self, location: str | None, where: list[str | int]) -> dict[str, Any]:
        """The subschema holding the failing keyword. The absolute keyword location names
        the resource the keyword is written in and its place there; without one (a root
        with no $id, no $ref followed out of it) the schema path runs from the root."""
        try:
            if location:
                uri, fragment = urldefrag(location)
                node = _follow(self._resources[uri], _tokens(fragment)[:-1])
            else:
                node = _follow(self.contents, where[:-1])
        except (KeyError, IndexError, TypeError, ValueError):
            return {}
        return node if isinstance(node, dict) else {}

    # -- jsonschema's order --------------------------------------------------------

    def _order(self, evaluation_path: list[str | int], path: InstancePath, root: Any) -> list[int]:
        """A sort key putting failures in the order jsonschema finds them: at each
        subschema, keywords as the schema writes them (``then``/``else`` where ``if``
        is), named subschemas as written, members and items as the instance has them."""
        try:
            return self._walk(list(evaluation_path), path, root)
        except (KeyError, IndexError, ValueError, TypeError, StopIteration):
            return _UNORDERED

    def _walk(self, segments: list[str | int], path: InstancePath, root: Any) -> list[int]:
        node, base, key = self.contents, self._base, []
        steps, current = iter(path), root

        def step() -> int:
            nonlocal current
            part = next(steps)
            position = list(current).index(part) if isinstance(current, dict) else int(part)
            current = current[part]
            return position

        i = 0
        while i < len(segments) and isinstance(node, dict):
            keyword = segments[i]
            i += 1
            names = list(node)
            key.append(names.index("if" if keyword in ("then", "else") else keyword))
            sub = node[keyword]
            if keyword == "$ref":
                node, base = self._resolve(base, sub)
            elif i == len(segments):
                break  # the failing keyword itself
            elif keyword in _BY_INDEX:
                index = int(segments[i])
                i += 1
                key.append(index)
                node = sub[index]
                if keyword == "prefixItems":
                    step()
            elif keyword in _BY_NAME:
                name = segments[i]
                i += 1
                key.append(list(sub).index(name))
                node = sub[name]
                if keyword == "properties":
                    step()
                elif keyword == "patternProperties":
                    key.append(step())
            elif keyword in _TO_MEMBER:
                key.append(step())
                node = sub
            elif keyword in _IN_PLACE:
                node = sub
            else:
                break
        return key

    def _resolve(self, base: str, ref: str) -> tuple[Any, str]:
        uri, fragment = urldefrag(ref)
        if not uri:
            uri = base
        elif uri not in self._resources:
            uri = urljoin(base, uri)
        return _follow(self._resources[uri], _tokens(fragment)), uri


def _tokens(fragment: str) -> list[str]:
    """The reference tokens of a JSON pointer fragment ("" or "/a/0")."""
    return [unquote(t).replace("~1", "/").replace("~0", "~") for t in fragment.split("/")[1:]]


def _follow(node: Any, parts: list[str] | list[str | int]) -> Any:
    for part in parts:
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def _embedded(node: Any, base: str, found: dict[str, Any], top: bool = True) -> None:
    """Add the subschemas below `node` that carry an $id of their own, by absolute URI."""
    if isinstance(node, dict):
        identifier = node.get("$id")
        if not top and isinstance(identifier, str):
            base = urldefrag(urljoin(base, identifier)).url
            found.setdefault(base, node)
        for value in node.values():
            _embedded(value, base, found, top=False)
    elif isinstance(node, list):
        for item in node:
            _embedded(item, base, found, top=False)


def _ends_with_keyword(where: list[str | int]) -> bool:
    """Whether a schema path ends with a keyword, not with a member or $defs name."""
    i, last_is_keyword = 0, False
    while i < len(where):
        segment = where[i]
        i += 1
        last_is_keyword = True
        if (segment in _BY_NAME or segment in _BY_INDEX or segment == "$defs") and i < len(where):
            i += 1
            last_is_keyword = False
    return last_is_keyword


# -- lone surrogates -------------------------------------------------------------------
# JSON admits lone surrogate escapes and Python strings hold them; Rust strings cannot.
# Such an instance is validated as a stand-in where each lone surrogate is a private-use
# character of its own (one code point for one: lengths stay, distinct names stay
# distinct), and failures are located back in the original.

_STAND_INS = {cp: 0x100000 + cp - 0xD800 for cp in range(0xD800, 0xE000)}


def _encodable_text(text: str) -> str:
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.translate(_STAND_INS)
    return text


def _encodable(value: Any) -> Any:
    if isinstance(value, str):
        return _encodable_text(value)
    if isinstance(value, dict):
        return {
            _encodable_text(k) if isinstance(k, str) else k: _encodable(v) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_encodable(item) for item in value]
    return value


def _original_key(node: dict, key: Any) -> Any:
    if key in node:
        return key
    return next((k for k in node if isinstance(k, str) and _encodable_text(k) == key), key)


def _locate(root: Any, instance_path: list[str | int]) -> tuple[InstancePath, Any]:
    """The path with the instance's own member names, and what is there."""
    node, path = root, []
    for part in instance_path:
        if isinstance(node, dict):
            part = _original_key(node, part)
            node = node.get(part)
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        else:
            node = None
        path.append(part)
    return tuple(path), node
