"""Demo data exactly as docs/api.md describes: Dimension `demo`, profile
`wm-mem-016@1.0.0`, one user per role with a token. Idempotent for the data; the
tokens are stored hashed, so each run issues fresh ones (and revokes the demo
users' earlier ones) to be able to print them.

One transaction for the whole seed: every write is an operation's body
(policies.actions), so a refusal (demo data the registry no longer accepts) leaves
nothing half-seeded; its refused event is written after the rollback."""

from __future__ import annotations

import json
import os

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from grounding.choices import SupportKind
from grounding.management import demo_data
from policies import governance, tokens
from policies.actions import refusal_audited
from policies.choices import ProfileStatus, Role
from policies.management.commands._operator import refusals_as_errors
from policies.models import Profile
from policies.services import any_dimension_named

DIMENSION = {
    "name": "demo",
    "namespace": "urn:grounding:demo",
    "policy_package_ref": "urn:policy:demo:package@1",
    "disposition_policy_ref": "urn:policy:demo:retention@1",
    "disclosure_policy_ref": "urn:policy:demo:disclosure@1",
    "safety_policy_ref": "urn:policy:demo:untrusted-content@1",
    "owner_ref": "role:grounding-curator",
}
PROFILE = {
    "name": "wm-mem-016",
    "version": "1.0.0",
    "support_vocabulary": list(SupportKind.values),
    "selector_profiles": ["nfc-codepoint-halfopen@1"],
    "field_schemas": {},
    "mapping_profile_ref": "urn:grounding:mapping:web-annotation@1",
    "endpoint_role_map": {"statement": "target", "passage": "body"},
}
USERS = {role.value: f"demo-{role.value.replace('_', '-')}" for role in Role}


class Command(BaseCommand):
    help = "Create the demo Dimension, profile, one user per role and their tokens."

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help="Print the tokens as JSON.")
        parser.add_argument(
            "--password",
            default=os.environ.get("GROUNDING_DEMO_PASSWORD", ""),
            help="Admin password for the demo users (default: none, token access only; "
            "`make run` sets one for local use).",
        )
        parser.add_argument("--no-links", action="store_true", help="Skip the demo links.")

    def handle(self, *args, **options):
        with refusals_as_errors(), refusal_audited("seed_demo", actor=None, dimension="demo"):
            payload, created_links = self._seed(options)
            if not options["no_links"]:
                users = {
                    role: get_user_model().objects.get(username=name)
                    for role, name in USERS.items()
                }
                created_links = demo_data.load(curator=users["curator"], reviewer=users["reviewer"])
        if options["json"]:
            self.stdout.write(json.dumps(payload))
            return
        self.stdout.write(
            f"Dimension {payload['dimension']}, profile {payload['profile']}"
            f" ({created_links} demo links created). Demo tokens:"
        )
        for role, key in payload["tokens"].items():
            self.stdout.write(f"  {role:<17} {USERS[role]:<24} Authorization: Token {key}")
        if options["password"]:
            self.stdout.write(f"Admin login: any user above, password {options['password']!r}")

    def _seed(self, options):
        dimension = any_dimension_named(DIMENSION["name"])
        if dimension is None:
            dimension = governance.do_create_dimension(actor=None, values=DIMENSION)
        profile = Profile.by_ref(f"{PROFILE['name']}@{PROFILE['version']}")
        if profile is None:
            profile = governance.do_create_profile(actor=None, values=PROFILE)
        if profile.status == ProfileStatus.DRAFT:
            governance.do_publish_profile(actor=None, profile=profile)
        keys = {}
        User = get_user_model()
        for role, username in USERS.items():
            user, created = User.objects.get_or_create(username=username)
            if options["password"]:
                user.set_password(options["password"])
                user.is_staff = True
                user.save()
            elif created:
                user.set_unusable_password()
                user.save()
            governance.do_grant_role(actor=None, dimension=dimension, user=user, role=Role(role))
            tokens.do_revoke_tokens(actor=None, user=user)
            keys[role] = tokens.do_issue_token(actor=None, user=user).key
        return {"dimension": dimension.name, "profile": profile.ref, "tokens": keys}, 0
