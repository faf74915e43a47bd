{{/* The chart's name, and the release's full name (63 characters at most, as DNS labels are). */}}
{{- define "admitd.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "admitd.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "admitd.selectorLabels" -}}
app.kubernetes.io/name: {{ include "admitd.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "admitd.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "admitd.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "admitd.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "admitd.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Secret holding tls.crt and tls.key. */}}
{{- define "admitd.tlsSecretName" -}}
{{- if eq .Values.tls.mode "secret" }}
{{- required "tls.secretName is required with tls.mode=secret" .Values.tls.secretName }}
{{- else }}
{{- default (printf "%s-tls" (include "admitd.fullname" .)) .Values.tls.secretName }}
{{- end }}
{{- end }}

{{/* The Service's DNS name: what kube-apiserver verifies the serving certificate against. */}}
{{- define "admitd.serviceHost" -}}
{{- printf "%s.%s.svc" (include "admitd.fullname" .) .Release.Namespace }}
{{- end }}

{{/*
The namespaceSelector of both webhook configurations: admitd's own namespace and kube-system are
never sent to admitd, whatever webhook.namespaceSelector adds.
*/}}
{{- define "admitd.namespaceSelector" -}}
{{- $sel := deepCopy (default (dict) .Values.webhook.namespaceSelector) }}
{{- $exclude := dict "key" "kubernetes.io/metadata.name" "operator" "NotIn" "values" (list .Release.Namespace "kube-system") }}
{{- $_ := set $sel "matchExpressions" (prepend (default (list) $sel.matchExpressions) $exclude) }}
{{- toYaml $sel }}
{{- end }}

{{/* admitd's command line: one flag per list item. Flags admitd does not have yet are behind values that default off. */}}
{{- define "admitd.args" -}}
- --listen=0.0.0.0:{{ .Values.ports.admission }}
- --health-listen=0.0.0.0:{{ .Values.ports.health }}
- --metrics-listen=0.0.0.0:{{ .Values.ports.metrics }}
- --tls-cert-file=/etc/admitd/tls/tls.crt
- --tls-private-key-file=/etc/admitd/tls/tls.key
- --log-format={{ .Values.logFormat }}
- --v={{ .Values.verbosity }}
{{- with .Values.admission.enablePlugins }}
- --enable-admission-plugins={{ join "," . }}
{{- end }}
{{- with .Values.admission.disablePlugins }}
- --disable-admission-plugins={{ join "," . }}
{{- end }}
{{- if .Values.admission.config }}
- --admission-control-config-file=/etc/admitd/admission/admission.yaml
{{- end }}
{{- if .Values.downstreamWebhooks }}
- --webhook-config=/etc/admitd/webhooks
{{- end }}
{{- if .Values.clusterState.inCluster }}
- --in-cluster
{{- end }}
{{- range .Values.extraArgs }}
- {{ . }}
{{- end }}
{{- end }}

{{/* True (non-empty) when the chart needs a ConfigMap of admitd's own configuration. */}}
{{- define "admitd.hasConfig" -}}
{{- if or .Values.admission.config .Values.downstreamWebhooks }}true{{ end }}
{{- end }}
