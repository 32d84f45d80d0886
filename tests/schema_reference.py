"""The reference for common.kernel.schemas: jsonschema, the pure-Python validator the
registry used before jsonschema-rs, its errors read as kernel `Failure`s so that the
callers' own offender wording can be applied to both and compared."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError, best_match

from common.kernel.schemas import Failure, FormatCheck


def format_checker(formats: dict[str, FormatCheck]) -> FormatChecker:
    """A jsonschema checker asserting exactly `formats` (strings only, as jsonschema-rs)."""
    checker = FormatChecker(formats=())
    for name, check in formats.items():
        checker.checks(name)(lambda value, check=check: not isinstance(value, str) or check(value))
    return checker


def as_failure(error: ValidationError) -> Failure:
    """A jsonschema error as the kernel describes a failure."""
    keyword = error.validator if isinstance(error.validator, str) else "false"
    return Failure(
        keyword=keyword,
        path=tuple(error.absolute_path),
        instance=error.instance,
        schema=error.schema if isinstance(error.schema, dict) else {},
        value=error.validator_value if keyword != "false" else False,
        context=tuple(as_failure(e) for e in error.context or ()),
    )


def failures(validator: Draft202012Validator, value: Any) -> list[Failure]:
    """jsonschema's errors, in jsonschema's order."""
    return [as_failure(e) for e in validator.iter_errors(value)]


def best_failures(validator: Draft202012Validator, value: Any) -> Iterator[Failure]:
    """As `failures`, an anyOf/oneOf replaced by jsonschema.best_match's pick."""
    for error in validator.iter_errors(value):
        yield as_failure(best_match([error]) if error.context else error)


def finite(value: Any) -> bool:
    """No NaN or infinity anywhere in `value`: numbers JSON can carry."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(finite(v) for v in value.values())
    if isinstance(value, list):
        return all(finite(v) for v in value)
    return True
