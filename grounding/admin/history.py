"""The history pages of a grounding link in the admin: its readable revisions, a
diff between any two, and a revision's log proof to download.

A mixin of `grounding.admin.links.GroundingLinkAdmin`, apart from the change page
because it shares nothing with it but the host's one way to read a link
(`_readable_link`, through the per-user reader) and the disposed link's tombstone
(`_tombstone`). There is no revert form: a revision is made only by `revise`.
"""

from __future__ import annotations

from django.contrib.admin.utils import unquote
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.template.response import TemplateResponse
from django.utils.text import capfirst

from grounding.admin.forms import revision_changes, revision_table
from grounding.choices import RecordState
from grounding.models import GroundingLink
from grounding.reader import ALL_WITHHELD
from transparency import proofs, status


class LinkHistory:
    """history_view, compare_view and proof_view of the link admin (module doc)."""

    def history_view(self, request: HttpRequest, object_id: str, extra_context=None):
        link, document = self._readable_link(request, unquote(object_id))
        # A disposed link's history is its tombstone: no revision is listed.
        disposed = link.record_state == RecordState.DISPOSED
        withheld = ALL_WITHHELD if disposed else document["withheld"]
        context = {
            **self.admin_site.each_context(request),
            "title": f"History: {link}",
            "subtitle": None,
            "opts": self.opts,
            "module_name": capfirst(self.opts.verbose_name_plural),
            "object": link,
            "revisions": [] if disposed else _with_log_status(link, revision_table(link, withheld)),
            "withheld": withheld,
            **(extra_context or {}),
        }
        request.current_app = self.admin_site.name
        return TemplateResponse(request, self.object_history_template, context)

    def proof_view(self, request: HttpRequest, object_id: str, revision: int) -> HttpResponse:
        """Revision n's proof, as GET …/revisions/{n}/proof/ answers it, to download."""
        link, _ = self._readable_link(request, unquote(object_id))
        log = proofs.log_of(link.dimension_id)
        leaf = proofs.revision_leaf(log, link.grounding_id, revision)
        if leaf is None:
            raise Http404("no sequenced leaf of the log records this revision (yet)")
        response = JsonResponse(proofs.revision_proof(log, leaf))
        response["Content-Disposition"] = (
            f'attachment; filename="{link.grounding_id}-r{revision}-proof.json"'
        )
        return response

    def compare_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        link, document = self._readable_link(request, object_id)
        if link.record_state == RecordState.DISPOSED:
            return self._tombstone(request, link, document)
        try:
            old = int(request.GET.get("from", max(link.revision - 1, 1)))
            new = int(request.GET.get("to", link.revision))
        except ValueError as exc:
            raise Http404("revisions are numbers") from exc
        if not (1 <= old <= link.revision and 1 <= new <= link.revision):
            raise Http404("no such revision")
        table = [
            r for r in revision_table(link, document["withheld"]) if old < r["revision"] <= new
        ]
        context = {
            **self.admin_site.each_context(request),
            "title": f"Revision {old} → {new} of {link.grounding_id}",
            "opts": self.model._meta,
            "original": link,
            "old": old,
            "new": new,
            "revisions": list(range(1, link.revision + 1)),
            "changes": revision_changes(link, old, new, document["withheld"]),
            "between": table,
            "withheld": document["withheld"],
        }
        return TemplateResponse(
            request, "admin/grounding/groundinglink/history_compare.html", context
        )


def _with_log_status(link: GroundingLink, table: list[dict]) -> list[dict]:
    """Each revision row with its standing in the Dimension's transparency log."""
    log = proofs.log_of(link.dimension_id)
    statuses = status.revision_statuses(log, link.grounding_id, [r["revision"] for r in table])
    return [{**row, "log": statuses[row["revision"]]} for row in table]
