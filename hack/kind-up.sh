#!/usr/bin/env bash
# Checks the CRDs and samples against a real API server in a kind cluster, then (with ARGUS_IMAGE) installs the chart.
#   hack/kind-up.sh [cluster-name]        needs docker and kind; helm and kubectl come from hack/k8s-tools.sh
# Not run by CI: no Docker engine runs on the CI machines.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cluster="${1:-argus}"
bin="$("$root/hack/k8s-tools.sh")"
kubectl() { "$bin/kubectl" --context "kind-$cluster" "$@"; }

command -v kind >/dev/null || { echo "kind-up: kind is not installed" >&2; exit 1; }
kind get clusters | grep -qx "$cluster" || kind create cluster --name "$cluster"

# Server-side apply: the CRDs' descriptions are too long for client-side apply's last-applied annotation.
kubectl apply --server-side -f "$root/crds/"
kubectl wait --for=condition=Established --timeout=60s -f "$root/crds/"
# The API server judges the samples with strict field validation first (unknown field = error), then keeps them.
kubectl apply --dry-run=server --validate=strict -f "$root/crds/samples/"
kubectl apply --validate=strict -f "$root/crds/samples/"
kubectl get argus -A
kubectl explain ingestjob.spec.items >/dev/null

if [[ -n "${ARGUS_IMAGE:-}" ]]; then
  kind load docker-image "$ARGUS_IMAGE" --name "$cluster"
  mkdir -p "$root/.tools/helm-home"
  HOME="$root/.tools/helm-home" "$bin/helm" upgrade --install argus "$root/charts/argus" \
    --kube-context "kind-$cluster" -n argus --create-namespace \
    --set image.repository="${ARGUS_IMAGE%:*}" --set image.tag="${ARGUS_IMAGE##*:}" --set crds.enabled=false
  kubectl -n argus rollout status deployment -l app.kubernetes.io/instance=argus --timeout=180s
fi
echo "kind-up: cluster kind-$cluster is up with the Argus CRDs and samples"
