#!/usr/bin/env bash
# Move the shared kernel and the shared web layer out of the `policies` app into the
# top-level package `common` (common/kernel, common/web), and rewrite every reference.
#
# Re-runnable: run it from the repository root on any branch, before or after other
# branches merged (files they added under policies/kernel or policies/web are moved
# too; edits already made are left as they are). It only moves and rewrites; review
# `git status`/`git diff`, run the checks, then commit:
#
#   tools/move_common.sh
#   .venv/bin/ruff check . && .venv/bin/ruff format --check .
#   .venv/bin/python manage.py makemigrations --check --dry-run
#   .venv/bin/lint-imports
#   .venv/bin/pytest -q tests/ops/test_architecture.py tests/ops/test_packaging.py
#
# What it does:
#  1. git mv policies/kernel/* -> common/kernel/, policies/web/* -> common/web/
#     (common/__init__.py written if missing); empty leftovers and __pycache__ removed.
#  2. Rewrites, in every tracked text file (Python, settings' dotted strings, migrations'
#     imports of the uuid7 default, pyproject, docs, templates, CI, Dockerfile, tests):
#     policies.kernel -> common.kernel, policies.web -> common.web, and the same with '/'.
#  3. Structured edits (each only when not yet made): pyproject's setuptools include and
#     import-linter root packages and contracts, the Dockerfile's COPY, the packaging
#     test's PACKAGES, the internals test's APP_PACKAGES (tests/ops/test_architecture.py),
#     docs/architecture.md's layout tree, .dockerignore's note.
#  4. ruff --fix of import order (I) and ruff format on the files it touched.
set -euo pipefail

cd "$(git rev-parse --show-toplevel)"
SELF="tools/move_common.sh"

# --- 1. the moves ------------------------------------------------------------------------
move_tree() {
    local from="$1" to="$2"
    [ -d "$from" ] || return 0
    mkdir -p "$to"
    git ls-files -z -- "$from" | while IFS= read -r -d '' file; do
        local target="$to/${file#"$from"/}"
        if [ -e "$target" ]; then
            echo "move_common: $target exists; $file left for a hand merge" >&2
            continue
        fi
        mkdir -p "$(dirname "$target")"
        git mv "$file" "$target"
    done
    # Only untracked caches can be left behind.
    find "$from" -name __pycache__ -prune -exec rm -rf {} + 2>/dev/null || true
    find "$from" -depth -type d -empty -delete 2>/dev/null || true
    if [ -d "$from" ]; then
        echo "move_common: $from still holds untracked files:" >&2
        find "$from" -type f >&2
    fi
}

move_tree policies/kernel common/kernel
move_tree policies/web common/web

if [ ! -f common/__init__.py ]; then
    cat > common/__init__.py <<'PY'
"""What every app shares and no app owns: the kernel (`common.kernel`: pure helpers,
no models, imports no app) and the web layer (`common.web`: the faces' building blocks,
above the `policies` app it reads, below every other app). Not a Django app: it has no
models, migrations or templates of its own."""
PY
    git add common/__init__.py
fi

# --- 2. the references -------------------------------------------------------------------
mapfile -d '' FILES < <(git grep -lzI -E 'policies[./](kernel|web)\b' -- . ":(exclude)$SELF" || true)
if [ "${#FILES[@]}" -gt 0 ]; then
    sed -i -E \
        -e 's/(^|[^A-Za-z0-9_.])policies\.kernel\b/\1common.kernel/g' \
        -e 's/(^|[^A-Za-z0-9_.])policies\.web\b/\1common.web/g' \
        -e 's#(^|[^A-Za-z0-9_/-])policies/kernel\b#\1common/kernel#g' \
        -e 's#(^|[^A-Za-z0-9_/-])policies/web\b#\1common/web#g' \
        "${FILES[@]}"
fi
LEFT=$(git grep -nI -E 'policies[./](kernel|web)\b' -- . ":(exclude)$SELF" || true)
if [ -n "$LEFT" ]; then
    echo "move_common: references left for a hand edit:" >&2
    echo "$LEFT" >&2
fi

# --- 3. the structured edits ---------------------------------------------------------------
PYTHON="${PYTHON:-python3}"
"$PYTHON" - <<'PY'
import re
import sys
from pathlib import Path

warnings = []


def edit(path: str, change) -> None:
    file = Path(path)
    if not file.exists():
        warnings.append(f"{path}: missing")
        return
    text = file.read_text()
    new = change(text)
    if new is None:
        warnings.append(f"{path}: not recognised, edit by hand")
    elif new != text:
        file.write_text(new)


KERNEL_CONTRACT = '''[[tool.importlinter.contracts]]
name = "The shared kernel imports nothing from the apps, nor the web layer"
type = "forbidden"
source_modules = ["common.kernel"]
forbidden_modules = ["feed", "grounding", "evidence", "transparency", "policies", "common.web"]
'''

