import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { parse, parseAllDocuments, stringify } from "yaml";
import { loadConfig } from "../../src/config/index.js";
import { helmBinary } from "../support/helm-binary.js";
import { CHART_ROLES, type ChartValues, connectionBudget, type RoleValues } from "./capacity-rule.js";

/**
 * helm/tenor rendered by the real Helm binary: lint, default and production-like values, the
 * schema refusing unknown keys, the capacity gate refusing an over-committed release (and agreeing
 * with capacity-rule.ts on every file), and the contracts of the rendered manifests.
 */

const run = promisify(execFile);
const root = new URL("../../", import.meta.url).pathname;
const chart = join(root, "helm/tenor");
const productionValues = join(chart, "ci/production-values.yaml");
const overcommittedValues = join(root, "test/deploy/fixtures/helm-overcommitted-values.yaml");
const scratch = mkdtempSync(join(tmpdir(), "tenor-helm-"));
let helm: string;

// biome-ignore lint/suspicious/noExplicitAny: rendered Kubernetes objects are checked field by field
type Manifest = Record<string, any>;

beforeAll(() => {
  helm = helmBinary();
});

async function helmRun(args: string[]): Promise<{ ok: boolean; out: string }> {
  try {
    const { stdout } = await run(helm, args, { maxBuffer: 16 * 1024 * 1024 });
    return { ok: true, out: stdout };
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string };
    return { ok: false, out: `${e.stdout ?? ""}${e.stderr ?? ""}` };
  }
}

async function render(...valueFiles: string[]): Promise<Manifest[]> {
  const result = await helmRun(["template", "rel", chart, ...valueFiles.flatMap((f) => ["-f", f])]);
  if (!result.ok) throw new Error(result.out);
  return parseAllDocuments(result.out)
    .map((doc) => doc.toJS() as Manifest | null)
    .filter((m): m is Manifest => m !== null);
}

/** A values file with `edit` applied over the chart's defaults merged with `base` files. */
function valuesFile(
  name: string,
  edit: (values: ChartValues & Record<string, unknown>) => void,
  ...base: string[]
) {
  const values = parse(readFileSync(join(chart, "values.yaml"), "utf8"));
  for (const file of base) deepMerge(values, parse(readFileSync(file, "utf8")));
  edit(values);
  const path = join(scratch, `${name}.yaml`);
  writeFileSync(path, stringify(values));
  return path;
}

function deepMerge(target: Record<string, unknown>, source: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(source)) {
    const current = target[key];
    if (
      typeof value === "object" &&
      value !== null &&
      !Array.isArray(value) &&
      typeof current === "object" &&
      current !== null
    ) {
      deepMerge(current as Record<string, unknown>, value as Record<string, unknown>);
    } else target[key] = value;
  }
}

const byKind = (manifests: Manifest[], kind: string) => manifests.filter((m) => m.kind === kind);
const envOf = (container: Manifest): Manifest =>
  Object.fromEntries(
    (container.env as { name: string; value?: string; valueFrom?: unknown }[]).map((e) => [e.name, e]),
  );

