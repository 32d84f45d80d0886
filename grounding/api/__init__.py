"""The REST API (`/api/v1/`): thin views over grounding.services, rendered through
the one disclosure projection. Contract: docs/api.md."""
