"""COPY of the rows a WSP import writes: the database's limit for `copy_over_wsp`.

The rows are cloned from one document the real import wrote (evidence.wsp_import):
per document its envelope (a RetrievalObservation) and one audit event; per
observation its content (new text), its source and the source's history row (a
new canonical URL), its passage and the passage's history row. Every clone gets
fresh keys (UUIDs, content digests, canonical URLs, the execution id), so the
unique indexes of the scratch copies take them as they take new imports.
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

import psycopg

from bench.seed import _adapt

# In the order the import writes them.
TABLES = (
    "evidence_retrievalobservation",
    "evidence_content",
    "evidence_source",
    "evidence_historicalsource",
    "evidence_passage",
    "evidence_historicalpassage",
    "policies_auditevent",
)
_OF_PASSAGES = "(SELECT {key} FROM evidence_passage WHERE execution_id = %s)"
_WHERE = {
    "evidence_retrievalobservation": "execution_id = %s",
    "evidence_content": "sha256 IN " + _OF_PASSAGES.format(key="content_id"),
    "evidence_source": "source_id IN " + _OF_PASSAGES.format(key="source_id"),
    "evidence_historicalsource": "source_id IN " + _OF_PASSAGES.format(key="source_id"),
    "evidence_passage": "execution_id = %s",
    "evidence_historicalpassage": "execution_id = %s",
    "policies_auditevent": "action = 'wsp_import' AND \"references\"->>'execution_id' = %s",
}

Template = dict[str, tuple[list[str], list[tuple]]]


def template_rows(conn: psycopg.Connection, execution_id: str) -> Template:
    """{table: (columns, rows)} written when the document `execution_id` was imported."""
    out: Template = {}
    with conn.cursor() as cur:
        for table in TABLES:
            cur.execute(f"SELECT * FROM {table} WHERE {_WHERE[table]}", [execution_id])
            out[table] = ([d.name for d in cur.description], cur.fetchall())
    return out


def observations(template: Template) -> int:
    return len(template["evidence_passage"][1])


def clone_documents(template: Template, count: int, *, history_start: int = 60_000_000
                    ) -> list[list[tuple[str, list[str], list[tuple]]]]:  # fmt: skip
    """`count` documents' rows, per document table by table, with fresh keys."""
    passages = template["evidence_passage"]
    execution_id = passages[1][0][passages[0].index("execution_id")]
    shas = {row[0] for row in template["evidence_content"][1]}
    urls = {
        row[template["evidence_source"][0].index("canonical_url")]
        for row in template["evidence_source"][1]
    }
    history_id = history_start
    documents = []
    for copy in range(count):
        new_execution = f"{execution_id}~copy{copy}"
        strings = {execution_id: new_execution}
        strings.update({sha: hashlib.sha256(f"{sha}:{copy}".encode()).hexdigest() for sha in shas})
        strings.update({url: f"{url}#copy{copy}" for url in urls})
        fresh = _fresh_keys(execution_id, new_execution, strings)
        document = []
        for table in TABLES:
            columns, rows = template[table]
            cloned = []
            for row in rows:
                values = [fresh(v) for v in row]
                if "history_id" in columns:
                    values[columns.index("history_id")] = history_id
                    history_id += 1
                cloned.append(tuple(_adapt(v) for v in values))
            document.append((table, columns, cloned))
        documents.append(document)
    return documents


def _fresh_keys(execution_id: str, new_execution: str, strings: dict[str, str]):
    """One clone's value mapping: a fresh UUID for each template UUID (the same one in
    every table), the clone's digests and URLs, and its execution id inside refs."""
    uuids: dict[uuid.UUID, uuid.UUID] = {}

    def fresh(value: Any) -> Any:
        if isinstance(value, uuid.UUID):
            return uuids.setdefault(value, uuid.uuid4())
        if isinstance(value, str):
            if value in strings:
                return strings[value]
            if execution_id in value:
                return value.replace(execution_id, new_execution)
        return value

    return fresh


def batches(documents: list, size: int) -> list[list[tuple[str, list[str], list[tuple]]]]:
    """Documents grouped `size` at a time, each group one COPY per table (one transaction)."""
    out = []
    for start in range(0, len(documents), size):
        group = documents[start : start + size]
        out.append(
            [
                (table, columns, [row for document in group for row in document[i][2]])
                for i, (table, columns, _) in enumerate(group[0])
            ]
        )
    return out
