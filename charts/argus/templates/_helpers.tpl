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

{{/* The data volume: the configured source, or an emptyDir. */}}
{{- define "argus.dataVolume" -}}
- name: data
{{- if . }}
{{ toYaml . | indent 2 }}
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

{{/* The image of a pod: the CUDA variant on the GPU pool (gpu.image, or <repository>:<tag>-cuda). (list $ gpu) */}}
{{- define "argus.podImage" -}}
{{- $ := index . 0 -}}
{{- if index . 1 -}}
{{- $.Values.gpu.image | default (printf "%s:%s-cuda" $.Values.image.repository ($.Values.image.tag | default $.Chart.AppVersion)) -}}
{{- else -}}
{{- include "argus.image" $ -}}
{{- end -}}
{{- end -}}

{{/*
A workload's placement as YAML {nodeSelector, tolerations, affinity, resources}: its own values, and on the GPU pool
(gpu: true) also the pool's nodeSelector (its own keys win), tolerations (after its own), affinity (unless it has
its own) and gpu.count nvidia.com/gpu in its limits. Label values and quantities as strings. (list $ values)
*/}}
{{- define "argus.placement" -}}
{{- $ := index . 0 -}}
{{- $values := index . 1 -}}
{{- $gpu := $values.gpu | default false -}}
{{- $selector := dict -}}
{{- if $gpu }}{{ range $key, $value := $.Values.gpu.nodeSelector }}{{ $_ := set $selector $key (toString $value) }}{{ end }}{{ end -}}
{{- range $key, $value := $values.nodeSelector }}{{ $_ := set $selector $key (toString $value) }}{{ end -}}
{{- $tolerations := $values.tolerations | default list -}}
{{- if $gpu }}{{ $tolerations = concat $tolerations ($.Values.gpu.tolerations | default list) }}{{ end -}}
{{- $affinity := $values.affinity | default dict -}}
{{- if and $gpu (not $affinity) }}{{ $affinity = $.Values.gpu.affinity | default dict }}{{ end -}}
{{- $resources := dict -}}
{{- range $section, $quantities := $values.resources -}}
{{- $strings := dict -}}
{{- range $key, $value := $quantities }}{{ $_ := set $strings $key (toString $value) }}{{ end -}}
{{- $_ := set $resources $section $strings -}}
{{- end -}}
{{- if and $gpu (gt (int $.Values.gpu.count) 0) -}}
{{- $limits := $resources.limits | default dict -}}
{{- $_ := set $limits "nvidia.com/gpu" (toString $.Values.gpu.count) -}}
{{- $_ := set $resources "limits" $limits -}}
{{- end -}}
{{- dict "nodeSelector" $selector "tolerations" $tolerations "affinity" $affinity "resources" $resources | toYaml -}}
{{- end -}}

{{/* Where a service answers in the cluster, from any namespace: http://<name>.<namespace>.svc:<port><base path>. */}}
{{- define "argus.serviceUrl" -}}
{{- $ := index . 0 -}}
{{- $facts := include "argus.service" (list $ (index . 1)) | fromYaml -}}
{{- printf "http://%s-%s.%s.svc:%v%s" (include "argus.fullname" $) (index . 1) $.Release.Namespace $facts.port ($facts.basePath | default "") -}}
{{- end -}}

{{/* The MQTT broker every service and worker uses: backends.mqtt.url, else the chart's Mosquitto, else "". */}}
{{- define "argus.mqttUrl" -}}
{{- if .Values.backends.mqtt.url -}}
{{- .Values.backends.mqtt.url -}}
{{- else if .Values.backends.mqtt.mosquitto.enabled -}}
{{- printf "mqtt://%s-mosquitto.%s.svc:1883" (include "argus.fullname" .) .Release.Namespace -}}
{{- end -}}
{{- end -}}

{{/* Where the API keys file is mounted, and the file itself (ARGUS_API_KEYS_FILE). */}}
{{- define "argus.apiKeysDir" -}}/var/run/secrets/argus/api-keys{{- end -}}
{{- define "argus.apiKeysFile" -}}{{ include "argus.apiKeysDir" . }}/api-keys{{- end -}}
{{/* Where volumes.extraModels is mounted (read-only, beside the image's own models). */}}
{{- define "argus.extraModelsDir" -}}/var/lib/argus/extra-models{{- end -}}

