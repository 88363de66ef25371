#!/usr/bin/env bash
# Create or refresh the project's virtual environment (.venv) and seed the data cache.
# Idempotent: does nothing when pyproject.toml has not changed since the last run.
#   scripts/bootstrap.sh [EXTRAS]      e.g. scripts/bootstrap.sh book,test
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-book,test}"
venv="${RECMETA_VENV:-.venv}"

python_ok() {  # a Python new enough for LensKit 2026 (>= 3.12.5)
  "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12, 5) else 1)' >/dev/null 2>&1
}

find_python() {
  local c
  for c in "${RECMETA_PYTHON:-}" python3.14 python3.13 python3.12 python3; do
    [ -n "$c" ] && command -v "$c" >/dev/null 2>&1 && python_ok "$(command -v "$c")" && { command -v "$c"; return; }
  done
  if command -v pyenv >/dev/null 2>&1; then  # pyenv versions are not on PATH unless selected
    for c in $(ls -d "$(pyenv root)"/versions/3.1[2-9]*/bin/python3 2>/dev/null | sort -rV); do
      python_ok "$c" && { echo "$c"; return; }
    done
  fi
  if command -v uv >/dev/null 2>&1; then
    c=$(uv python find '>=3.12.5' 2>/dev/null || true)
    [ -n "$c" ] && python_ok "$c" && { echo "$c"; return; }
  fi
  echo "error: recmeta needs Python >= 3.12.5 (LensKit 2026 requires it) and none was found." >&2
  echo "Install one (e.g. 'pyenv install 3.13', 'uv python install 3.13') or set RECMETA_PYTHON." >&2
  exit 1
}

if [ ! -x "$venv/bin/python" ] || ! python_ok "$venv/bin/python"; then
  py=$(find_python)
  echo "creating $venv with $("$py" --version)"
  rm -rf "$venv"
  "$py" -m venv "$venv"
fi

# The stamp holds the hash of pyproject.toml and the extras installed with it: nothing to do
# when the hash is the same and every extra asked for is installed already (make book after
# make test reinstalls nothing).
stamp="$venv/.recmeta-installed"
hash="$(sha256sum pyproject.toml | cut -d' ' -f1)"
read -r had_hash had_extras 2>/dev/null < "$stamp" || true
if [ "${had_hash:-}" = "$hash" ]; then
  missing=$(comm -23 <(tr ',' '\n' <<<"$extras" | sort -u) <(tr ',' '\n' <<<"${had_extras:-}" | sort -u))
  [ -n "$missing" ] && extras="$(tr ',' '\n' <<<"$extras,$had_extras" | sort -u | paste -sd, -)"
else
  missing=yes
fi
# uv installs the wheels in parallel: the test extras in about 16 s with its cache warm, where
# pip took 119 s with its own. It resolves the same releases as pip when given the constraints
# pip is configured with. Where uv cannot be installed, pip does the work. Neither compiles the
# bytecode of every module (all of PyTorch and Ray: about a minute on two cores);
# scripts/compile_imports.py then compiles the modules the book and the tests import (18 s).
pip_constraints() {  # the files of pip's `constraint` setting, from any of its config files
  "$venv/bin/python" -m pip config list 2>/dev/null \
    | sed -n "s/^[^=]*\.constraint='\(.*\)'$/\1/p" | tr ' ' '\n' | sed '/^$/d'
}
uv_install() {
  "$venv/bin/python" -m pip install --quiet uv 2>/dev/null || return 1
  local constraints=() c
  while read -r c; do constraints+=(--constraint "$c"); done < <(pip_constraints)
  "$venv/bin/uv" pip install --quiet --python "$venv/bin/python" \
    "${constraints[@]}" -e ".[$extras]"
}
if [ -n "$missing" ]; then
  if ! uv_install; then
    echo "uv could not install the environment; pip installs it instead" >&2
    "$venv/bin/python" -m pip install --quiet --upgrade pip
    "$venv/bin/python" -m pip install --quiet --no-compile -e ".[$extras]"
  fi
  "$venv/bin/python" scripts/compile_imports.py "$extras"
  echo "$hash $extras" > "$stamp"
fi

# Data cache: a folder of already extracted releases beside the project (RECMETA_SEED, default
# ../shared/data) pre-fills it; otherwise the releases are downloaded from GroupLens.
seed="${RECMETA_SEED:-../shared/data}"
seed_args=()
[ -d "$seed" ] && seed_args=(--seed "$seed")
"$venv/bin/recmeta" data fetch ml-100k ml-latest-small "${seed_args[@]}" >/dev/null
