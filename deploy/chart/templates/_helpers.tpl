{{/* The name of every object: the release name, with "-gpulint" unless it already says gpulint. */}}
{{- define "gpulint.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "gpulint.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "gpulint.labels" -}}
{{ include "gpulint.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "gpulint.tlsSecretName" -}}
{{- if eq .Values.tls.mode "secret" -}}
{{- required "tls.secretName is required with tls.mode=secret" .Values.tls.secretName -}}
{{- else -}}
{{- printf "%s-tls" (include "gpulint.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/* The Service's DNS names: what the serving certificate must name. */}}
{{- define "gpulint.dnsNames" -}}
{{- $service := include "gpulint.fullname" . -}}
- {{ printf "%s.%s.svc" $service .Release.Namespace }}
- {{ printf "%s.%s.svc.cluster.local" $service .Release.Namespace }}
{{- end -}}
