from django.urls import path

from feed.api.metrics import metrics

urlpatterns = [path("", metrics, name="metrics")]
