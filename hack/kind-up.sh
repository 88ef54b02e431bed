#!/usr/bin/env bash
# A kind cluster running Argus from this checkout:
#   hack/kind-up.sh [cluster-name]     needs docker and kind; helm and kubectl come from hack/k8s-tools.sh
# One worker node is labelled and tainted as a GPU pool (nvidia.com/gpu.present=true, nvidia.com/gpu:NoSchedule):
# frame-analysis, the ingest workers and the caption-run workers are placed there (hack/kind-values.yaml, on CPU).
# Builds the image, loads it into the nodes, creates an API key, installs the chart, waits for every Deployment,
# runs `helm test`, and prints how to ingest a first video and send a first alert. Not run by CI (no Docker there).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cluster="${1:-argus}"
image="${ARGUS_IMAGE:-argus:dev}"
namespace=argus
bin="$("$root/hack/k8s-tools.sh")"
kubectl() { "$bin/kubectl" --context "kind-$cluster" "$@"; }
helm() { HOME="$root/.tools/helm-home" "$bin/helm" --kube-context "kind-$cluster" "$@"; }
for tool in docker kind; do command -v "$tool" >/dev/null || { echo "kind-up: $tool is not installed" >&2; exit 1; }; done
mkdir -p "$root/.tools/helm-home"

if ! kind get clusters | grep -qx "$cluster"; then
  kind create cluster --name "$cluster" --config - <<'KIND'
kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
nodes:
  - role: control-plane
  - role: worker
  - role: worker
    labels:
      nvidia.com/gpu.present: "true"
    kubeadmConfigPatches:
      - |
        kind: JoinConfiguration
        nodeRegistration:
          taints: [{ key: nvidia.com/gpu, value: "present", effect: NoSchedule }]
KIND
fi

docker build --target runtime -t "$image" "$root"
kind load docker-image "$image" --name "$cluster"

kubectl create namespace "$namespace" --dry-run=client -o yaml | kubectl apply -f -
if ! kubectl -n "$namespace" get secret argus-api-keys >/dev/null 2>&1; then
  kubectl -n "$namespace" create secret generic argus-api-keys --from-literal=api-keys="$(openssl rand -hex 24)"
fi
# The key caption-runs seals stream passwords with (the service and its caption-run workers).
if ! kubectl -n "$namespace" get secret caption-runs-credentials >/dev/null 2>&1; then
  kubectl -n "$namespace" create secret generic caption-runs-credentials --from-literal=key="$(openssl rand -base64 32)"
fi

helm upgrade --install argus "$root/charts/argus" -n "$namespace" -f "$root/hack/kind-values.yaml" \
  --set image.repository="${image%:*}" --set image.tag="${image##*:}" --set gpu.image="$image"
kubectl -n "$namespace" wait --for=condition=Available deployment --all --timeout=600s
helm test argus -n "$namespace" --logs

key="$(kubectl -n "$namespace" get secret argus-api-keys -o jsonpath='{.data.api-keys}' | base64 -d | head -n1)"
cat <<NEXT

kind-up: Argus is up in kind-$cluster (namespace $namespace). Your API key: $key

First video (any mp4; or make one: ffmpeg -f lavfi -i testsrc=duration=10:size=640x360:rate=10 clip.mp4):
  kubectl --context kind-$cluster -n $namespace port-forward svc/argus-dataprep 6007 &
  curl -H "Authorization: Bearer $key" -F file=@clip.mp4 "http://localhost:6007/v1/dataprep/media/upload?bucket_name=cams&frame_interval=10"
  curl -H "Authorization: Bearer $key" -H 'content-type: application/json' localhost:6007/v1/dataprep/search -d '{"query":"a test pattern"}'

First alert:
  kubectl --context kind-$cluster -n $namespace port-forward svc/argus-alert-dispatch 8000 &
  curl -H "Authorization: Bearer $key" -H 'content-type: application/json' localhost:8000/api/v1/alerts \\
    -d '{"alert_type":"loitering","source_id":"cam-2","confidence":0.91}'

More (a caption run, a question): README.md, "In a cluster".
NEXT
