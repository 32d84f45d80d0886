"""`manage.py recheck_due`: send links whose review_due has passed to pending_review.

One `review_due` change notification per Dimension with overdue links, with a
generated change_ref; idempotent (a deadline sends a link to review once), so it is
safe to run from cron or a systemd timer as often as you like (README "Review
deadlines").
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from grounding import services
from grounding.values.timestamps import parse_rfc3339
from policies.models import Dimension


class Command(BaseCommand):
    help = "Send links whose review_due has passed to pending_review (idempotent)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--dimension", action="append", help="only this Dimension (repeat)")
        parser.add_argument("--now", help="the cutoff instant, RFC 3339 (default: now)")
        parser.add_argument("--actor", help="username recorded as the actor (default: none)")

    def handle(self, *args, **options) -> None:
        now = None
        if options["now"]:
            now = parse_rfc3339(options["now"])
            if now is None:
                raise CommandError("--now must be an RFC 3339 date-time")
        actor = None
        if options["actor"]:
            actor = get_user_model().objects.filter(username=options["actor"]).first()
            if actor is None:
                raise CommandError("no user of that name")
        dimensions = None
        if options["dimension"]:
            dimensions = list(Dimension.objects.filter(name__in=options["dimension"]))
            if len(dimensions) != len(set(options["dimension"])):
                raise CommandError("no Dimension of that name")
        recorded = services.sweep_review_due(actor=actor, now=now, dimensions=dimensions)
        if not recorded:
            self.stdout.write("no link is past its review_due; nothing changed")
        for notification in recorded:
            self.stdout.write(
                f"{notification.dimension.name}: {notification.affected} links sent to review "
                f"({notification.change_ref})"
            )