{{/*
One service's environment from the backends, the GPU pool and the chart's own Services, as YAML:
  config: variables for its ConfigMap (its env and the shared env win over what the chart derives);
  secrets: EnvVars referencing keys of your Secrets (never values).
The same for its worker's pods (the ingest worker is dataprep's, the camera-watcher camera-rules', the caption-run
worker caption-runs'), with `gpu` the worker's own. (list $ service values gpu)
*/}}
{{- define "argus.serviceEnv" -}}
{{- $ := index . 0 -}}
{{- $service := index . 1 -}}
{{- $values := index . 2 -}}
{{- $gpu := index . 3 -}}
{{- $b := $.Values.backends -}}
{{- $config := dict "ARGUS_CONTROL_PLANE" "kubernetes" -}}
{{- $secrets := list -}}
{{- $secretRef := dict -}}
{{- /* Storage and vectors: dataprep (MM_DATAPREP_) and caption-qa (CAPTION_QA_). */ -}}
{{- $prefix := get (dict "dataprep" "MM_DATAPREP_" "caption-qa" "CAPTION_QA_") $service -}}
{{- if $prefix -}}
{{- if $b.s3.endpoint -}}
{{- $_ := set $config (printf "%sSTORAGE_BACKEND" $prefix) "s3" -}}
{{- $_ := set $config (printf "%sS3_ENDPOINT" $prefix) $b.s3.endpoint -}}
{{- $_ := set $config (printf "%sS3_REGION" $prefix) $b.s3.region -}}
{{- $_ := set $config (printf "%sS3_FORCE_PATH_STYLE" $prefix) (toString $b.s3.forcePathStyle) -}}
{{- if $b.s3.existingSecret -}}
{{- $secrets = append $secrets (dict "name" (printf "%sS3_ACCESS_KEY_ID" $prefix) "valueFrom" (dict "secretKeyRef" (dict "name" $b.s3.existingSecret "key" $b.s3.accessKeyIdKey))) -}}
{{- $secrets = append $secrets (dict "name" (printf "%sS3_SECRET_ACCESS_KEY" $prefix) "valueFrom" (dict "secretKeyRef" (dict "name" $b.s3.existingSecret "key" $b.s3.secretAccessKeyKey))) -}}
{{- end -}}
{{- end -}}
{{- if $b.weaviate.url -}}
{{- $_ := set $config (printf "%sVECTORDB_BACKEND" $prefix) "weaviate" -}}
{{- $_ := set $config (printf "%sWEAVIATE_URL" $prefix) $b.weaviate.url -}}
{{- if $b.weaviate.grpcUrl }}{{ $_ := set $config (printf "%sWEAVIATE_GRPC_URL" $prefix) $b.weaviate.grpcUrl }}{{ end -}}
{{- if $b.weaviate.existingSecret -}}
{{- $secrets = append $secrets (dict "name" (printf "%sWEAVIATE_API_KEY" $prefix) "valueFrom" (dict "secretKeyRef" (dict "name" $b.weaviate.existingSecret "key" $b.weaviate.apiKeyKey))) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- /* The language model: caption-qa's answers, alert-dispatch's summaries. */ -}}
{{- if and (has $service (list "caption-qa" "alert-dispatch")) $b.llm.baseUrl -}}
{{- $_ := set $config "LLM_BASE_URL" $b.llm.baseUrl -}}
{{- if $b.llm.model }}{{ $_ := set $config "LLM_MODEL" $b.llm.model }}{{ end -}}
{{- if $b.llm.existingSecret -}}
{{- $secrets = append $secrets (dict "name" "LLM_API_KEY" "valueFrom" (dict "secretKeyRef" (dict "name" $b.llm.existingSecret "key" $b.llm.apiKeyKey))) -}}
{{- end -}}
{{- end -}}
{{- /* The vision model: frame-analysis, caption runs, camera-rules' summaries. */ -}}
{{- if and (has $service (list "frame-analysis" "caption-runs" "camera-rules")) $b.vlm.baseUrl -}}
{{- $_ := set $config "VLM_BASE_URL" $b.vlm.baseUrl -}}
{{- if $b.vlm.model }}{{ $_ := set $config "VLM_MODEL" $b.vlm.model }}{{ end -}}
{{- if eq $service "frame-analysis" }}{{ $_ := set $config "FRAME_ANALYSIS_VLM_ENABLED" "true" }}{{ end -}}
{{- if $b.vlm.existingSecret -}}
{{- $secrets = append $secrets (dict "name" "VLM_API_KEY" "valueFrom" (dict "secretKeyRef" (dict "name" $b.vlm.existingSecret "key" $b.vlm.apiKeyKey))) -}}
{{- end -}}
{{- end -}}
{{- /* MQTT: alert-dispatch publishes, caption runs relay, camera-rules reads Frigate's events. */ -}}
{{- $mqtt := include "argus.mqttUrl" $ -}}
{{- if and $mqtt (has $service (list "alert-dispatch" "caption-runs" "camera-rules")) -}}
{{- $_ := set $config "MQTT_BROKER" $mqtt -}}
{{- end -}}
{{- /* The chart's own Services, reachable from every worker namespace. */ -}}
{{- $on := dict -}}
{{- range $name, $other := $.Values.services }}{{ $_ := set $on $name $other.enabled }}{{ end -}}
{{- if eq $service "camera-rules" -}}
{{- $frigate := $values.frigate | default dict -}}
{{- with $frigate.url }}{{ $_ := set $config "CAMERA_RULES_FRIGATE_URL" . }}{{ end -}}
{{- if $frigate.existingSecret -}}
{{- $secrets = append $secrets (dict "name" "CAMERA_RULES_FRIGATE_USER" "valueFrom" (dict "secretKeyRef" (dict "name" $frigate.existingSecret "key" $frigate.userKey))) -}}
{{- $secrets = append $secrets (dict "name" "CAMERA_RULES_FRIGATE_PASSWORD" "valueFrom" (dict "secretKeyRef" (dict "name" $frigate.existingSecret "key" $frigate.passwordKey))) -}}
{{- end -}}
{{- /* One lease for the service and every watcher: a claim is judged by the lease of whoever reads it. */ -}}
{{- with $values.claimLeaseSeconds }}{{ $_ := set $config "CAMERA_RULES_CLAIM_LEASE_SECONDS" . }}{{ end -}}
{{- $directory := include "argus.cameraRulesVolumes" $values | fromYaml -}}
{{- if $directory.volumes -}}
{{- $_ := set $config "CAMERA_RULES_RECORDINGS_DIR" (include "argus.recordingsDir" $) -}}
{{- $_ := set $config "CAMERA_RULES_DETECTIONS_DIR" (include "argus.detectionsDir" $) -}}
{{- end -}}
{{- if (index $on "dataprep") }}{{ $_ := set $config "CAMERA_RULES_DATAPREP_URL" (include "argus.serviceUrl" (list $ "dataprep")) }}{{ end -}}
{{- if (index $on "alert-dispatch") }}{{ $_ := set $config "CAMERA_RULES_ALERT_DISPATCH_URL" (include "argus.serviceUrl" (list $ "alert-dispatch")) }}{{ end -}}
{{- end -}}
{{- if eq $service "caption-runs" -}}
{{- if (index $on "caption-qa") }}{{ $_ := set $config "CAPTION_RUNS_CAPTION_QA_URL" (include "argus.serviceUrl" (list $ "caption-qa")) }}{{ end -}}
{{- if (index $on "alert-dispatch") }}{{ $_ := set $config "CAPTION_RUNS_ALERTS_URL" (include "argus.serviceUrl" (list $ "alert-dispatch")) }}{{ end -}}
{{- /* One key for the service (it seals stream passwords) and every caption-run worker (it opens them). */ -}}
{{- $credentials := $values.credentials | default dict -}}
{{- if $credentials.existingSecret -}}
{{- $secrets = append $secrets (dict "name" "CAPTION_RUNS_CREDENTIALS_KEY" "valueFrom" (dict "secretKeyRef" (dict "name" $credentials.existingSecret "key" $credentials.key))) -}}
{{- end -}}
{{- /* The media claim, at one path in the service and every worker (argus.captionRunsMediaVolumes). */ -}}
{{- if ($values.media | default dict).claimName -}}
{{- $_ := set $config "CAPTION_RUNS_MEDIA_ROOT" (include "argus.captionRunsMediaDir" $) -}}
{{- end -}}
{{- end -}}
{{- /* Redis, shared by the replicas. */ -}}
{{- if $b.redis.existingSecret -}}
{{- $secrets = append $secrets (dict "name" "ARGUS_REDIS_URL" "valueFrom" (dict "secretKeyRef" (dict "name" $b.redis.existingSecret "key" $b.redis.urlKey))) -}}
{{- else if $b.redis.url -}}
{{- $_ := set $config "ARGUS_REDIS_URL" $b.redis.url -}}
{{- else if $b.redis.deploy.enabled -}}
{{- $_ := set $config "ARGUS_REDIS_URL" (printf "redis://%s-redis.%s.svc:6379" (include "argus.fullname" $) $.Release.Namespace) -}}
{{- end -}}
{{- if $gpu }}{{ $_ := set $config "ARGUS_ORT_PROVIDER" $.Values.gpu.ortProvider }}{{ end -}}
{{- if $.Values.auth.apiKeys.existingSecret }}{{ $_ := set $config "ARGUS_API_KEYS_FILE" (include "argus.apiKeysFile" $) }}{{ end -}}
{{- /* What the user wrote wins; every value a string. */ -}}
{{- range $key, $value := merge (dict) ($values.env | default dict) $.Values.env }}{{ $_ := set $config $key (toString $value) }}{{ end -}}
{{- range $key, $value := $config }}{{ $_ := set $config $key (toString $value) }}{{ end -}}
{{- dict "config" $config "secrets" $secrets | toYaml -}}
{{- end -}}

