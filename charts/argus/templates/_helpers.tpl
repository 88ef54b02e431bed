{{/* The release's base name: <release>-argus, or the release name alone when it already says argus. */}}
{{- define "argus.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Labels on every object. */}}
{{- define "argus.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ default .Chart.Name .Values.nameOverride }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: argus
{{- end -}}

{{/* Selector labels of one component (operator, dataprep, ...): pass (list $ "component"). */}}
{{- define "argus.selectorLabels" -}}
{{- $ := index . 0 -}}
app.kubernetes.io/name: {{ default $.Chart.Name $.Values.nameOverride }}
app.kubernetes.io/instance: {{ $.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{- define "argus.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* The namespace the operator watches and the services create resources in. */}}
{{- define "argus.workNamespace" -}}
{{ .Values.watchNamespace | default .Release.Namespace }}
{{- end -}}

{{/*
The namespaces where IngestJobs may run workers, as a JSON array: watchNamespace alone when set (the operator
reconciles nowhere else, so worker.namespaces may only repeat it), else the release namespace and worker.namespaces.
*/}}
{{- define "argus.workerNamespaces" -}}
{{- if .Values.watchNamespace -}}
{{- range .Values.worker.namespaces -}}
{{- if ne . $.Values.watchNamespace -}}
{{- fail (printf "worker.namespaces: %s is not watchNamespace (%s): the operator runs no IngestJob there" . $.Values.watchNamespace) -}}
{{- end -}}
{{- end -}}
{{- list .Values.watchNamespace | toJson -}}
{{- else -}}
{{- concat (list .Release.Namespace) .Values.worker.namespaces | uniq | toJson -}}
{{- end -}}
{{- end -}}

{{/*
The workers the operator runs, as a YAML list: the operator's worker name, the chart account (its ServiceAccount and
ConfigMap <fullname>-<account>, its rule file files/rbac/<account>.yaml), the service whose settings it reads, its
placement values (workers.<key>; the ingest worker's are worker.*) and its ServiceAccount annotations.
*/}}
{{- define "argus.workers" -}}
- { name: ingest, account: ingest-worker, service: dataprep, annotations: {{ .Values.worker.serviceAccount.annotations | default dict | toJson }} }
- { name: camera-watcher, account: camera-watcher-worker, service: camera-rules, key: cameraWatcher, annotations: {{ .Values.workers.cameraWatcher.serviceAccount.annotations | default dict | toJson }} }
- { name: caption-run, account: caption-run-worker, service: caption-runs, key: captionRun, annotations: {{ .Values.workers.captionRun.serviceAccount.annotations | default dict | toJson }} }
{{- end -}}

{{/* A service's ConfigMap data: kubernetes control plane, its env over the shared env, as strings. (list $ values) */}}
{{- define "argus.configData" -}}
{{- $ := index . 0 -}}
ARGUS_CONTROL_PLANE: kubernetes
{{- range $key, $value := merge (dict) (index . 1).env $.Values.env }}
{{ $key }}: {{ $value | toString | quote }}
{{- end -}}
{{- end -}}

{{/* The leader-election rules with the operator's Lease name in place of the generator's placeholder. (list rules name) */}}
{{- define "argus.leaseRules" -}}
{{- index . 0 | replace "<lease-name>" (index . 1) -}}
{{- end -}}

{{/*
What the chart knows of each service: its port, base path ("" for a service whose routes are at the root), the
variables that make it listen on the pod IP, and its probes (startupProbe covers what a service does before it
listens). argus.service derives from the base path the probes' healthPath (<basePath>/health, /health at the root)
and the ingress routePath (the base path, / at the root).
*/}}
{{- define "argus.serviceFacts" -}}
dataprep:
  port: 6007
  basePath: /v1/dataprep
  hostVariable: MM_DATAPREP_HOST
  portVariable: MM_DATAPREP_HOST_PORT
  # The first start imports the default models (about a second on a laptop; slow nodes get two minutes).
  startup: { periodSeconds: 5, failureThreshold: 24 }
alert-dispatch:
  port: 8000
  basePath: /api/v1
  hostVariable: ALERT_DISPATCH_HOST
  portVariable: ALERT_DISPATCH_PORT
  startup: { periodSeconds: 5, failureThreshold: 24 }
frame-analysis:
  port: 8085
  basePath: /api/v1
  hostVariable: FRAME_ANALYSIS_HOST
  portVariable: FRAME_ANALYSIS_PORT
  # Before it listens: the MultiPose import on an empty models dir (a download from the npm registry, ~10 s) and,
  # with ARGUS_ORT_PROVIDER=cuda, the CUDA provider's load: five minutes.
  startup: { periodSeconds: 5, failureThreshold: 60 }
caption-qa:
  port: 4172
  basePath: /api
  hostVariable: CAPTION_QA_HOST
  portVariable: CAPTION_QA_PORT
  # Imports and loads both embedders before it listens (CAPTION_QA_PRELOAD_MODELS).
  startup: { periodSeconds: 5, failureThreshold: 24 }
caption-runs:
  port: 4173
  basePath: /api
  hostVariable: CAPTION_RUNS_HOST
  portVariable: CAPTION_RUNS_PORT
  # Loads no model before it listens (runs are resources; the caption workers do the inference).
  startup: { periodSeconds: 5, failureThreshold: 24 }
camera-rules:
  # 8001, not the contract's 8000: embedded, alert-dispatch has 8000 in the same process.
  port: 8001
  # The contract's paths are at the root (/cameras, /rules/, /watchers/…): health is /health, the route is /.
  basePath: ""
  hostVariable: CAMERA_RULES_HOST
  portVariable: CAMERA_RULES_PORT
  # Opens the recorder (Frigate's HTTP client, its MQTT feed) before it listens; loads no model.
  startup: { periodSeconds: 5, failureThreshold: 24 }
{{- end -}}

{{/*
One service's facts with its healthPath and routePath, failing on a service the chart does not know:
pass (list $ "name" ["values.key"]).
*/}}
{{- define "argus.service" -}}
{{- $facts := include "argus.serviceFacts" (index . 0) | fromYaml -}}
{{- $name := index . 1 -}}
{{- $where := "services" -}}
{{- if gt (len .) 2 }}{{ $where = index . 2 }}{{ end -}}
{{- if not (hasKey $facts $name) -}}
{{- fail (printf "%s.%s: unknown service (known: %s)" $where $name (keys $facts | sortAlpha | join ", ")) -}}
{{- end -}}
{{- $service := index $facts $name -}}
{{- $base := $service.basePath | default "" | trimSuffix "/" -}}
{{- $_ := set $service "healthPath" (printf "%s/health" $base) -}}
{{- $_ := set $service "routePath" ($base | default "/") -}}
{{- $service | toYaml -}}
{{- end -}}

{{/* The rules of one generated rule file (files/rbac/<name>.yaml, npm run chart:rbac); empty when absent. */}}
{{- define "argus.rules" -}}
{{- $file := (index . 0).Files.Get (printf "files/rbac/%s.yaml" (index . 1)) -}}
{{- if $file -}}
{{- (fromYaml $file).rules | toYaml -}}
{{- end -}}
{{- end -}}

{{/* A volume of the data or models dir: the configured one, or an emptyDir. */}}
{{- define "argus.volume" -}}
{{- $source := index . 1 -}}
- name: {{ index . 0 }}
{{- if $source }}
{{ toYaml $source | indent 2 }}
{{- else }}
  emptyDir: {}
{{- end }}
{{- end -}}

{{/* A nodeSelector with every value as a string (`gpu: true` in values would be refused by the API server). */}}
{{- define "argus.nodeSelector" -}}
{{- $out := dict -}}
{{- range $key, $value := . -}}
{{- $ignored := set $out $key (toString $value) -}}
{{- end -}}
{{- if $out -}}
nodeSelector:
  {{- toYaml $out | nindent 2 }}
{{- end -}}
{{- end -}}
