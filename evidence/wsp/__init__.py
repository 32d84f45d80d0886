"""WSP v3 (Amendment 002) responses: the shipped JSON Schema and the cross-field rules."""

from evidence.wsp.validation import document_error_code, validate_response

__all__ = ["document_error_code", "validate_response"]
