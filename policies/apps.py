from django.apps import AppConfig


class PoliciesConfig(AppConfig):
    name = "policies"
    verbose_name = "Policies: dimensions, profiles, roles, disclosure and audit"

    def ready(self) -> None:
        # Each sign-in lockout is an audit event (policies/lockout.py).
        from axes.signals import user_locked_out

        from policies.lockout import record_lockout

        user_locked_out.connect(record_lockout, dispatch_uid="policies.lockout.record_lockout")
