"""The feed's routes, included under /api/v1/."""

from django.urls import path

from feed.api import views

app_name = "feed_api"

urlpatterns = [
    path("webhooks/", views.WebhookListView.as_view(), name="webhook-list"),
    path("webhooks/<uuid:webhook_id>/", views.WebhookDetailView.as_view(), name="webhook-detail"),
    path(
        "webhooks/<uuid:webhook_id>/deliveries/",
        views.DeliveryListView.as_view(),
        name="webhook-deliveries",
    ),
    path(
        "webhooks/<uuid:webhook_id>/deliveries/<str:n>/retry/",
        views.DeliveryRetryView.as_view(),
        name="webhook-delivery-retry",
    ),
    path("events/", views.EventListView.as_view(), name="event-list"),
]
