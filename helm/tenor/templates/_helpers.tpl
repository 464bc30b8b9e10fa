{{/* Names and labels shared by every manifest. */}}
{{- define "tenor.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "tenor.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "tenor.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .role }}
{{- end -}}

{{- define "tenor.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The roles in a fixed order, each with its values block. */}}
{{- define "tenor.roles" -}}
{{- dict "api" .Values.apiDeployment "runner" .Values.runnerDeployment "indexer" .Values.indexerDeployment | toJson -}}
{{- end -}}

{{/*
PostgreSQL connections a pod opens beyond its pool: the runner and the indexer each hold one
reserved session for shard ownership (docs/ownership.md), the runner one more for its liveness
(docs/engine.md, "Crash recovery"); the api holds none.
test/deploy/capacity-rule.ts states the same numbers.
*/}}
{{- define "tenor.reservedPerPod" -}}
{{- $reserved := dict "api" 0 "runner" 2 "indexer" 1 -}}
{{- index $reserved . -}}
{{- end -}}

{{/* Most pods a role runs outside a rollout: the HPA's maxReplicas when autoscaling, else replicaCount. */}}
{{- define "tenor.peakReplicas" -}}
{{- if and .autoscaling .autoscaling.enabled -}}
{{- int .autoscaling.maxReplicas -}}
{{- else -}}
{{- int .replicaCount -}}
{{- end -}}
{{- end -}}

{{/* Extra pods during a rollout: maxSurge as an integer or a percentage of replicas, rounded up like Kubernetes. */}}
{{- define "tenor.surgePods" -}}
{{- $surge := .maxSurge -}}
{{- if kindIs "string" $surge -}}
{{- $pct := trimSuffix "%" $surge | int -}}
{{- div (add (mul (int .replicaCount) $pct) 99) 100 -}}
{{- else -}}
{{- int $surge -}}
{{- end -}}
{{- end -}}

{{/*
The capacity gate: refuses to render a release whose roles, at the peak of a rollout, could open
more PostgreSQL connections than the server accepts.
*/}}
{{- define "tenor.capacityGate" -}}
{{- $total := 0 -}}
{{- $parts := list -}}
{{- $roles := include "tenor.roles" . | fromJson -}}
{{- range $role := list "api" "runner" "indexer" -}}
{{- $r := index $roles $role -}}
{{- $replicas := include "tenor.peakReplicas" $r | int -}}
{{- $pods := add $replicas (include "tenor.surgePods" (dict "maxSurge" $r.maxSurge "replicaCount" $replicas) | int) -}}
{{- $perPod := add (int $r.poolMax) (include "tenor.reservedPerPod" $role | int) -}}
{{- $total = add $total (mul $pods $perPod) -}}
{{- $parts = append $parts (printf "%s %d pods × %d" $role $pods $perPod) -}}
{{- end -}}
{{- $pg := .Values.postgresql -}}
{{- $needed := add $total (int $pg.reserveConnections) -}}
{{- $allowed := sub (int $pg.maxConnections) (int $pg.headroomConnections) -}}
{{- if gt $needed $allowed -}}
{{- fail (printf "capacity gate: roles need %d PostgreSQL connections (%s, + reserve %d) but postgresql.maxConnections %d − headroom %d allows %d; lower replicas, poolMax or maxSurge, or raise max_connections" $needed (join ", " $parts) (int $pg.reserveConnections) (int $pg.maxConnections) (int $pg.headroomConnections) $allowed) -}}
{{- end -}}
{{- end -}}

{{/* Seconds Kubernetes waits after preStop starts: the hook, the drain bound, and a margin for exit. */}}
{{- define "tenor.terminationGracePeriodSeconds" -}}
{{- add (int .Values.shutdown.preStopSeconds) (div (add (int .Values.shutdown.graceMs) 999) 1000) 5 -}}
{{- end -}}

{{/* Environment every Tenor container gets: connection strings from the Secret. */}}
{{- define "tenor.connectionEnv" -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.secrets.existingSecret }}
      key: {{ .Values.secrets.databaseUrlKey }}
- name: REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.secrets.existingSecret }}
      key: {{ .Values.secrets.redisUrlKey }}
{{- if .Values.secrets.databaseSessionUrlKey }}
- name: TENOR_DATABASE_SESSION_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.secrets.existingSecret }}
      key: {{ .Values.secrets.databaseSessionUrlKey }}
{{- end }}
{{- end -}}

{{- /*
The migration Job's connection: the direct session URL when one is set, since the schema engine
locks across statements and must not go through a transaction-mode PgBouncer; else DATABASE_URL.
*/ -}}
{{- define "tenor.migrationEnv" -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.secrets.existingSecret }}
      key: {{ .Values.secrets.databaseSessionUrlKey | default .Values.secrets.databaseUrlKey }}
{{- end -}}

{{/* The ServiceAccount every pod runs as: the chart's own unless serviceAccount.name names another. */}}
{{- define "tenor.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "tenor.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}
