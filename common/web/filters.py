"""The lists' filters: what the OpenAPI description says of a filter's value is what
the server enforces."""

from __future__ import annotations

import django_filters
from django.core.exceptions import ValidationError


class TypedFilterSet(django_filters.FilterSet):
    """django-filter skips a filter sent empty (`?passage_id=`); a filter whose schema
    is a uuid or an enum does not admit the empty string, so here it is refused
    (400 validation_error, code `blank`), as the OpenAPI description says."""

    TYPED = (django_filters.UUIDFilter, django_filters.ChoiceFilter)

    def is_valid(self) -> bool:
        valid = super().is_valid()
        for name, declared in self.filters.items():
            if isinstance(declared, self.TYPED) and self.data.get(name) == "":
                self.form.add_error(
                    name, ValidationError("this filter may not be empty.", code="blank")
                )
                valid = False
        return valid
