"""The write of WSP v3 imports: validated documents become rows, many per transaction.

`do_write_documents` takes documents already validated, checked against the
Dimension's stored executions and free of repeated execution ids, and writes
them into that Dimension, inside its caller's transaction, with one statement per
table (envelopes, content, sources, passages with their history rows, audit
events); `write_documents` is its public entry, one durable transaction
(policies.actions). What it stores, and the report of each
document, is what importing the documents one after another would give: content
written by an earlier document counts as seen by a later one, and `duplicate_of`
names the root of the earliest passage holding the same content in another
execution, stored rows first, then earlier documents of the batch.

Everything a report says is about the Dimension imported into: content counts as
seen, and a passage as a duplicate, only when that Dimension already holds it.
Sources (and so their access labels and history) are the Dimension's own rows. The
text itself is stored once per digest for all Dimensions (an internal detail no
response reveals).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django.db import IntegrityError, connections, router, transaction

from common.kernel import reads
from common.kernel.bulk import insert_rows, insert_with_history
from common.kernel.canonical import text_sha256
from common.kernel.rows import new_instance
from evidence import import_hooks
from evidence.choices import AccessLabel
from evidence.models import Content, Passage, RetrievalObservation, Source
from policies import audit
from policies.actions import composable, public_entry
from policies.models import Dimension

ACTION = "wsp_import"
# §2 presence rules: the field carrying an observation's literal text, by kind.
LITERAL_FIELD = {"search_result": "snippet", "extracted_document": "text"}


@dataclass(frozen=True)
class ImportResult:
    report: dict[str, Any]
    created: bool


@composable
def do_write_documents(
    *, actor, dimension: Dimension, documents: list[tuple[dict, str]]
) -> list[ImportResult]:
    """Write new, valid (document, digest) pairs of distinct executions into the
    Dimension; one result each.

    A unique violation (a concurrent import of one of the executions, or of one of
    their new sources) raises IntegrityError and leaves nothing of them.
    """
    user = actor if getattr(actor, "pk", None) else None
    literals = [
        [obs[LITERAL_FIELD[obs["kind"]]] for obs in document["observations"]]
        for document, _ in documents
    ]
    hashes = [[text_sha256(text) for text in texts] for texts in literals]
    every_hash = {sha for shas in hashes for sha in shas}

    # One query each: stored content, content this Dimension has seen, stored sources,
    # earlier passages of the same content in this Dimension.
    stored_hashes = _stored_hashes(every_hash)
    sources = _stored_sources(documents, dimension)
    earlier = _EarliestPassages.of(every_hash, dimension)
    seen_hashes = earlier.hashes()

    envelopes: list[RetrievalObservation] = []
    new_content: dict[str, Content] = {}
    new_sources: list[Source] = []
    passages: list[Passage] = []
    by_document: list[list[Passage]] = []
    results: list[ImportResult] = []
    for (document, digest), texts, shas in zip(documents, literals, hashes, strict=True):
        envelope = _envelope(document, digest, user, dimension)
        execution_id = envelope.execution_id
        mine: list[Passage] = []
        unseen = 0
        for obs, text, sha in zip(document["observations"], texts, shas, strict=True):
            if sha not in seen_hashes:
                unseen += 1
                seen_hashes.add(sha)
            if sha not in stored_hashes and sha not in new_content:
                # Literal text: never normalized (NFC is for coordinates only).
                new_content[sha] = new_instance(
                    Content, {"sha256": sha, "text": text, "length": len(text)}
                )
            url = obs["url"]["canonical"]
            if url not in sources:
                sources[url] = _new_source(url, dimension)
                new_sources.append(sources[url])
            mine.append(_passage(obs, envelope, sources[url], sha, earlier.root(sha, execution_id)))
        # Later documents of the batch see these passages as earlier ones.
        earlier.add(mine)
        passages.extend(mine)
        by_document.append(mine)
        envelope.report = _report(envelope, mine, unseen)
        envelopes.append(envelope)
        results.append(ImportResult(report=envelope.report, created=True))

    # What other apps do with the import (the links of a source whose extracted text
    # changed go back to review), in this transaction; their entries join the reports.
    indexed = [(i, p) for i, mine in enumerate(by_document) for p in mine]
    for index, entries in import_hooks.run(actor, dimension, indexed).items():
        envelopes[index].report["changes"] = entries

    # Rows with a unique key go in key order, so two imports sharing executions,
    # content or sources wait for one another instead of deadlocking. Envelopes
    # first: a concurrent import of one of the executions fails right here.
    insert_rows(RetrievalObservation, sorted(envelopes, key=lambda e: e.execution_id))
    _insert_content(sorted(new_content.values(), key=lambda c: c.sha256))
    new_sources.sort(key=lambda s: s.canonical_url)
    insert_with_history(Source, new_sources, user=actor, change_reason=ACTION)
    # Passages in document order: their creation order decides later duplicate_of.
    insert_with_history(Passage, passages, user=actor, change_reason=ACTION)
    audit.record_many(
        actor=actor,
        action=ACTION,
        entries=[
            {
                "dimension_ref": dimension.name,
                "references": {
                    "execution_id": r.report["execution_id"],
                    "import_id": r.report["import_id"],
                },
            }
            for r in results
        ],
    )
    return results


# The documents were validated (and their refusals audited) by the import: nothing to
# screen. A refusal here is a hook's (a source change conflicting with a recorded one).
write_documents = public_entry(ACTION, do_write_documents, screen=None)


def _insert_content(contents: list[Content]) -> None:
    """Texts not stored when looked up, in one fast insert. Content is keyed by its
    digest: if a concurrent import stored one of them meanwhile (a unique violation),
    it is the same text, and the insert that skips stored rows takes over."""
    if not contents:
        return
    try:
        with transaction.atomic():
            insert_rows(Content, contents)
    except IntegrityError:
        Content.objects.bulk_create(contents, ignore_conflicts=True)


def _envelope(document: dict, digest: str, user, dimension: Dimension) -> RetrievalObservation:
    return new_instance(
        RetrievalObservation,
        dict(
            dimension=dimension,
            execution_id=document["execution_id"],
            request_id=document.get("request_id"),
            capability=document["capability"],
            status=document["status"],
            error=document.get("error"),
            engine=document.get("engine"),
            provider_attempts=document["provider_attempts"],
            policy_actions=document["policy_actions"],
            results=document["results"],
            source_diversity=document["source_diversity"],
            cache_status=document["cache_status"],
            routing_receipt=document["routing_receipt"],
            document_sha256=digest,
            imported_by=user,
        ),
    )


def _report(envelope: RetrievalObservation, passages: list[Passage], unseen: int) -> dict:
    received = len(passages)
    return {
        "import_id": str(envelope.observation_id),
        "execution_id": envelope.execution_id,
        "observations": {"received": received, "created": unseen, "duplicates": received - unseen},
        "novelty_score": math.floor(100 * unseen / received) if received else 0,
        "passages": [
            {
                "observation_id": p.observation_id,
                "passage_id": str(p.passage_id),
                "duplicate_of": str(p.duplicate_of_id) if p.duplicate_of_id else None,
            }
            for p in passages
        ],
        "rejected": 0,
    }


# A batch looks up thousands of digests and URLs. On PostgreSQL each lookup sends
# them as one array (`= ANY`), bound by the server: as an IN list they were as many
# quoted literals, parsed again by the server, a sixth of an import's time.
def _by_array(model) -> str | None:
    """The database `model` is read from, where lookups send arrays; else None."""
    using = router.db_for_read(model)
    return using if connections[using].vendor == "postgresql" else None


def _stored_hashes(hashes: set[str]) -> set[str]:
    """The digests of `hashes` whose text is stored, in one query."""
    if using := _by_array(Content):
        found = reads.read(
            f"SELECT sha256 FROM {Content._meta.db_table} WHERE sha256 = ANY(%s)",
            [list(hashes)], (), using=using, server_bound=True,
        )  # fmt: skip
        return {sha for (sha,) in found}
    return set(Content.objects.filter(sha256__in=hashes).values_list("sha256", flat=True))


def _stored_sources(documents: list[tuple[dict, str]], dimension: Dimension) -> dict[str, Source]:
    """The Dimension's stored sources of every canonical URL of the documents, in one
    query (another Dimension's source of the same URL is its own, label included)."""
    urls = {
        obs["url"]["canonical"] for document, _ in documents for obs in document["observations"]
    }
    if using := _by_array(Source):
        found = reads.read(
            f"SELECT {reads.columns(Source, 's')} FROM {Source._meta.db_table} s "
            "WHERE s.dimension_id = %s AND s.canonical_url = ANY(%s)",
            [dimension.pk, list(urls)], (Source,), using=using, server_bound=True,
        )  # fmt: skip
        return {source.canonical_url: source for (source,) in found}
    stored = Source.objects.filter(dimension=dimension, canonical_url__in=urls)
    return {s.canonical_url: s for s in stored}


def _new_source(url: str, dimension: Dimension) -> Source:
    return new_instance(
        Source,
        {
            "dimension_id": dimension.pk,
            "canonical_url": url,
            "host": (urlsplit(url).hostname or "")[:255],
        },
    )


class _EarliestPassages:
    """Per digest, the earliest passage holding it, and the earliest of another execution.

    Seeded from stored passages in one query, then extended with each written
    document's passages, so a later document of a batch sees the earlier ones.
    """

    def __init__(self) -> None:
        # sha -> (execution_id, root) of the earliest passage, and of the earliest
        # passage whose execution differs from that one's.
        self._first: dict[str, tuple[str, Any]] = {}
        self._other: dict[str, tuple[str, Any]] = {}

    @classmethod
    def of(cls, hashes: set[str], dimension: Dimension) -> _EarliestPassages:
        earliest = cls()
        if using := _by_array(Passage):
            rows = reads.read(
                "SELECT content_sha256, execution_id, passage_id, duplicate_of_id "
                f"FROM {Passage._meta.db_table} WHERE dimension_id = %s "
                "AND content_sha256 = ANY(%s) ORDER BY created_at, passage_id",
                [dimension.pk, list(hashes)], (), using=using, server_bound=True,
            )  # fmt: skip
        else:
            rows = (
                Passage.objects.filter(dimension=dimension, content_sha256__in=hashes)
                .order_by("created_at", "passage_id")
                .values_list("content_sha256", "execution_id", "passage_id", "duplicate_of_id")
            )
        for sha, execution_id, passage_id, duplicate_of_id in rows:
            # Duplicates always point at a root, so one hop reaches it.
            earliest._note(sha, execution_id, duplicate_of_id or passage_id)
        return earliest

    def hashes(self) -> set[str]:
        """Digests some passage of the Dimension already holds."""
        return set(self._first)

    def add(self, passages: list[Passage]) -> None:
        for p in passages:
            self._note(p.content_sha256, p.execution_id, p.duplicate_of_id or p.passage_id)

    def root(self, sha: str, execution_id: str):
        """The root to point at from a passage of `execution_id`, or None."""
        first = self._first.get(sha)
        if first is None:
            return None
        if first[0] != execution_id:
            return first[1]
        other = self._other.get(sha)
        return other[1] if other else None

    def _note(self, sha: str, execution_id: str, root) -> None:
        first = self._first.get(sha)
        if first is None:
            self._first[sha] = (execution_id, root)
        elif first[0] != execution_id and sha not in self._other:
            self._other[sha] = (execution_id, root)


def _passage(obs: dict, envelope: RetrievalObservation, source: Source, sha: str, root) -> Passage:
    score = obs.get("provider_score") or {}
    published = obs.get("published_at") or {}
    return new_instance(
        Passage,
        dict(
            dimension_id=envelope.dimension_id,
            passage_ref=f"urn:wsp:{envelope.execution_id}:{obs['observation_id']}",
            source=source,
            content_id=sha,
            content_sha256=sha,
            kind=obs["kind"],
            source_field=LITERAL_FIELD[obs["kind"]],
            locator=obs["url"]["observed"],
            observed_url=obs["url"]["observed"],
            canonical_url=obs["url"]["canonical"],
            title=obs.get("title"),
            # A restricted source (as this Dimension labels it: the source row is
            # the Dimension's own) restricts every passage taken from it.
            access_label=source.access_label or AccessLabel.PUBLIC,
            retrieval_observation=envelope,
            execution_id=envelope.execution_id,
            observation_id=obs["observation_id"],
            provider=obs["provider"],
            endpoint_id=obs["endpoint_id"],
            provider_attempt_id=obs["provider_attempt_id"],
            provider_result_index=obs["provider_result_index"],
            provider_rank=obs.get("provider_rank"),
            provider_score_value=score.get("value"),
            provider_score_semantics=score.get("semantics", ""),
            published_at_raw=published.get("raw"),
            published_at_normalized=published.get("normalized"),
            provider_fields=obs.get("provider_fields") or {},
            duplicate_of_id=root,
        ),
    )
