"""Shared admin building blocks for every app (policies is the bottom layer)."""

from __future__ import annotations

from django.http import HttpRequest


class ReadOnlyAdminMixin:
    """No add, change or delete from the admin: these rows change only through the
    services (or never, for append-only records)."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
