"""The feed in the admin, for a Dimension's stewards (as the API answers them):
subscriptions (never their secret) turned on or off through the services, and their
delivery attempts, read-only. Subscribing is done through the API, which shows the
secret once (POST /api/v1/webhooks/)."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from common.web.admin_base import ANY, DimensionListFilter
from feed import services
from feed.models import DeliveryAttempt, Webhook
from policies.admin import GovernedAdmin, _run
from policies.choices import Role


@admin.register(Webhook)
class WebhookAdmin(GovernedAdmin):
    reader_roles = (Role.STEWARD,)
    list_display = ("url", "dimension", "event_types", "active", "disabled_reason", "created_at")
    list_filter = (("dimension", DimensionListFilter), "active")
    search_fields = ("url", "description")
    list_select_related = ("dimension",)
    exclude = ("secret",)
    actions = ("turn_on", "turn_off")
    reveals = dict.fromkeys(
        ("url", "description", "dimension", "event_types", "active", "disabled_reason",
         "created_at"),
        ANY,
    )  # fmt: skip

    def get_queryset(self, request: HttpRequest) -> QuerySet[Webhook]:
        return super().get_queryset(request).filter(deleted_at__isnull=True)

    def has_change_webhooks_permission(self, request: HttpRequest) -> bool:
        return self.has_module_permission(request)

    def _switch(self, request: HttpRequest, queryset: QuerySet[Webhook], active: bool) -> None:
        def op(webhook: Webhook) -> None:
            services.change_webhook(actor=request.user, webhook_id=webhook.pk, active=active)

        _run(self, request, queryset, op, "Turned on" if active else "Turned off")

    @admin.action(description="Turn selected webhooks on", permissions=["change_webhooks"])
    def turn_on(self, request: HttpRequest, queryset: QuerySet[Webhook]) -> None:
        self._switch(request, queryset, True)

    @admin.action(description="Turn selected webhooks off", permissions=["change_webhooks"])
    def turn_off(self, request: HttpRequest, queryset: QuerySet[Webhook]) -> None:
        self._switch(request, queryset, False)


@admin.register(DeliveryAttempt)
class DeliveryAttemptAdmin(GovernedAdmin):
    reader_roles = (Role.STEWARD,)
    dimension_field = "webhook__dimension_id"
    list_display = ("n", "webhook", "outcome", "status_code", "duration_ms", "attempted_at",
                    "next_due_at")  # fmt: skip
    list_filter = ("outcome",)
    list_select_related = ("webhook__dimension",)
    reveals = dict.fromkeys(("n", "webhook", "outcome", "status_code", "duration_ms",
                             "attempted_at", "next_due_at"), ANY)  # fmt: skip
