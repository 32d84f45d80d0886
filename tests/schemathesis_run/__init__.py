"""schemathesis `--checks all` against a real server, once per role (make schemathesis)."""
