"""Admin sign-in lockout (django-axes, policies/lockout.py): repeated failures of one
username from one client address lock that pair, and only that pair, for the
cooling period; each lockout is one refused audit event (API.md "Admin")."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import Client, RequestFactory, override_settings
from django.urls import reverse

from policies.choices import AuditOutcome
from policies.lockout import client_address, opaque_ref
from policies.models import AuditEvent
from tests import factories

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery"  # tests.factories.UserFactory's
ADDRESS_A = "203.0.113.7"
ADDRESS_B = "198.51.100.9"
LIMIT = 5  # GROUNDING_LOGIN_FAILURE_LIMIT's default
COOLOFF_SECONDS = 15 * 60  # GROUNDING_LOGIN_COOLOFF_MINUTES's default
LOGIN = reverse("admin:login")
INDEX = reverse("admin:index")


def staff_user(username: str):
    user = factories.UserFactory(username=username, is_staff=True)
    user.save()
    return user


def sign_in(username: str, password: str, address: str, **headers):
    """One admin sign-in from a fresh browser at `address`: (response, client)."""
    client = Client(REMOTE_ADDR=address)
    response = client.post(
        LOGIN, {"username": username, "password": password, "next": INDEX}, **headers
    )
    return response, client


def signed_in(client: Client) -> bool:
    return client.get(INDEX).status_code == 200


def fail(username: str, address: str, times: int, **headers) -> list[int]:
    return [sign_in(username, "wrong", address, **headers)[0].status_code for _ in range(times)]


def lockout_events():
    return list(AuditEvent.objects.filter(action="admin_login_lockout"))


def assert_locked_page(response) -> None:
    assert response.status_code == 429
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response["Retry-After"] == str(COOLOFF_SECONDS)
    assert response.content.decode() == (
        "Too many failed sign-ins for this username from this address. Try again in 15 minutes.\n"
    )


def test_the_failure_that_reaches_the_limit_locks_the_pair_with_a_plain_429():
    staff_user("curator-x")
    # Failures below the limit get the sign-in form again, with its error.
    first = sign_in("curator-x", "wrong", ADDRESS_A)[0]
    assert first.status_code == 200
    assert "Please enter the correct username and password" in first.content.decode()
    assert fail("curator-x", ADDRESS_A, LIMIT - 2) == [200] * (LIMIT - 2)
    assert_locked_page(sign_in("curator-x", "wrong", ADDRESS_A)[0])
    # Locked: the right password is refused the same way and signs nobody in.
    response, client = sign_in("curator-x", PASSWORD, ADDRESS_A)
    assert_locked_page(response)
    assert not signed_in(client)


def test_a_lockout_is_exactly_one_refused_audit_event_with_opaque_refs():
    user = staff_user("curator-x")
    fail("curator-x", ADDRESS_A, LIMIT)
    # Tries refused during the lockout, right password included, are no new lockout.
    fail("curator-x", ADDRESS_A, 3)
    assert sign_in("curator-x", PASSWORD, ADDRESS_A)[0].status_code == 429
    [event] = lockout_events()
    assert (event.outcome, event.code, event.actor_id, event.actor_ref) == (
        AuditOutcome.REFUSED,
        "login_locked_out",
        None,
        "anonymous",
    )
    assert (event.dimension_ref, event.grounding_id) == ("", None)
    assert event.references == {
        "username_ref": opaque_ref("username", "curator-x"),
        "address_ref": opaque_ref("address", ADDRESS_A),
        "failure_limit": LIMIT,
        "cooloff_seconds": COOLOFF_SECONDS,
        "user_id": user.pk,
    }
    stored = json.dumps(event.references)
    assert "curator-x" not in stored
    assert ADDRESS_A not in stored
    assert event.references["username_ref"].startswith("username:")
    assert len(event.references["username_ref"]) == len("username:") + 32


def test_a_lockout_of_an_unknown_username_names_no_user():
    fail("no-such-user", ADDRESS_A, LIMIT)
    [event] = lockout_events()
    assert "user_id" not in event.references
    assert event.references["username_ref"] == opaque_ref("username", "no-such-user")


def test_a_lockout_does_not_lock_that_username_at_another_address():
    staff_user("curator-x")
    assert fail("curator-x", ADDRESS_A, LIMIT)[-1] == 429
    response, client = sign_in("curator-x", PASSWORD, ADDRESS_B)
    assert response.status_code == 302
    assert response["Location"] == INDEX
    assert signed_in(client)


def test_a_lockout_does_not_lock_another_username_at_that_address():
    staff_user("curator-x")
    staff_user("curator-z")
    assert fail("curator-x", ADDRESS_A, LIMIT)[-1] == 429
    response, client = sign_in("curator-z", PASSWORD, ADDRESS_A)
    assert response.status_code == 302
    assert signed_in(client)
    # And curator-z's own count at that address starts from nothing.
    assert fail("curator-z", ADDRESS_A, LIMIT - 1) == [200] * (LIMIT - 1)


def test_the_lockout_ends_with_its_cooling_period_and_a_new_one_is_a_new_event():
    staff_user("curator-x")
    fail("curator-x", ADDRESS_A, LIMIT)
    with override_settings(AXES_COOLOFF_TIME=timedelta(minutes=1)):
        assert sign_in("curator-x", PASSWORD, ADDRESS_A)[0].status_code == 429
    # A cooling period shorter than the time since the lockout has ended it.
    with override_settings(AXES_COOLOFF_TIME=timedelta(milliseconds=200)):
        time.sleep(0.3)
        response, client = sign_in("curator-x", PASSWORD, ADDRESS_A)
        assert response.status_code == 302
        assert signed_in(client)
    assert len(lockout_events()) == 1
    assert fail("curator-x", ADDRESS_A, LIMIT)[-1] == 429
    assert len(lockout_events()) == 2


def test_axes_reset_ip_username_lifts_one_pair_s_lockout():
    staff_user("curator-x")
    staff_user("curator-z")
    fail("curator-x", ADDRESS_A, LIMIT)
    fail("curator-z", ADDRESS_A, LIMIT)
    out = StringIO()
    call_command("axes_reset_ip_username", ADDRESS_A, "curator-x", stdout=out)
    assert out.getvalue() == "1 attempts removed.\n"
    assert sign_in("curator-x", PASSWORD, ADDRESS_A)[0].status_code == 302
    assert sign_in("curator-z", PASSWORD, ADDRESS_A)[0].status_code == 429


def test_a_successful_sign_in_resets_the_failure_count():
    staff_user("curator-x")
    assert fail("curator-x", ADDRESS_A, LIMIT - 1) == [200] * (LIMIT - 1)
    assert sign_in("curator-x", PASSWORD, ADDRESS_A)[0].status_code == 302
    assert fail("curator-x", ADDRESS_A, LIMIT - 1) == [200] * (LIMIT - 1)
    assert lockout_events() == []
    assert fail("curator-x", ADDRESS_A, 1) == [429]


def test_a_direct_client_cannot_pick_its_address_with_x_forwarded_for():
    # GROUNDING_TRUSTED_PROXIES is 0 here: the header is ignored, REMOTE_ADDR counts.
    staff_user("curator-x")
    statuses = [
        sign_in("curator-x", "wrong", ADDRESS_A, HTTP_X_FORWARDED_FOR=f"192.0.2.{n}")[0].status_code
        for n in range(LIMIT)
    ]
    assert statuses == [200] * (LIMIT - 1) + [429]
    assert lockout_events()[0].references["address_ref"] == opaque_ref("address", ADDRESS_A)


def test_behind_a_trusted_proxy_the_address_is_the_one_the_proxy_added():
    staff_user("curator-x")
    proxied = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    proxy = "10.0.0.2"
    with override_settings(REST_FRAMEWORK=proxied):
        # A client's own X-Forwarded-For entry comes first; the proxy appends the real one.
        statuses = fail("curator-x", proxy, LIMIT, HTTP_X_FORWARDED_FOR=f"192.0.2.1, {ADDRESS_A}")
        assert statuses[-1] == 429
        assert lockout_events()[0].references["address_ref"] == opaque_ref("address", ADDRESS_A)
        # Another client behind the same proxy is not locked out.
        response = sign_in("curator-x", PASSWORD, proxy, HTTP_X_FORWARDED_FOR=ADDRESS_B)[0]
        assert response.status_code == 302


def test_the_client_address_falls_back_to_remote_addr_when_the_header_is_no_address():
    proxied = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}

    def request(forwarded_for: str):
        return RequestFactory().post(
            LOGIN, REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR=forwarded_for
        )

    with override_settings(REST_FRAMEWORK=proxied):
        assert client_address(request("junk")) == "10.0.0.2"
        assert client_address(request("192.0.2.1, 2001:db8::1")) == "2001:db8::1"
    assert client_address(RequestFactory().get("/", REMOTE_ADDR="not-an-address")) is None


def test_a_lockout_leaves_the_users_api_token_working():
    from rest_framework.test import APIClient

    user = staff_user("curator-x")
    key = factories.token_for(user)
    assert fail("curator-x", "127.0.0.1", LIMIT)[-1] == 429
    api = APIClient(REMOTE_ADDR="127.0.0.1")
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.get(reverse("api-root")).status_code == 200


def test_axes_tables_are_migrated_and_its_models_need_no_new_migration():
    project = Path(settings.BASE_DIR)
    done = subprocess.run(
        [sys.executable, "manage.py", "makemigrations", "axes", "--check", "--dry-run"],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    from axes.models import AccessAttempt

    assert AccessAttempt.objects.count() == 0  # the table exists in the test database


@pytest.mark.parametrize(
    ("environment", "expected"),
    [
        ({}, "5 0:15:00"),
        (
            {"GROUNDING_LOGIN_FAILURE_LIMIT": "3", "GROUNDING_LOGIN_COOLOFF_MINUTES": "60"},
            "3 1:00:00",
        ),
    ],
)
def test_the_limit_and_the_cooling_period_come_from_the_environment(environment, expected):
    assert _settings_line(environment) == (0, expected)


@pytest.mark.parametrize(
    "environment",
    [{"GROUNDING_LOGIN_FAILURE_LIMIT": "0"}, {"GROUNDING_LOGIN_COOLOFF_MINUTES": "0"}],
)
def test_a_limit_or_cooling_period_below_one_is_refused_at_start(environment):
    code, _ = _settings_line(environment)
    assert code != 0


def _settings_line(environment: dict[str, str]) -> tuple[int, str]:
    import os

    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GROUNDING_LOGIN_", "DJANGO_SETTINGS_MODULE"))
    }
    env.update(environment, DJANGO_SETTINGS_MODULE="grounding.project.settings")
    code = (
        "import django; from django.conf import settings; django.setup(); "
        "print(settings.AXES_FAILURE_LIMIT, settings.AXES_COOLOFF_TIME)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
    )
    return done.returncode, done.stdout.strip()
