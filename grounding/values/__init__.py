"""The values of the profile's structured fields: JSON Schema validation and the cross-
field rules over them, RFC 3339 instants.
"""
