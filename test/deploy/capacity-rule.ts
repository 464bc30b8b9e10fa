/**
 * The Helm chart's capacity gate (helm/tenor/templates/_helpers.tpl, `tenor.capacityGate`) as a
 * TypeScript function over the chart's values: at the peak of a rollout every role runs
 * replicaCount (an HPA's maxReplicas when autoscaling is on) + maxSurge pods, each opening its pool plus its reserved sessions; that sum plus
 * the reserve must fit in PostgreSQL's max_connections minus the headroom. helm-chart.int.test.ts
 * checks that Helm and this function agree on every values file it renders.
 */

export const CHART_ROLES = ["api", "runner", "indexer"] as const;
export type ChartRole = (typeof CHART_ROLES)[number];

/**
 * Connections a pod holds outside its pool: one shard-ownership session on runner and indexer,
 * and the runner's liveness session.
 */
export const RESERVED_SESSIONS_PER_POD: Readonly<Record<ChartRole, number>> = {
  api: 0,
  runner: 2,
  indexer: 1,
};

export interface RoleValues {
  replicaCount: number;
  poolMax: number;
  maxSurge: number | string;
  autoscaling?: { enabled: boolean; maxReplicas: number };
}

export interface ChartValues {
  postgresql: { maxConnections: number; headroomConnections: number; reserveConnections: number };
  apiDeployment: RoleValues;
  runnerDeployment: RoleValues;
  indexerDeployment: RoleValues;
}

/** Extra pods of a rolling update; a percentage rounds up, as Kubernetes does for maxSurge. */
export function surgePods(replicas: number, maxSurge: number | string): number {
  if (typeof maxSurge === "number") return maxSurge;
  return Math.ceil((replicas * Number.parseInt(maxSurge, 10)) / 100);
}

/** Connections the release may open at once (`needed`) and what PostgreSQL leaves it (`allowed`). */
export function connectionBudget(values: ChartValues): { needed: number; allowed: number; fits: boolean } {
  let needed = values.postgresql.reserveConnections;
  for (const role of CHART_ROLES) {
    const r = values[`${role}Deployment`];
    const replicas = r.autoscaling?.enabled ? r.autoscaling.maxReplicas : r.replicaCount;
    needed += (replicas + surgePods(replicas, r.maxSurge)) * (r.poolMax + RESERVED_SESSIONS_PER_POD[role]);
  }
  const allowed = values.postgresql.maxConnections - values.postgresql.headroomConnections;
  return { needed, allowed, fits: needed <= allowed };
}
