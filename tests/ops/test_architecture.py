"""The dependency rule of docs/architecture.md, as import-linter contracts
(pyproject.toml `[tool.importlinter]`): the apps depend one way (grounding on
evidence on policies), the shared kernel imports nothing from the apps, and no core
module imports a face."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_import_contracts_are_kept() -> None:
    lint_imports = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    declared = len(config["tool"]["importlinter"]["contracts"])
    assert declared >= 4
    assert f"Contracts: {declared} kept, 0 broken." in result.stdout


def test_a_broken_contract_is_reported(tmp_path: Path) -> None:
    """The check can fail: a config forbidding what the code does is reported broken."""
    config = tmp_path / "contracts.toml"
    config.write_text(
        '[tool.importlinter]\nroot_packages = ["grounding", "policies"]\n'
        '[[tool.importlinter.contracts]]\nname = "grounding may not use policies"\n'
        'type = "forbidden"\nsource_modules = ["grounding.services"]\n'
        'forbidden_modules = ["policies"]\n'
    )
    lint_imports = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(lint_imports), "--no-cache", "--config", str(config)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert "grounding may not use policies BROKEN" in result.stdout
    assert "grounding.services" in result.stdout


# The library internals the fast paths rely on (common/kernel/compat.py): attribute,
# method, class and attribute-name strings no module of the project names but compat.
PRIVATE_NAMES = frozenset({
    "_state", "fields_cache", "private_fields", "get_db_converters", "ModelState",
    "delete_cached_value", "set_cached_value", "_prepare_related_fields_for_save",
    "RawCursor", "wrap_database_errors", "queries_log", "queries_logged",
    "_history_user", "_history_date", "_change_reason",
    "_UnvalidatedField", "_get_position_from_instance", "_reverse_ordering",
    "_map_serializer", "_field_list_filters",
})  # fmt: skip
APP_PACKAGES = ("common", "policies", "grounding", "evidence", "transparency", "feed")
COMPAT = Path("common/kernel/compat.py")


def private_uses(source: str) -> list[tuple[int, str]]:
    """(line, name) of each library internal `source` touches: an attribute, an
    imported name, a method overriding one, or a string naming one (getattr), and
    `connection.connection` (the driver's connection). Calls of compat's own functions
    (`compat.private_fields(...)`) are not uses."""
    found = []
    for node in ast.walk(ast.parse(source)):
        name = None
        if isinstance(node, ast.Attribute):
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id == "compat":
                continue
            if node.attr == "connection" and (
                (isinstance(owner, ast.Name) and owner.id == "connection")
                or (isinstance(owner, ast.Attribute) and owner.attr == "connection")
            ):
                name = "connection.connection"
            elif node.attr in PRIVATE_NAMES:
                name = node.attr
        elif isinstance(node, ast.alias) and node.name.rpartition(".")[2] in PRIVATE_NAMES:
            name = node.name
        elif isinstance(node, ast.Constant) and node.value in PRIVATE_NAMES:
            name = node.value
        elif isinstance(node, ast.ClassDef):  # a method overriding a library's private one
            found += [
                (item.lineno, item.name)
                for item in node.body
                if isinstance(item, ast.FunctionDef) and item.name in PRIVATE_NAMES
            ]
        if name is not None:
            found.append((getattr(node, "lineno", 0), name))
    return sorted(found)


def test_only_compat_touches_library_internals() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for package in APP_PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts and path.relative_to(ROOT) != COMPAT
        for line, name in private_uses(path.read_text())
    ]
    assert offenders == []


def test_the_internals_check_finds_each_kind_of_use() -> None:
    source = (
        "from rest_framework.fields import _UnvalidatedField\n"
        "obj._state.adding = False\n"
        "model._meta.private_fields\n"
        "raw = connection.connection.cursor()\n"
        "self.connection.connection\n"
        "getattr(obj, '_history_user', None)\n"
        "class P:\n    def _get_position_from_instance(self, i, o): ...\n"
        "compat.private_fields(model)\n"
        "obj.history_change_reason\n"
    )
    assert private_uses(source) == [
        (1, "_UnvalidatedField"),
        (2, "_state"),
        (3, "private_fields"),
        (4, "connection.connection"),
        (5, "connection.connection"),
        (6, "_history_user"),
        (8, "_get_position_from_instance"),
    ]