{{/* Where camera-rules and its watchers see the directory recorder's recordings and write its segment analyses. */}}
{{- define "argus.recordingsDir" -}}/var/lib/argus/camera-rules/recordings{{- end -}}
{{- define "argus.detectionsDir" -}}/var/lib/argus/camera-rules/detections{{- end -}}

{{/*
The directory recorder's volumes, shared by camera-rules and every camera-watcher pod: the recordings claim mounted
(read-only unless recordings.readOnly is false) at argus.recordingsDir, the detections claim (the recordings claim
unless another is named: one volume, two mounts) mounted writable at argus.detectionsDir. YAML {volumes, mounts};
empty without directory.recordings.claimName. Pass services.camera-rules' values.
*/}}
{{- define "argus.cameraRulesVolumes" -}}
{{- $directory := .directory | default dict -}}
{{- $recordings := $directory.recordings | default dict -}}
{{- $detections := $directory.detections | default dict -}}
{{- $volumes := list -}}
{{- $mounts := list -}}
{{- if $recordings.claimName -}}
{{- $volumes = append $volumes (dict "name" "recordings" "persistentVolumeClaim" (dict "claimName" $recordings.claimName)) -}}
{{- $mount := dict "name" "recordings" "mountPath" (include "argus.recordingsDir" .) "readOnly" (ne (toString $recordings.readOnly) "false") -}}
{{- with $recordings.subPath }}{{ $_ := set $mount "subPath" . }}{{ end -}}
{{- $mounts = append $mounts $mount -}}
{{- $volume := "recordings" -}}
{{- if and $detections.claimName (ne $detections.claimName $recordings.claimName) -}}
{{- $volume = "detections" -}}
{{- $volumes = append $volumes (dict "name" "detections" "persistentVolumeClaim" (dict "claimName" $detections.claimName)) -}}
{{- end -}}
{{- $mount = dict "name" $volume "mountPath" (include "argus.detectionsDir" .) -}}
{{- with $detections.subPath }}{{ $_ := set $mount "subPath" . }}{{ end -}}
{{- $mounts = append $mounts $mount -}}
{{- end -}}
{{- dict "volumes" $volumes "mounts" $mounts | toYaml -}}
{{- end -}}

