"""Candidate links from LLM and search-engine citations: the operation.

`service` is the operation (`register_from_citations`), `plan` the per-request plan
(which passages and profile the citations land on), `report` the per-citation
report. The provider parsers it calls are pure and live in `grounding.citations`.
"""
