#!/usr/bin/env bash
# Install what building and running ldb needs on a fresh Debian/Ubuntu machine.
# Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian's CPython 3.11: ldb embeds it (pyo3) and the sandbox runs it as an unprivileged user,
# so it must live where every user can read it (see .cargo/config.toml).
# pytest for it runs the tests of projects (`ldb test src/pkg/m.py --tests tests/`) and the
# fixture projects' tests; decorator and psutil are what the shell fixture project imports.
# cmake, clang and libclang-dev build llama.cpp, the embedded model's engine.
packages=(python3.11 libpython3.11 libpython3.11-dev python3-pytest python3-decorator python3-psutil pkg-config cmake clang libclang-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found; install Rust (rustup) first" >&2
  exit 1
fi
