"""Apply again, after a restore, the journaled disposals the database lacks
(`manage.py reapply_disposals`): each through the disposal's own entry, so its
purge, tombstone, destroyed keys, history rows, audit event, leaf and event follow
the normal rules, and the journal records it again.

Idempotent: a link the database has disposed is left as it is, a link it does not
hold (registered after the restore point) has nothing to purge; running twice
applies nothing the second time.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model

from common.kernel.refusals import Refusal
from grounding.choices import RecordState
from grounding.models import GroundingLink
from grounding.services import disposal_journal
from grounding.services.disposal import dispose


@dataclass
class Reapplied:
    """What a run found and did, by journaled disposal."""

    journaled: int = 0  # links the journal holds a disposal of (to apply)
    present: int = 0  # the database has disposed the link already
    absent: int = 0  # the database does not hold the link
    reapplied: list[str] = field(default_factory=list)  # grounding ids disposed again
    unconfirmed: list[str] = field(default_factory=list)  # intents not applied
    confirmed: int = 0  # intents the database holds: their committed line appended
    failed: list[str] = field(default_factory=list)  # "<grounding id>: <code>"
    torn: int = 0

    def as_dict(self) -> dict:
        return {
            "journaled": self.journaled,
            "already_applied": self.present,
            "link_absent": self.absent,
            "reapplied": len(self.reapplied),
            "unconfirmed": len(self.unconfirmed),
            "confirmed": self.confirmed,
            "failed": len(self.failed),
            "torn_lines": self.torn,
            "reapplied_ids": self.reapplied,
            "unconfirmed_ids": self.unconfirmed,
            "failures": self.failed,
        }


def reapply(
    paths: Iterable[str],
    *,
    apply_unconfirmed: bool = False,
    actor_username: str | None = None,
    dry_run: bool = False,
) -> Reapplied:
    """Apply again the journals' committed disposals the database lacks (and their
    lone intents with `apply_unconfirmed`), oldest first, each as the user who made it
    (or `actor_username`, an access steward of the operator's, when given)."""
    paths = list(paths)
    journal = disposal_journal.read(paths)
    out = Reapplied(journaled=len(journal.committed), torn=journal.torn)
    held = {
        str(i)
        for i in GroundingLink.objects.filter(record_state=RecordState.DISPOSED)
        .filter(grounding_id__in=[e["grounding_id"] for e in journal.intents.values()])
        .values_list("grounding_id", flat=True)
    }
    todo = list(journal.committed.values())
    for entry in journal.intents.values():
        if entry["grounding_id"] in held:
            out.confirmed += 1
            if not dry_run and paths:  # the process died between commit and journal
                disposal_journal.append(paths[0], {**entry, "state": "committed"})
        elif apply_unconfirmed:
            todo.append(entry)
        else:
            out.unconfirmed.append(entry["grounding_id"])
    # One per link: a disposal applied again is journaled again under its new id.
    firsts: dict[str, dict] = {}
    for entry in sorted(todo, key=lambda e: e.get("disposed_at", "")):
        firsts.setdefault(entry["grounding_id"], entry)
    todo = list(firsts.values())
    out.journaled = len(todo)
    lacking = {e["disposal_id"] for e in disposal_journal.lacking(todo)}
    for entry in todo:
        if entry["disposal_id"] not in lacking:
            exists = GroundingLink.objects.filter(grounding_id=entry["grounding_id"]).exists()
            if exists:
                out.present += 1
            else:
                out.absent += 1
            continue
        if dry_run:
            out.reapplied.append(entry["grounding_id"])
            continue
        try:
            _apply(entry, actor_username)
        except Refusal as refusal:
            out.failed.append(f"{entry['grounding_id']}: {refusal.code}")
            continue
        out.reapplied.append(entry["grounding_id"])
    return out


def _apply(entry: dict, actor_username: str | None) -> None:
    link = GroundingLink.objects.select_related("dimension").get(grounding_id=entry["grounding_id"])
    if link.dimension.name != entry["dimension"]:
        raise Refusal("not_found", "the journal names the link under another Dimension.")
    username = actor_username or entry["actor_ref"].removeprefix("user:")
    actor = get_user_model().objects.filter(username=username).first()
    if actor is None:
        raise Refusal("role_required", f"no user named {username!r} to dispose as.")
    dispose(
        actor=actor,
        grounding_id=link.grounding_id,
        expected_revision=link.revision,
        disposal={"receipt_ref": entry["receipt_ref"], "policy_ref": entry["policy_ref"]},
        reapplying={
            "reapplies_disposal": entry["disposal_id"],
            "disposed_at": entry.get("disposed_at", ""),
            "disposed_by": entry["actor_ref"],
        },
    )