{{/* Where caption-runs and every caption-run worker see the files a run may read as a stream (CAPTION_RUNS_MEDIA_ROOT). */}}
{{- define "argus.captionRunsMediaDir" -}}/var/lib/argus/caption-runs/media{{- end -}}

{{/*
caption-runs' media, shared by caption-runs (it checks a file path when a run starts) and every caption-run worker
pod (it reads the file): the media claim mounted read-only at argus.captionRunsMediaDir. YAML {volumes, mounts};
empty without media.claimName. Pass services.caption-runs' values.
*/}}
{{- define "argus.captionRunsMediaVolumes" -}}
{{- $media := .media | default dict -}}
{{- $volumes := list -}}
{{- $mounts := list -}}
{{- if $media.claimName -}}
{{- $volumes = append $volumes (dict "name" "caption-runs-media" "persistentVolumeClaim" (dict "claimName" $media.claimName "readOnly" true)) -}}
{{- $mount := dict "name" "caption-runs-media" "mountPath" (include "argus.captionRunsMediaDir" .) "readOnly" true -}}
{{- with $media.subPath }}{{ $_ := set $mount "subPath" . }}{{ end -}}
{{- $mounts = append $mounts $mount -}}
{{- end -}}
{{- dict "volumes" $volumes "mounts" $mounts | toYaml -}}
{{- end -}}