describe("helm/tenor", () => {
  it("passes helm lint with default and production-like values", async () => {
    const lint = await helmRun(["lint", chart, "--strict"]);
    expect(lint.out).toContain("0 chart(s) failed");
    const production = await helmRun(["lint", chart, "--strict", "-f", productionValues]);
    expect(production.out).toContain("0 chart(s) failed");
  });

  it("renders one Deployment per role with its role, probes, secrets, pool and termination bound", async () => {
    for (const files of [[], [productionValues]]) {
      const manifests = await render(...files);
      const values = parse(readFileSync(files[0] ?? join(chart, "values.yaml"), "utf8"));
      const deployments = byKind(manifests, "Deployment");
      expect(deployments.map((d) => d.metadata.name).sort()).toEqual([
        "rel-tenor-api",
        "rel-tenor-indexer",
        "rel-tenor-runner",
      ]);
      const graceMs = values.shutdown.graceMs as number;
      for (const role of CHART_ROLES) {
        const roleValues = values[`${role}Deployment`];
        const d = deployments.find((m) => m.metadata.name === `rel-tenor-${role}`)!;
        expect(d.spec.replicas).toBe(roleValues.replicaCount);
        const pod = d.spec.template.spec;
        expect(pod.securityContext.runAsNonRoot).toBe(true);
        const [container] = pod.containers;
        const env = envOf(container);
        expect(env.DAPI_ROLE.value).toBe(role);
        expect(env.TENOR_DATABASE_POOL_MAX.value).toBe(String(roleValues.poolMax));
        expect(env.DATABASE_URL.valueFrom.secretKeyRef.name).toBe(values.secrets.existingSecret);
        expect(env.REDIS_URL.valueFrom.secretKeyRef.name).toBe(values.secrets.existingSecret);
        expect(container.readinessProbe.httpGet.path).toBe("/readyz");
        expect(container.livenessProbe.httpGet.path).toBe("/livez");
        expect(container.ports[0].containerPort).toBe(roleValues.port);
        expect(container.lifecycle.preStop.exec.command[0]).toBe("sleep");
        // SIGKILL must not cut the drain short: preStop, then the whole grace period, fit.
        const preStop = Number(container.lifecycle.preStop.exec.command[1]);
        expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(preStop * 1000 + graceMs);
        const secretsFrom = (container.envFrom ?? []).map(
          (e: { secretRef: { name: string } }) => e.secretRef.name,
        );
        const expected = [
          ...(role === "runner" && values.secrets.signerKeysSecret ? [values.secrets.signerKeysSecret] : []),
          ...(role !== "indexer" && values.secrets.webhookKeysSecret
            ? [values.secrets.webhookKeysSecret]
            : []),
        ];
        expect(secretsFrom).toEqual(expected);
      }
    }
  });

  it("writes a ConfigMap the roles' own config loader accepts, with the chart's grace period", async () => {
    const manifests = await render(productionValues);
    const [configMap] = byKind(manifests, "ConfigMap");
    const deployment = byKind(manifests, "Deployment").find((d) => d.metadata.name === "rel-tenor-runner")!;
    const container = deployment.spec.template.spec.containers[0];
    const env = envOf(container);
    const mount = container.volumeMounts.find((m: { name: string }) => m.name === "config");
    expect(env.TENOR_CONFIG.value).toBe(`${mount.mountPath}/tenor.yaml`);
    const config = loadConfig({
      env: {
        DATABASE_URL: "postgresql://tenor@db:5432/tenor",
        REDIS_URL: "redis://redis:6379",
        TENOR_CONFIG: env.TENOR_CONFIG.value,
        TENOR_DATABASE_POOL_MAX: env.TENOR_DATABASE_POOL_MAX.value,
        TENOR_RUNNER_HEALTH_PORT: env.TENOR_RUNNER_HEALTH_PORT.value,
      },
      readFile: () => configMap!.data["tenor.yaml"],
    });
    expect(config.shutdown.graceMs).toBe(25_000);
    expect(config.durable.runnerConcurrency).toBe(200);
    expect(config.database.poolMax).toBe(20);
    expect(config.runner.healthPort).toBe(3001);
  });

  it("runs migrations in a pre-install/pre-upgrade Job from compiled code, with the connection Secret", async () => {
    const manifests = await render();
    const [job] = byKind(manifests, "Job");
    expect(job!.metadata.annotations!["helm.sh/hook"]).toBe("pre-install,pre-upgrade");
    expect(job!.metadata.annotations!["helm.sh/hook-weight"]).toBe("0");
    const container = job!.spec.template.spec.containers[0];
    expect(container.command).toEqual(["node", "dist/scripts/db/migrate.js"]);
    expect(envOf(container).DATABASE_URL.valueFrom.secretKeyRef.name).toBe("tenor-connections");
    expect(job!.spec.template.spec.restartPolicy).toBe("Never");
  });

  it("renders a created Secret as an earlier hook than the migration Job", async () => {
    const file = valuesFile("created-secret", (v) => {
      Object.assign(v.secrets as object, {
        create: true,
        databaseUrl: "postgresql://u@db/t",
        redisUrl: "redis://r:6379",
      });
    });
    const [secret] = byKind(await render(file), "Secret");
    expect(secret!.metadata.annotations!["helm.sh/hook"]).toBe("pre-install,pre-upgrade");
    expect(Number(secret!.metadata.annotations!["helm.sh/hook-weight"])).toBeLessThan(0);
  });

  it("sends the reserved sessions and the migration Job to secrets.databaseSessionUrlKey, and can turn named statements off", async () => {
    const defaults = await render();
    for (const deployment of byKind(defaults, "Deployment")) {
      const env = envOf(deployment.spec.template.spec.containers[0]);
      expect(env.TENOR_DATABASE_SESSION_URL).toBeUndefined();
      expect(env.TENOR_DATABASE_NAMED_STATEMENTS).toBeUndefined();
    }
    const file = valuesFile("pgbouncer", (v) => {
      Object.assign(v.secrets as object, {
        create: true,
        databaseUrl: "postgresql://u@pgbouncer:6432/t",
        redisUrl: "redis://r:6379",
        databaseSessionUrlKey: "DATABASE_SESSION_URL",
        databaseSessionUrl: "postgresql://u@db:5432/t",
      });
      Object.assign(v, { database: { namedStatements: false } });
    });
    const manifests = await render(file);
    for (const deployment of byKind(manifests, "Deployment")) {
      const env = envOf(deployment.spec.template.spec.containers[0]);
      expect(env.DATABASE_URL.valueFrom.secretKeyRef.key).toBe("DATABASE_URL");
      expect(env.TENOR_DATABASE_SESSION_URL.valueFrom.secretKeyRef).toEqual({
        name: "tenor-connections",
        key: "DATABASE_SESSION_URL",
      });
      expect(env.TENOR_DATABASE_NAMED_STATEMENTS.value).toBe("false");
    }
    const [job] = byKind(manifests, "Job");
    expect(envOf(job!.spec.template.spec.containers[0]).DATABASE_URL.valueFrom.secretKeyRef.key).toBe(
      "DATABASE_SESSION_URL",
    );
    const [secret] = byKind(manifests, "Secret");
    expect(secret!.stringData).toMatchObject({ DATABASE_SESSION_URL: "postgresql://u@db:5432/t" });
  });

  it("gives every role a PodDisruptionBudget and a Service that select its pods", async () => {
    const manifests = await render();
    for (const role of CHART_ROLES) {
      const pods = byKind(manifests, "Deployment").find((d) => d.metadata.name === `rel-tenor-${role}`)!.spec
        .template.metadata.labels;
      const pdb = byKind(manifests, "PodDisruptionBudget").find(
        (m) => m.metadata.name === `rel-tenor-${role}`,
      )!;
      expect(pdb.spec.selector.matchLabels).toEqual(pods);
      const service = byKind(manifests, "Service").find((m) => m.metadata.name === `rel-tenor-${role}`)!;
      expect(service.spec.selector).toEqual(pods);
    }
  });

  it("renders the ServiceMonitor only when enabled, scraping /metrics", async () => {
    expect(byKind(await render(), "ServiceMonitor")).toEqual([]);
    const [monitor] = byKind(await render(productionValues), "ServiceMonitor");
    expect(monitor!.spec.endpoints[0].path).toBe("/metrics");
    expect(monitor!.metadata.labels.release).toBe("prometheus");
  });

  it("scrapes the api's metrics on its health port, never on the public API port", async () => {
    const manifests = await render(productionValues);
    const [monitor] = byKind(manifests, "ServiceMonitor");
    expect(monitor!.spec.endpoints.map((e: Manifest) => e.port)).toEqual(["metrics"]);
    const api = byKind(manifests, "Deployment").find((d) => d.metadata.name === "rel-tenor-api")!;
    const container = api.spec.template.spec.containers[0];
    expect(envOf(container).TENOR_API_HEALTH_PORT.value).toBe("3003");
    expect(container.ports).toEqual([
      { name: "http", containerPort: 3000 },
      { name: "metrics", containerPort: 3003 },
    ]);
    for (const role of CHART_ROLES) {
      const service = byKind(manifests, "Service").find((m) => m.metadata.name === `rel-tenor-${role}`)!;
      const metrics = service.spec.ports.find((p: Manifest) => p.name === "metrics");
      expect(metrics.targetPort, role).toBe(role === "api" ? "metrics" : "http");
    }
  });

  it("passes the tracing endpoint and the commit to every role only when set", async () => {
    const envOf = (deployment: Manifest) =>
      Object.fromEntries(
        (deployment.spec.template.spec.containers[0].env as { name: string; value?: string }[]).map((e) => [
          e.name,
          e.value,
        ]),
      );
    for (const deployment of byKind(await render(), "Deployment")) {
      expect(Object.keys(envOf(deployment)).filter((name) => /^OTEL_|^TENOR_COMMIT$/.test(name))).toEqual([]);
    }
    const traced = valuesFile("traced", (v) => {
      v.tracing = { otlpEndpoint: "http://collector:4318", protocol: "http/json", commit: "abc123" };
    });
    const deployments = byKind(await render(traced), "Deployment");
    expect(deployments).toHaveLength(3);
    for (const deployment of deployments) {
      expect(envOf(deployment)).toMatchObject({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        TENOR_COMMIT: "abc123",
      });
    }
    const badProtocol = valuesFile("bad-protocol", (v) => {
      v.tracing = { otlpEndpoint: "http://collector:4318", protocol: "udp", commit: "" };
    });
    expect((await helmRun(["template", "rel", chart, "-f", badProtocol])).out).toMatch(/protocol/);
  });

  it("refuses unknown keys and keys the chart sets itself (values.schema.json)", async () => {
    const typo = valuesFile("typo", (v) => {
      (v.runnerDeployment as unknown as Record<string, unknown>).replicas = 3;
    });
    const result = await helmRun(["template", "rel", chart, "-f", typo]);
    expect(result.ok).toBe(false);
    expect(result.out).toContain("Additional property replicas is not allowed");
    const duplicated = valuesFile("duplicated", (v) => {
      (v.config as Record<string, unknown>).shutdown = { graceMs: 1 };
    });
    expect((await helmRun(["template", "rel", chart, "-f", duplicated])).ok).toBe(false);
  });

  it("validates config: against the configuration schema at render, accepting the chart's own values files", async () => {
    const ciValues = readdirSync(join(chart, "ci")).map((f) => join(chart, "ci", f));
    for (const file of [join(chart, "values.yaml"), ...ciValues]) {
      const lint = await helmRun(["lint", chart, "--strict", "-f", file]);
      expect(lint.out, file).toContain("0 chart(s) failed");
    }
    const misspelt = valuesFile("config-misspelt", (v) => {
      (v.config as Record<string, unknown>).durable = { runnerConcurency: 50 };
    });
    const lint = await helmRun(["lint", chart, "--strict", "-f", misspelt]);
    expect(lint.ok).toBe(false);
    expect(lint.out).toContain("runnerConcurency");
    const wrongType = valuesFile("config-wrong-type", (v) => {
      (v.config as Record<string, unknown>).webhooks = { maxAttempts: "many" };
    });
    const template = await helmRun(["template", "rel", chart, "-f", wrongType]);
    expect(template.ok).toBe(false);
    expect(template.out).toMatch(/config\.webhooks\.maxAttempts/);
    const outOfRange = valuesFile("config-out-of-range", (v) => {
      (v.config as Record<string, unknown>).logLevel = "verbose";
    });
    expect((await helmRun(["template", "rel", chart, "-f", outOfRange])).ok).toBe(false);
  });

  it("the capacity gate refuses an over-committed release, naming the numbers", async () => {
    const result = await helmRun(["template", "rel", chart, "-f", overcommittedValues]);
    expect(result.ok).toBe(false);
    expect(result.out).toContain("capacity gate: roles need 472 PostgreSQL connections");
    expect(result.out).toContain("allows 190");
  });

  it("agrees with capacity-rule.ts on every values file, at the boundary too", async () => {
    const atLimit = (extra: number) =>
      valuesFile(
        `limit-${extra}`,
        (v) => {
          const { needed } = connectionBudget(v);
          v.postgresql.maxConnections = needed + v.postgresql.headroomConnections - extra;
        },
        productionValues,
      );
    const cases = [
      [join(chart, "values.yaml")],
      [productionValues],
      [overcommittedValues],
      [atLimit(0)],
      [atLimit(1)],
    ];
    const verdicts = await Promise.all(
      cases.map(async ([file]) => {
        const values = valuesFile(`case-${cases.findIndex((c) => c[0] === file)}`, () => undefined, file!);
        const expected = connectionBudget(parse(readFileSync(values, "utf8"))).fits;
        const rendered = (await helmRun(["template", "rel", chart, "-f", values])).ok;
        return [expected, rendered];
      }),
    );
    expect(verdicts).toEqual([
      [true, true],
      [true, true],
      [false, false],
      [true, true],
      [false, false],
    ]);
  });

  it("adds extraEnv, extraEnvFrom, extraVolumes/extraVolumeMounts and the config Secret to every role", async () => {
    const file = valuesFile("extras", (v) => {
      (v.secrets as Record<string, unknown>).configSecret = "tenor-config";
      Object.assign(v, {
        extraEnv: [{ name: "OTEL_TRACES_SAMPLER", value: "parentbased_traceidratio" }],
        extraEnvFrom: [{ secretRef: { name: "tenor-otel-headers" } }],
        extraVolumes: [{ name: "evidence-key", secret: { secretName: "tenor-evidence-key" } }],
        extraVolumeMounts: [
          { name: "evidence-key", mountPath: "/etc/tenor-secrets/evidence", readOnly: true },
        ],
      });
    });
    const deployments = byKind(await render(file), "Deployment");
    expect(deployments).toHaveLength(3);
    for (const deployment of deployments) {
      const pod = deployment.spec.template.spec;
      const [container] = pod.containers;
      expect(envOf(container).OTEL_TRACES_SAMPLER.value).toBe("parentbased_traceidratio");
      const from = container.envFrom.map((e: Manifest) => e.secretRef.name);
      expect(from).toContain("tenor-config");
      expect(from).toContain("tenor-otel-headers");
      expect(pod.volumes).toContainEqual({
        name: "evidence-key",
        secret: { secretName: "tenor-evidence-key" },
      });
      expect(container.volumeMounts).toContainEqual({
        name: "evidence-key",
        mountPath: "/etc/tenor-secrets/evidence",
        readOnly: true,
      });
      expect(container.volumeMounts.map((m: Manifest) => m.name)).toContain("config");
    }
  });

  it("runs every pod as the chart's ServiceAccount, created first as a hook, or as a named one", async () => {
    const manifests = await render();
    const [account] = byKind(manifests, "ServiceAccount");
    expect(account!.metadata.name).toBe("rel-tenor");
    expect(Number(account!.metadata.annotations["helm.sh/hook-weight"])).toBeLessThan(0);
    const pods = [...byKind(manifests, "Deployment"), ...byKind(manifests, "Job")].map(
      (m) => m.spec.template.spec,
    );
    expect(pods).toHaveLength(4);
    for (const pod of pods) {
      expect(pod.serviceAccountName).toBe("rel-tenor");
      expect(pod.automountServiceAccountToken).toBe(false);
    }
    const named = valuesFile("named-sa", (v) => {
      Object.assign(v, { serviceAccount: { create: false, name: "platform-tenor", annotations: {} } });
    });
    const existing = await render(named);
    expect(byKind(existing, "ServiceAccount")).toEqual([]);
    for (const m of [...byKind(existing, "Deployment"), ...byKind(existing, "Job")]) {
      expect(m.spec.template.spec.serviceAccountName).toBe("platform-tenor");
    }
  });

  it("renders an Ingress to the api's public port only when enabled", async () => {
    expect(byKind(await render(), "Ingress")).toEqual([]);
    const file = valuesFile("ingress", (v) => {
      Object.assign(v, {
        ingress: {
          enabled: true,
          className: "nginx",
          annotations: { "nginx.ingress.kubernetes.io/proxy-read-timeout": "300" },
          hosts: [{ host: "api.tenor.test", paths: [{ path: "/", pathType: "Prefix" }] }],
          tls: [{ secretName: "tenor-tls", hosts: ["api.tenor.test"] }],
        },
      });
    });
    const [ingress] = byKind(await render(file), "Ingress");
    expect(ingress!.apiVersion).toBe("networking.k8s.io/v1");
    expect(ingress!.spec.ingressClassName).toBe("nginx");
    expect(ingress!.spec.tls).toEqual([{ secretName: "tenor-tls", hosts: ["api.tenor.test"] }]);
    const [rule] = ingress!.spec.rules;
    expect(rule.host).toBe("api.tenor.test");
    expect(rule.http.paths[0].backend.service).toEqual({ name: "rel-tenor-api", port: { name: "http" } });
  });

  it("gives each role a PodDisruptionBudget of maxUnavailable 1 by default, and none when disabled", async () => {
    const pdbs = byKind(await render(), "PodDisruptionBudget");
    expect(pdbs.map((p) => [p.metadata.name, p.spec.maxUnavailable, p.spec.minAvailable])).toEqual([
      ["rel-tenor-api", 1, undefined],
      ["rel-tenor-runner", 1, undefined],
      ["rel-tenor-indexer", 1, undefined],
    ]);
    const file = valuesFile("no-indexer-pdb", (v) => {
      (
        v.indexerDeployment as unknown as { podDisruptionBudget: { enabled: boolean } }
      ).podDisruptionBudget.enabled = false;
    });
    expect(byKind(await render(file), "PodDisruptionBudget").map((p) => p.metadata.name)).toEqual([
      "rel-tenor-api",
      "rel-tenor-runner",
    ]);
  });

  it("renders autoscaling/v2 HPAs for api and runners only when enabled, leaving them the replica count", async () => {
    const defaults = await render();
    expect(byKind(defaults, "HorizontalPodAutoscaler")).toEqual([]);
    for (const d of byKind(defaults, "Deployment")) expect(d.spec.replicas).toBeTypeOf("number");
    const hpa = { enabled: true, minReplicas: 2, maxReplicas: 5, targetCPUUtilizationPercentage: 60 };
    const file = valuesFile("hpa", (v) => {
      v.apiDeployment.autoscaling = hpa;
      v.runnerDeployment.autoscaling = hpa;
      v.postgresql.maxConnections = 400;
    });
    const manifests = await render(file);
    const hpas = byKind(manifests, "HorizontalPodAutoscaler");
    expect(hpas.map((h) => h.metadata.name)).toEqual(["rel-tenor-api", "rel-tenor-runner"]);
    for (const hpa of hpas) {
      expect(hpa.apiVersion).toBe("autoscaling/v2");
      expect(hpa.spec.scaleTargetRef).toEqual({
        apiVersion: "apps/v1",
        kind: "Deployment",
        name: hpa.metadata.name,
      });
      expect([hpa.spec.minReplicas, hpa.spec.maxReplicas]).toEqual([2, 5]);
      expect(hpa.spec.metrics[0].resource).toEqual({
        name: "cpu",
        target: { type: "Utilization", averageUtilization: 60 },
      });
      const deployment = byKind(manifests, "Deployment").find((d) => d.metadata.name === hpa.metadata.name)!;
      expect(deployment.spec.replicas).toBeUndefined();
    }
    expect(
      byKind(manifests, "Deployment").find((d) => d.metadata.name === "rel-tenor-indexer")!.spec.replicas,
    ).toBe(1);
  });

  it("prices an HPA's maxReplicas in the capacity gate, as capacity-rule.ts does", async () => {
    const file = valuesFile("hpa-overcommitted", (v) => {
      v.runnerDeployment.autoscaling = {
        enabled: true,
        minReplicas: 2,
        maxReplicas: 20,
        targetCPUUtilizationPercentage: 70,
      } as RoleValues["autoscaling"];
    });
    const values = parse(readFileSync(file, "utf8"));
    expect(connectionBudget(values).fits).toBe(false);
    const result = await helmRun(["template", "rel", chart, "-f", file]);
    expect(result.ok).toBe(false);
    expect(result.out).toContain(
      `capacity gate: roles need ${connectionBudget(values).needed} PostgreSQL connections`,
    );
  });
});