WEB_CONTRACT = '''[[tool.importlinter.contracts]]
name = "The shared web layer imports no app above policies"
type = "forbidden"
source_modules = ["common.web"]
forbidden_modules = ["feed", "grounding", "evidence", "transparency"]
'''


def pyproject(text: str) -> str | None:
    include = re.search(r"^include = \[(.*)\]$", text, re.M)
    if include is None:
        return None
    if '"common*"' not in include.group(1):
        text = text.replace(include.group(0), f'include = ["common*", {include.group(1)}]')
    roots = re.search(r"^root_packages = \[(.*)\]$", text, re.M)
    if roots is None:
        return None
    if '"common"' not in roots.group(1):
        text = text.replace(roots.group(0), f'root_packages = ["common", {roots.group(1)}]')
    # The kernel's contract, whatever its list says today, becomes the whole-app one.
    kernel = re.search(
        r'\[\[tool\.importlinter\.contracts\]\]\nname = "The shared kernel imports nothing'
        r'[^\n]*\n.*?(?=\n\[\[|\n\[(?!\[)|\Z)',
        text,
        re.S,
    )
    if kernel is None:
        return None
    text = text.replace(kernel.group(0), KERNEL_CONTRACT)
    if 'source_modules = ["common.web"]' not in text:
        text = text.replace(KERNEL_CONTRACT, KERNEL_CONTRACT + "\n" + WEB_CONTRACT, 1)
    return text


def dockerfile(text: str) -> str | None:
    if re.search(r"^COPY common \./common$", text, re.M):
        return text
    line = re.search(r"^COPY policies \./policies$", text, re.M)
    if line is None:
        return None
    return text.replace(line.group(0), "COPY common ./common\n" + line.group(0), 1)


def packaging(text: str) -> str | None:
    found = re.search(r"^PACKAGES = \((.*)\)$", text, re.M)
    if found is None:
        return None
    if '"common"' in found.group(1):
        return text
    return text.replace(found.group(0), f'PACKAGES = ({found.group(1)}, "common")')


COMMON_TREE = """common/      what the apps share and none owns (not a Django app: no models, migrations
             or templates)
  kernel/      the shared kernel: refusals and offenders, the history-keeping bulk writer,
               text and identifier rules, request context, canonical JSON digests,
               JSON Schema validation (jsonschema-rs) and its OpenAPI form, and compat
               (the one module touching Django's and the libraries' internals); imports
               no app
  web/         the shared web layer: API base view (views.ApiView), the one problem+json
               handler (errors), body parser, throttles, pagination, the operations the
               URLconf serves and what each may answer (operations), their OpenAPI
               description (operation_schema, openapi), the refusal audit of refused
               requests, admin bases; reads the policies app, no app above it

"""


def architecture(text: str) -> str | None:
    if "\ncommon/      " in text:
        return text
    # The two entries under policies/, from "  kernel/" up to the next two-space entry
    # that is neither (the policies app's own modules).
    block = re.search(r"\n  kernel/ .*?\n(?=  (?!kernel/|web/)\S)", text, re.S)
    start = text.find("\npolicies/    ")
    if block is None or start < 0 or block.start() < start:
        return None
    text = text[: block.start()] + "\n" + text[block.end() :]
    start = text.find("\npolicies/    ")
    return text[: start + 1] + COMMON_TREE + text[start + 1 :]


def architecture_test(text: str) -> str | None:
    found = re.search(r"^APP_PACKAGES = \((.*)\)$", text, re.M)
    if found is None:
        return None
    if '"common"' in found.group(1):
        return text
    return text.replace(found.group(0), f'APP_PACKAGES = ("common", {found.group(1)})')


def dockerignore(text: str) -> str:
    return text.replace("manage.py, the three apps.", "manage.py, the apps and common.")


edit("pyproject.toml", pyproject)
edit("Dockerfile", dockerfile)
edit("tests/ops/test_packaging.py", packaging)
edit("docs/architecture.md", architecture)
edit(".dockerignore", dockerignore)
edit("tests/ops/test_architecture.py", architecture_test)
for warning in warnings:
    print(f"move_common: {warning}", file=sys.stderr)
PY

# --- 4. import order and format ------------------------------------------------------------
if [ -x .venv/bin/ruff ]; then
    mapfile -t CHANGED < <(git diff --name-only --diff-filter=AMR HEAD -- '*.py'; git ls-files --others --exclude-standard -- '*.py')
    if [ "${#CHANGED[@]}" -gt 0 ]; then
        .venv/bin/ruff check --fix --select I --quiet "${CHANGED[@]}" || true
        .venv/bin/ruff format --quiet "${CHANGED[@]}"
    fi
fi
echo "move_common: done; review git status and run the checks listed at the top of $SELF"
