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

{{/* What the chart knows of each service: its port, base path and the variables that make it listen on the pod IP. */}}
{{- define "argus.serviceFacts" -}}
dataprep:
  port: 6007
  basePath: /v1/dataprep
  hostVariable: MM_DATAPREP_HOST
  portVariable: MM_DATAPREP_HOST_PORT
alert-dispatch:
  port: 8000
  basePath: /api/v1
  hostVariable: ALERT_DISPATCH_HOST
  portVariable: ALERT_DISPATCH_PORT
{{- end -}}

{{/* One service's facts, failing on a service the chart does not know: pass (list $ "name"). */}}
{{- define "argus.service" -}}
{{- $facts := include "argus.serviceFacts" (index . 0) | fromYaml -}}
{{- $name := index . 1 -}}
{{- if not (hasKey $facts $name) -}}
{{- fail (printf "services.%s: unknown service (known: %s)" $name (keys $facts | sortAlpha | join ", ")) -}}
{{- end -}}
{{- index $facts $name | toYaml -}}
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
