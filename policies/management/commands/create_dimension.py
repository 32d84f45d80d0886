"""`manage.py create_dimension NAME [--namespace …] [--…-ref …]`: a new Dimension.

Creating a Dimension is an operator's act: this command, or the API's
`POST /api/v1/dimensions/` for a superuser (anyone else is refused there with
`operator_required`). The Dimension, the disclosure decisions its own staff need
(`governance.record_internal_decisions`), and the audit event, in one transaction.
Each reference defaults to one derived from the name (`DEFAULTS`). `--steward USER`
also grants that user the steward role, so the Dimension can be governed from the API.
"""

from __future__ import annotations

import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from policies import governance
from policies.actions import refusal_audited
from policies.choices import Role
from policies.management.commands._operator import refusals_as_errors, user_named
from policies.services import any_dimension_named

# Option → Dimension field; all are references to policies held elsewhere.
REFS = {
    "namespace": "Governed IRI or URN prefix, e.g. urn:grounding:acme",
    "policy_package_ref": "the Dimension's policy package, e.g. urn:policy:acme:package@1",
    "disposition_policy_ref": "retention and lawful-hold policy",
    "disclosure_policy_ref": "disclosure policy",
    "safety_policy_ref": "external policy for untrusted source content",
    "owner_ref": "accountable agent-operator role, e.g. role:grounding-curator",
}
# What each reference is when not given, from the Dimension's name.
DEFAULTS = {
    "namespace": "urn:grounding:{name}",
    "policy_package_ref": "urn:policy:{name}:package@1",
    "disposition_policy_ref": "urn:policy:{name}:retention@1",
    "disclosure_policy_ref": "urn:policy:{name}:disclosure@1",
    "safety_policy_ref": "urn:policy:{name}:untrusted-content@1",
    "owner_ref": "role:grounding-curator",
}


class Command(BaseCommand):
    help = "Create a Dimension with its internal disclosure decisions."

    def add_arguments(self, parser) -> None:
        parser.add_argument("name", help="lowercase letters, digits, . _ - (e.g. acme)")
        for field, meaning in REFS.items():
            option = f"--{field.replace('_', '-')}"
            default = DEFAULTS[field].replace("{name}", "NAME")
            parser.add_argument(option, dest=field, help=f"{meaning} (default: {default})")
        parser.add_argument("--steward", metavar="USER", help="grant this user the steward role")
        parser.add_argument(
            "--json", dest="as_json", action="store_true", help="print the result as JSON"
        )

    def handle(self, *args, name: str, steward: str | None, as_json: bool, **options) -> None:
        if any_dimension_named(name) is not None:
            raise CommandError(f"a Dimension {name!r} exists already")
        values = {
            "name": name,
            **{field: options[field] or DEFAULTS[field].format(name=name) for field in REFS},
        }
        steward_user = user_named(steward) if steward else None
        # Both bodies in one transaction (policies.actions): no Dimension without its
        # steward; a refusal is audited after the rollback.
        with refusals_as_errors(), refusal_audited("create_dimension", actor=None):
            try:
                dimension = governance.do_create_dimension(actor=None, values=values)
            except ValidationError as error:
                fields = ", ".join(sorted(getattr(error, "error_dict", {"name": None})))
                raise CommandError(f"not a valid Dimension: {fields}") from None
            if steward_user is not None:
                governance.do_grant_role(
                    actor=None, dimension=dimension, user=steward_user, role=Role.STEWARD
                )
        decisions = list(dimension.disclosure_decisions.values_list("decision_ref", flat=True))
        if as_json:
            self.stdout.write(json.dumps({"dimension": dimension.name, "decisions": decisions}))
            return
        self.stdout.write(f"Dimension {dimension.name} created; internal disclosure decisions:")
        for ref in decisions:
            self.stdout.write(f"  {ref}")
        if steward_user is not None:
            self.stdout.write(f"{steward_user.get_username()} is its steward.")
