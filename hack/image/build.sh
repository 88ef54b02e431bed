#!/usr/bin/env bash
# Builds the project's Dockerfile with podman on a machine that reaches no container registry (CI here):
#   hack/image/build.sh [tag] [podman build options…]      (tag default: localhost/argus:dev)
# The bases come from hack/image/local-base.sh; the host's CA bundle is mounted for HTTPS through a proxy with its own
# CA (NODE_EXTRA_CA_CERTS, a build arg, never baked in); the host's npm cache is mounted copy-on-write, so `npm ci`
# in the build reuses what the host downloaded. Labels: version from package.json, revision and source from git.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export CONTAINERS_CONF="${CONTAINERS_CONF:-$here/containers.conf}"
tag="${1:-localhost/argus:dev}"
shift || true

node_base="$("$here/local-base.sh")"
args=(--format docker --network host
  --build-arg BUILD_IMAGE="$node_base" --build-arg RUNTIME_IMAGE=localhost/debian-base:bookworm
  --build-arg VERSION="$(node -p "require('$root/package.json').version")"
  --build-arg REVISION="$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)"
  --build-arg SOURCE="$(git -C "$root" remote get-url origin 2>/dev/null || echo unknown)")
ca=/etc/ssl/certs/ca-certificates.crt
if [[ -f "$ca" ]]; then
  args+=(--volume "$ca:$ca:ro" --build-arg NODE_EXTRA_CA_CERTS="$ca")
fi
npm_cache="$(npm config get cache 2>/dev/null || true)"
if [[ -d "$npm_cache" ]]; then
  args+=(--volume "$npm_cache:/root/.npm:O")
fi
exec podman build "${args[@]}" "$@" -t "$tag" "$root"
