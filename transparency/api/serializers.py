"""The log's answers, described for OpenAPI (API.md "Transparency log")."""

from __future__ import annotations

from rest_framework import serializers

_B64 = "base64 (RFC 4648) of 32 bytes."


class EntrySerializer(serializers.Serializer):
    index = serializers.IntegerField(min_value=0)
    leaf = serializers.CharField(help_text="base64 of the leaf's exact bytes (canonical JSON).")
    leaf_hash = serializers.CharField(help_text="SHA-256(0x00 ‖ leaf), " + _B64)


class EntriesSerializer(serializers.Serializer):
    entries = EntrySerializer(many=True)


class InclusionProofSerializer(serializers.Serializer):
    index = serializers.IntegerField(min_value=0)
    tree_size = serializers.IntegerField(min_value=1)
    hashes = serializers.ListField(child=serializers.CharField(), help_text="RFC 9162 path.")
    checkpoint = serializers.CharField(
        allow_null=True,
        help_text="The signed checkpoint of tree_size (null when none was signed at that size).",
    )


class ConsistencyProofSerializer(serializers.Serializer):
    first = serializers.IntegerField(min_value=0)
    second = serializers.IntegerField(min_value=0)
    hashes = serializers.ListField(child=serializers.CharField(), help_text="RFC 9162 proof.")
    checkpoint = serializers.CharField(
        allow_null=True,
        help_text="The signed checkpoint of `second` (null when none was signed at that size).",
    )


class RevisionProofSerializer(serializers.Serializer):
    index = serializers.IntegerField(min_value=0)
    leaf = serializers.CharField(help_text="base64 of the leaf's exact bytes (canonical JSON).")
    leaf_hash = serializers.CharField(help_text=_B64)
    tree_size = serializers.IntegerField(min_value=1)
    hashes = serializers.ListField(child=serializers.CharField())
    checkpoint = serializers.CharField(help_text="The signed checkpoint it verifies against.")
