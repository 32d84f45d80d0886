"""Internal decision refs used to embed the Dimension's name
(`urn:grounding:<name>:internal:<role>`): predictable, and, while refs were unique
across Dimensions, a 409 confirmed a name. They become `urn:access:internal:<role>`,
the same in every Dimension (refs are unique per Dimension since 0005).

Each renamed decision gets its history row (simple-history's signals do not see a
migration's update). A decision already recorded under the new ref in the same
Dimension keeps the old ref on the internal one (nothing is overwritten)."""

from django.db import migrations
from django.utils import timezone

OLD = "urn:grounding:{name}:internal:{role}"
NEW = "urn:access:internal:{role}"
ROLES = ("access_steward", "curator", "reviewer", "steward")
REASON = "internal decision ref names no Dimension"


def _rename(apps, *, source: str, target: str) -> None:
    Decision = apps.get_model("policies", "DisclosureDecision")
    Historical = apps.get_model("policies", "HistoricalDisclosureDecision")
    fields = [f.attname for f in Decision._meta.concrete_fields]
    now = timezone.now()
    for decision in Decision.objects.filter(internal=True).select_related("dimension"):
        for role in ROLES:
            names = {"name": decision.dimension.name, "role": role}
            if decision.decision_ref != source.format(**names):
                continue
            ref = target.format(**names)
            taken = Decision.objects.filter(dimension_id=decision.dimension_id, decision_ref=ref)
            if taken.exists():
                break
            Decision.objects.filter(pk=decision.pk).update(decision_ref=ref)
            decision.decision_ref = ref
            Historical.objects.create(
                **{name: getattr(decision, name) for name in fields},
                history_date=now,
                history_type="~",
                history_change_reason=REASON,
                history_user=None,
            )
            break


def forwards(apps, schema_editor) -> None:
    _rename(apps, source=OLD, target=NEW)


def backwards(apps, schema_editor) -> None:
    _rename(apps, source=NEW, target=OLD)


class Migration(migrations.Migration):
    dependencies = [("policies", "0005_profiles_and_decisions_per_dimension")]

    operations = [migrations.RunPython(forwards, backwards)]
