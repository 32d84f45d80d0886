"""The log's verifier (`manage.py verify_log`), independent of the write path."""

from transparency.verifier.crypto import (
    RootStack,
    VerifierKey,
    parse_note,
    verify_consistency,
    verify_inclusion,
)
from transparency.verifier.report import Problem, Report
from transparency.verifier.walk import verify

__all__ = [
    "Problem",
    "Report",
    "RootStack",
    "VerifierKey",
    "parse_note",
    "verify",
    "verify_consistency",
    "verify_inclusion",
]
