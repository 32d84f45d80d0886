"""The dependency rule of docs/architecture.md, as import-linter contracts
(pyproject.toml `[tool.importlinter]`): the apps depend one way (grounding on
evidence on policies), the shared kernel imports nothing from the apps, and no core
module imports a face."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_import_contracts_are_kept() -> None:
    lint_imports = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 4 kept, 0 broken." in result.stdout


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
