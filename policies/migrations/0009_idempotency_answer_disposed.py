"""Stored answers a disposal purged before 410 answer_disposed existed: they kept the
first status with a `{detail, disposed}` body, an answer no operation declares. Each
becomes the 410 answer_disposed problem (as policies.models.answer_disposed writes it,
copied here: a migration does not follow later changes of the code)."""

import json

from django.db import migrations

LEGACY = '"detail": "the first answer to this key named a link since disposed'


def answer_disposed(ref: str) -> dict:
    return {
        "type": "urn:grounding:problem:answer_disposed",
        "title": "Answer disposed",
        "status": 410,
        "detail": "the first answer to this Idempotency-Key named a link since disposed; "
        "its copied text is purged and the write is not run again.",
        "code": "answer_disposed",
        "offenders": [],
        "disposed": ref,
    }


def to_answer_disposed(apps, schema_editor):
    IdempotencyKey = apps.get_model("policies", "IdempotencyKey")
    for row in IdempotencyKey.objects.filter(body__contains=LEGACY):
        ref = json.loads(row.body).get("disposed", "")
        row.status = 410
        row.body = json.dumps(answer_disposed(ref))
        row.headers = {}
        row.save(update_fields=["status", "body", "headers"])


class Migration(migrations.Migration):
    dependencies = [("policies", "0008_idempotency_keys")]

    operations = [migrations.RunPython(to_answer_disposed, migrations.RunPython.noop)]
