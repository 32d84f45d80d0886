"""A compiled yes/no check of a JSON Schema: the fast path of validation.

jsonschema resolves every ``$ref`` through the `referencing` registry and builds a
validator object per subschema it descends into; on a WSP response or a bulk
registration that is most of validation's time. Here a schema is compiled once into
plain closures that only answer "does the instance conform?".

The compiler knows a fixed set of keywords, each with jsonschema's Draft 2020-12
semantics (see the keyword functions in ``jsonschema/_keywords.py``; the leaf keywords
live in fastschema_keywords.py). Any other keyword, a nested ``$id``, an anchor or a
``$ref`` outside the given resources raises `Unsupported`, and the caller then
validates with jsonschema alone. An instance the check rejects is validated again by
jsonschema, which names the offenders, so only acceptance has to agree with
jsonschema exactly (tests/evidence/test_wsp_fastschema.py and
tests/grounding/test_structured_fastschema.py compare both on mutated instances).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin

from policies.fastschema_keywords import LEAVES, Check, Unsupported, compile_pattern

__all__ = ["Check", "FormatCheck", "Unsupported", "compile_schema"]

# format_check(instance, format_name) -> conforms?, e.g. FormatChecker.conforms.
FormatCheck = Callable[[Any, str], bool]

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"

# Keywords that never constrain an instance (jsonschema has no validator for them).
# "then"/"else" are compiled with "if"; $schema and $id are checked in compile().
ANNOTATIONS = frozenset(
    {
        "$comment",
        "$defs",
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
    }
)


def compile_schema(
    schema: dict | bool,
    *,
    resources: Mapping[str, Any] | None = None,
    format_check: FormatCheck | None = None,
    annotations: Iterable[str] = (),
) -> Check:
    """A function telling whether an instance is valid against `schema`.

    ``resources`` maps a schema's ``$id`` to the schema, as the `referencing` registry
    of the jsonschema validator it stands in for; a ``$ref`` may point into them.
    ``format_check`` is the validator's format checker (``FormatChecker.conforms``);
    without one ``format`` only annotates, as for a validator built without a checker.
    ``annotations`` names extra keywords the caller reads and jsonschema ignores.
    Raises `Unsupported` when the schema needs something not implemented here.
    """
    return _Compiler(schema, resources or {}, format_check, annotations).compile_root()


def _always(value: Any) -> bool:
    return True


def _never(value: Any) -> bool:
    return False


def _all(checks: list[Check]) -> Check:
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]

    def check(value: Any) -> bool:
        # A plain loop: all() over a generator costs a frame per call on the hot path.
        for each in checks:  # noqa: SIM110
            if not each(value):
                return False
        return True

    return check


def _only_dict(schema: Any, keyword: str) -> dict:
    if not isinstance(schema, dict):
        raise Unsupported(f"{keyword} of {schema!r}")
    return schema


def _only_list(schemas: Any, keyword: str) -> list:
    if not isinstance(schemas, list) or not schemas:
        raise Unsupported(f"{keyword} of {schemas!r}")
    return schemas


class _Compiler:
    def __init__(
        self,
        root: Any,
        resources: Mapping[str, Any],
        format_check: FormatCheck | None,
        annotations: Iterable[str],
    ) -> None:
        self.root = root
        self.base = root.get("$id", "") if isinstance(root, dict) else ""
        if not isinstance(self.base, str):
            raise Unsupported(f"$id {self.base!r}")
        # The validator's registry holds the root under its own $id (or ""), over any
        # resource of the same id.
        self.resources = {**resources, self.base: root}
        self.format_check = format_check
        self.annotations = ANNOTATIONS | frozenset(annotations)
        # Compiled $ref targets by (resource, pointer): each target is compiled once.
        self.refs: dict[tuple[str, str], Check] = {}
        self.walked: set[str] = set()

    def compile_root(self) -> Check:
        self._refuse_embedded_ids(self.base)
        return self.compile(self.root, resource_root=True)

    def _refuse_embedded_ids(self, uri: str) -> None:
        """An $id below a resource's root, even in unreferenced $defs, is an embedded
        resource: `referencing` crawls it into the registry, which this compiler does
        not model. Refused up front (a member merely named "$id" is refused too)."""
        if uri in self.walked:
            return
        self.walked.add(uri)
        root = self.resources[uri]
        if isinstance(root, dict) and "#" in str(root.get("$id", "")):
            raise Unsupported("an $id with a fragment")
        stack = [root]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                if node is not root and "$id" in node:
                    raise Unsupported("an embedded resource ($id below the root)")
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)

    def compile(self, schema: Any, resource_root: bool = False) -> Check:
        if schema is True:
            return _always
        if schema is False:
            return _never
        if not isinstance(schema, dict):
            raise Unsupported(f"schema {schema!r}")
        if "$schema" in schema and schema["$schema"] != DRAFT_2020_12:
            # jsonschema switches to another draft's keywords for that subschema.
            raise Unsupported(f"$schema {schema['$schema']!r}")
        if "$id" in schema and not (resource_root and schema["$id"] == self.base):
            raise Unsupported("a nested $id changes the base of $ref")
        if ("then" in schema or "else" in schema) and "if" not in schema:
            raise Unsupported("then/else without if")
        checks: list[Check] = []
        for keyword, value in schema.items():
            if keyword in self.annotations or keyword in ("$schema", "$id", "then", "else"):
                continue
            leaf = LEAVES.get(keyword)
            if leaf is not None:
                checks.append(leaf(value, schema))
                continue
            method = _STRUCTURAL.get(keyword)
            if method is None:
                raise Unsupported(f"keyword {keyword!r}")
            check = method(self, value, schema)
            if check is not None:
                checks.append(check)
        return _all(checks)

    # -- $ref: resolved the way referencing's Resolver.lookup resolves it ------------

    def _k_ref(self, ref: Any, schema: dict) -> Check:
        if not isinstance(ref, str):
            raise Unsupported(f"$ref {ref!r}")
        if ref.startswith("#"):
            uri, fragment = self.base, ref[1:]
        else:
            uri, fragment = urldefrag(urljoin(self.base, ref))
        if uri not in self.resources:
            raise Unsupported(f"$ref {ref!r} is outside the known resources")
        if fragment and not fragment.startswith("/"):
            raise Unsupported(f"$ref {ref!r} names an anchor")
        self._refuse_embedded_ids(uri)
        key = (uri, unquote(fragment))
        if key not in self.refs:
            # While the target compiles, a recursive $ref to it goes through the cell.
            cell: list[Check] = []
            self.refs[key] = lambda value: cell[0](value)
            target = self._resolve(uri, key[1])
            outer, self.base = self.base, uri  # refs inside the target are relative to it
            try:
                cell.append(self.compile(target, resource_root=not fragment))
            finally:
                self.base = outer
            self.refs[key] = cell[0]
        return self.refs[key]

    def _resolve(self, uri: str, pointer: str) -> Any:
        node = self.resources[uri]
        if not pointer:
            return node
        for part in pointer[1:].split("/"):
            try:
                if isinstance(node, list):
                    node = node[int(part)]
                else:
                    node = node[part.replace("~1", "/").replace("~0", "~")]
            except (LookupError, TypeError, ValueError):
                raise Unsupported(f"$ref {uri}#{pointer} does not resolve") from None
        return node

    # -- combinators ---------------------------------------------------------------

    def _k_allOf(self, subschemas: Any, schema: dict) -> Check:
        return _all([self.compile(sub) for sub in _only_list(subschemas, "allOf")])

    def _k_anyOf(self, subschemas: Any, schema: dict) -> Check:
        checks = [self.compile(sub) for sub in _only_list(subschemas, "anyOf")]

        def check(value: Any) -> bool:
            for each in checks:  # noqa: SIM110 (see _all)
                if each(value):
                    return True
            return False

        return check

    def _k_oneOf(self, subschemas: Any, schema: dict) -> Check:
        checks = [self.compile(sub) for sub in _only_list(subschemas, "oneOf")]

        def check(value: Any) -> bool:
            found = False
            for each in checks:
                if each(value):
                    if found:
                        return False  # valid under a second one
                    found = True
            return found

        return check

    def _k_not(self, subschema: Any, schema: dict) -> Check:
        inner = self.compile(subschema)
        return lambda value: not inner(value)

    def _k_if(self, condition: Any, schema: dict) -> Check:
        test = self.compile(condition)
        then = self.compile(schema.get("then", True))
        otherwise = self.compile(schema.get("else", True))
        return lambda value: then(value) if test(value) else otherwise(value)

    def _k_format(self, name: Any, schema: dict) -> Check | None:
        if not isinstance(name, str):
            raise Unsupported(f"format {name!r}")
        conforms = self.format_check
        if conforms is None:
            return None  # no checker: an annotation, as in jsonschema
        return lambda value: conforms(value, name)

    # -- arrays and objects ----------------------------------------------------------

    def _k_items(self, items: Any, schema: dict) -> Check:
        each = self.compile(items)

        def check(value: Any) -> bool:
            if isinstance(value, list):
                for item in value:
                    if not each(item):
                        return False
            return True

        return check

    def _k_properties(self, properties: Any, schema: dict) -> Check:
        compiled = [
            (name, self.compile(sub)) for name, sub in _only_dict(properties, "properties").items()
        ]

        def check(value: Any) -> bool:
            if isinstance(value, dict):
                for name, each in compiled:
                    if name in value and not each(value[name]):
                        return False
            return True

        return check

    def _k_patternProperties(self, patterns: Any, schema: dict) -> Check:
        compiled = [
            (compile_pattern(pattern), self.compile(sub))
            for pattern, sub in _only_dict(patterns, "patternProperties").items()
        ]

        def check(value: Any) -> bool:
            if isinstance(value, dict):
                for search, each in compiled:
                    for key, item in value.items():
                        if search(key) and not each(item):
                            return False
            return True

        return check

    def _k_additionalProperties(self, additional: Any, schema: dict) -> Check | None:
        if additional is True:
            return None
        known = frozenset(_only_dict(schema.get("properties", {}), "properties"))
        patterns = _only_dict(schema.get("patternProperties", {}), "patternProperties")
        # jsonschema's find_additional_properties searches all patterns joined by "|"
        # (and none when the joined pattern is empty).
        joined = "|".join(patterns)
        search = compile_pattern(joined) if joined else None
        if additional is False and search is None:
            return lambda value: not isinstance(value, dict) or known.issuperset(value)
        each = self.compile(additional)

        def check(value: Any) -> bool:
            if isinstance(value, dict):
                for key, item in value.items():
                    if key in known or (search is not None and search(key)):
                        continue
                    if not each(item):
                        return False
            return True

        return check

    def _k_propertyNames(self, names: Any, schema: dict) -> Check:
        each = self.compile(names)

        def check(value: Any) -> bool:
            if isinstance(value, dict):
                for key in value:
                    if not each(key):
                        return False
            return True

        return check

    def _k_dependentSchemas(self, dependencies: Any, schema: dict) -> Check:
        compiled = [
            (name, self.compile(sub))
            for name, sub in _only_dict(dependencies, "dependentSchemas").items()
        ]

        def check(value: Any) -> bool:
            if isinstance(value, dict):
                for name, each in compiled:
                    if name in value and not each(value):
                        return False
            return True

        return check


# Keyword → compiler method, for the keywords that descend into subschemas or need
# the compiler's state; together with LEAVES, nothing else is accepted.
_STRUCTURAL: dict[str, Callable[[_Compiler, Any, dict], Check | None]] = {
    "$ref": _Compiler._k_ref,
    "allOf": _Compiler._k_allOf,
    "anyOf": _Compiler._k_anyOf,
    "oneOf": _Compiler._k_oneOf,
    "not": _Compiler._k_not,
    "if": _Compiler._k_if,
    "format": _Compiler._k_format,
    "items": _Compiler._k_items,
    "properties": _Compiler._k_properties,
    "patternProperties": _Compiler._k_patternProperties,
    "additionalProperties": _Compiler._k_additionalProperties,
    "propertyNames": _Compiler._k_propertyNames,
    "dependentSchemas": _Compiler._k_dependentSchemas,
}
