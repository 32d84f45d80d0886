"""The fields and bounds the bodies share, declared once so that every body bounds a
reference, an optional member and an expected revision the same way: the compiled
checks (`grounding.services.inputs`) and the OpenAPI description read these
declarations, so one bound here is one bound everywhere.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from grounding.values.fields import structured

EXPECTED_REVISION = (
    "The revision you expect, instead of If-Match (for clients that cannot set headers)."
)
REF_LENGTH = 512  # every reference fits 512 characters
OWNER_REF_LENGTH = 255  # GroundingLink.owner_ref


def ref(**kwargs: Any) -> serializers.CharField:
    """A reference: a non-empty string (not only spaces) of ≤512 characters."""
    return serializers.CharField(max_length=REF_LENGTH, **kwargs)


def opt_ref(**kwargs: Any) -> serializers.CharField:
    return serializers.CharField(
        max_length=REF_LENGTH, required=False, allow_blank=True, allow_null=True, **kwargs
    )


def opt(kind: str, **kwargs: Any) -> serializers.Field:
    return structured(kind, required=False, allow_null=True, **kwargs)


def opt_choice(choices, **kwargs: Any) -> serializers.ChoiceField:
    return serializers.ChoiceField(choices=choices, required=False, allow_null=True, **kwargs)


def opt_instant(**kwargs: Any) -> serializers.DateTimeField:
    return serializers.DateTimeField(required=False, allow_null=True, **kwargs)


class ExpectedRevision(serializers.IntegerField):
    """The body's alternative to If-Match. `grounding.api.conditional` takes it out of
    the body before any service sees it: it is no member of the operation's input."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            min_value=1,
            max_value=999_999_999,
            required=False,
            help_text=EXPECTED_REVISION,
            **kwargs,
        )