{{/* The API keys Secret (auth.apiKeys) and the extra models (volumes.extraModels) as volumes and mounts: YAML {volumes, mounts}. */}}
{{- define "argus.podVolumes" -}}
{{- $volumes := list -}}
{{- $mounts := list -}}
{{- with .Values.auth.apiKeys.existingSecret -}}
{{- $volumes = append $volumes (dict "name" "api-keys" "secret" (dict "secretName" . "items" (list (dict "key" $.Values.auth.apiKeys.key "path" "api-keys")))) -}}
{{- $mounts = append $mounts (dict "name" "api-keys" "mountPath" (include "argus.apiKeysDir" $) "readOnly" true) -}}
{{- end -}}
{{- with .Values.volumes.extraModels -}}
{{- $volumes = append $volumes (merge (dict "name" "extra-models") (deepCopy .)) -}}
{{- $mounts = append $mounts (dict "name" "extra-models" "mountPath" (include "argus.extraModelsDir" $) "readOnly" true) -}}
{{- end -}}
{{- dict "volumes" $volumes "mounts" $mounts | toYaml -}}
{{- end -}}

{{/*
Refusals that no schema can express, each naming the value to change. Rendered once (services.yaml).
*/}}
{{- define "argus.validate" -}}
{{- $secretName := "(API_KEY|SECRET|TOKEN|PASSWORD|ACCESS_KEY|CREDENTIALS)" -}}
{{- $sources := dict "env" .Values.env "operator.env" .Values.operator.env -}}
{{- range $service, $values := .Values.services }}{{ $_ := set $sources (printf "services.%s.env" $service) ($values.env | default dict) }}{{ end -}}
{{- range $where, $env := $sources -}}
{{- range $key, $value := $env -}}
{{- if and (regexMatch $secretName $key) (not (hasSuffix "_FILE" $key)) -}}
{{- fail (printf "%s.%s looks like a secret, and values land in a ConfigMap: put it in a Secret you create and name that Secret (services.<name>.envFromSecret, or the existingSecret of backends.*, auth.apiKeys, services.camera-rules.frigate or services.caption-runs.credentials)" $where $key) -}}
{{- end -}}
{{- if regexMatch "://[^/@]+@" (toString $value) -}}
{{- fail (printf "%s.%s holds credentials in its URL, and values land in a ConfigMap: put the URL in a Secret (services.<name>.envFromSecret, or backends.redis.existingSecret for Redis)" $where $key) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $b := .Values.backends -}}
{{- range $where, $url := dict "backends.s3.endpoint" $b.s3.endpoint "backends.weaviate.url" $b.weaviate.url "backends.weaviate.grpcUrl" $b.weaviate.grpcUrl "backends.mqtt.url" $b.mqtt.url "backends.redis.url" $b.redis.url "backends.llm.baseUrl" $b.llm.baseUrl "backends.vlm.baseUrl" $b.vlm.baseUrl -}}
{{- if regexMatch "://[^/@]+@" ($url | default "") -}}
{{- fail (printf "%s holds credentials in its URL, and it would land in a ConfigMap: drop them (backends.*.existingSecret names the Secret with a key; for Redis, backends.redis.existingSecret may hold the whole URL)" $where) -}}
{{- end -}}
{{- end -}}
{{- range $service, $values := .Values.services -}}
{{- if $values.enabled -}}
{{- $env := include "argus.serviceEnv" (list $ $service $values false) | fromYaml -}}
{{- $config := $env.config -}}
{{- $secretNames := list -}}
{{- range $env.secrets }}{{ $secretNames = append $secretNames .name }}{{ end -}}
{{- if and (eq $service "caption-runs") (not $config.MQTT_BROKER) -}}
{{- fail "services.caption-runs needs an MQTT broker (its caption workers publish there and the service relays them): set backends.mqtt.url, or backends.mqtt.mosquitto.enabled=true for the chart's own" -}}
{{- end -}}
{{- /* Files a run reads exist in the worker pods only through media.claimName (extraVolumes stay on the service's pods). */ -}}
{{- if eq $service "caption-runs" -}}
{{- range $where, $env := dict "env" ($.Values.env | default dict) "services.caption-runs.env" ($values.env | default dict) -}}
{{- if hasKey $env "CAPTION_RUNS_MEDIA_ROOT" -}}
{{- fail (printf "%s.CAPTION_RUNS_MEDIA_ROOT: set services.caption-runs.media.claimName instead (the chart mounts that claim in caption-runs and every caption-run worker pod, which reads the file, and sets the variable)" $where) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if eq $service "camera-rules" -}}
{{- $frigate := $values.frigate | default dict -}}
{{- $directory := $values.directory | default dict -}}
{{- if and $frigate.existingSecret (not $config.CAMERA_RULES_FRIGATE_URL) -}}
{{- fail "services.camera-rules.frigate.existingSecret holds a Frigate user for Frigate: set services.camera-rules.frigate.url too" -}}
{{- end -}}
{{- if and $config.CAMERA_RULES_FRIGATE_URL ($directory.recordings | default dict).claimName -}}
{{- fail "services.camera-rules: Frigate (frigate.url) and the recordings directory (directory.recordings.claimName) are two recorders: set one" -}}
{{- end -}}
{{- if and ($directory.detections | default dict).claimName (not ($directory.recordings | default dict).claimName) -}}
{{- fail "services.camera-rules.directory.detections.claimName holds the analyses of recordings: set directory.recordings.claimName too" -}}
{{- end -}}
{{- end -}}
{{- if and (eq $service "camera-rules") $config.CAMERA_RULES_FRIGATE_URL (not $config.MQTT_BROKER) -}}
{{- fail "services.camera-rules reads Frigate's events over MQTT: set backends.mqtt.url to Frigate's broker" -}}
{{- end -}}
{{- $scaled := or (gt (int $values.replicas) 1) (and $values.autoscaling $values.autoscaling.enabled) -}}
{{- /* caption-runs: the start claims (one run per stream and pipeline) are in the shared state. */ -}}
{{- if and $scaled (has $service (list "dataprep" "caption-qa" "alert-dispatch" "caption-runs")) -}}
{{- if not (or $config.ARGUS_REDIS_URL (has "ARGUS_REDIS_URL" $secretNames)) -}}
{{- fail (printf "services.%s: more than one replica needs Redis for what the replicas share: set backends.redis.url, backends.redis.existingSecret or backends.redis.deploy.enabled=true" $service) -}}
{{- end -}}
{{- $prefix := get (dict "dataprep" "MM_DATAPREP_" "caption-qa" "CAPTION_QA_") $service -}}
{{- if and $prefix (ne (get $config (printf "%sSTORAGE_BACKEND" $prefix)) "s3") -}}
{{- fail (printf "services.%s: more than one replica needs its media in S3, not on one pod's volume: set backends.s3.endpoint" $service) -}}
{{- end -}}
{{- if and $prefix (ne (get $config (printf "%sVECTORDB_BACKEND" $prefix)) "weaviate") -}}
{{- fail (printf "services.%s: more than one replica needs its vectors in Weaviate, not in one pod's LanceDB: set backends.weaviate.url" $service) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
