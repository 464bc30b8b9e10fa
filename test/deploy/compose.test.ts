import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { DEV_WEBHOOK_KEY, DEV_WEBHOOK_KEY_ENV, QUICK_START_DEFAULTS } from "../../scripts/dev-defaults.js";
import { loadEvidenceSigningKey } from "../../src/api/evidence/signing-key.js";
import { loadConfig } from "../../src/config/index.js";
import {
  composeViolations,
  dockerfileStages,
  dockerfileViolations,
  packageViolations,
} from "./deploy-contract.js";

/**
 * docker-compose.yml and the Dockerfile keep the deployment contract (docs/architecture.md,
 * "Roles"; docs/operations.md). No Docker engine runs here, so the files are parsed; each rule is
 * also shown to fail on a broken copy.
 */

const root = new URL("../../", import.meta.url);
const composeText = readFileSync(new URL("docker-compose.yml", root), "utf8");
const dockerfileText = readFileSync(new URL("Dockerfile", root), "utf8");
// Compose supports YAML merge keys (`<<: *anchor`); the file uses them to share one image.
const loadCompose = (): Record<string, Record<string, Record<string, unknown>>> =>
  parse(composeText, { merge: true });

/** The compose document after `breakIt` has edited a fresh copy. */
function brokenCompose(breakIt: (services: Record<string, Record<string, unknown>>) => void) {
  const doc = loadCompose();
  breakIt(doc.services!);
  return composeViolations(doc);
}

describe("docker-compose.yml", () => {
  it("keeps the whole contract", () => {
    expect(composeViolations(loadCompose())).toEqual([]);
  });

  it.each([
    [
      "redis without append-only",
      (s) => (s.redis!.command = "redis-server --maxmemory-policy noeviction"),
      "--appendonly yes",
    ],
    [
      "redis with an eviction policy",
      (s) =>
        (s.redis!.command = ["redis-server", "--appendonly", "yes", "--maxmemory-policy", "allkeys-lru"]),
      "noeviction",
    ],
    ["postgres without healthcheck", (s) => delete s.postgres!.healthcheck, "postgres: healthcheck"],
    ["redis without healthcheck", (s) => delete s.redis!.healthcheck, "redis: healthcheck"],
    [
      "redis healthcheck disabled",
      (s) => (s.redis!.healthcheck = { disable: true, test: ["CMD", "redis-cli", "ping"] }),
      "redis: healthcheck",
    ],
    ["migrate restarting", (s) => (s.migrate!.restart = "on-failure"), "migrate: restart"],
    [
      "migrate running something else",
      (s) => (s.migrate!.command = ["node", "dist/workers/main.js"]),
      "migrate: command",
    ],
    [
      "migrate through npm and tsx",
      (s) => (s.migrate!.command = ["npm", "run", "db:migrate"]),
      "migrate: command must run compiled JavaScript",
    ],
    [
      "runner built from another image",
      (s) => (s.runner!.image = "tenor-runner:local"),
      "runner: image/build differs",
    ],
    [
      "migrate built differently",
      (s) => (s.migrate!.build = { context: "./migrations" }),
      "migrate: image/build differs",
    ],
    [
      "indexer running as runner",
      (s) => ((s.indexer!.environment as Record<string, string>).DAPI_ROLE = "runner"),
      "indexer: DAPI_ROLE is runner",
    ],
    [
      "api without DAPI_ROLE",
      (s) => delete (s.api!.environment as Record<string, string>).DAPI_ROLE,
      "api: DAPI_ROLE is undefined",
    ],
    [
      "a combined role",
      (s) => (s.all = { environment: ["DAPI_ROLE=all"] }),
      "all: DAPI_ROLE=all is not one of",
    ],
    [
      "api not waiting for migrate",
      (s) => delete (s.api!.depends_on as Record<string, unknown>).migrate,
      "api: must depend on migrate",
    ],
    [
      "runner waiting only for redis to start",
      (s) => (s.runner!.depends_on = ["redis", "postgres", "migrate"]),
      "runner: must depend on redis with service_healthy",
    ],
    [
      "indexer not waiting for healthy postgres",
      (s) => ((s.indexer!.depends_on as Record<string, unknown>).postgres = { condition: "service_started" }),
      "indexer: must depend on postgres",
    ],
    [
      "runner healthcheck on /livez",
      (s) => (s.runner!.healthcheck = { test: ["CMD", "curl", "-f", "http://127.0.0.1:3001/livez"] }),
      "runner: healthcheck does not hit /readyz",
    ],
    [
      "api on a local database",
      (s) =>
        (s.api!.environment = {
          DAPI_ROLE: "api",
          DATABASE_URL: "postgresql://localhost/x",
          REDIS_URL: "redis://redis:6379",
        }),
      "api: DATABASE_URL",
    ],
  ] satisfies [string, (s: Record<string, Record<string, unknown>>) => unknown, string][])(
    "fails for %s",
    (_name, breakIt, expected) => {
      const violations = brokenCompose((services) => {
        breakIt(services);
      });
      expect(violations.join("\n")).toContain(expected);
    },
  );
});

describe("docker-compose.yml for development", () => {
  const services = () => loadCompose().services!;

  it("publishes Redis and PostgreSQL on loopback at the quick start's default URLs", () => {
    const { redis, postgres } = services();
    expect(redis!.ports).toEqual(["127.0.0.1:6379:6379"]);
    expect(postgres!.ports).toEqual(["127.0.0.1:5432:5432"]);
    const database = new URL(QUICK_START_DEFAULTS.DATABASE_URL);
    const env = postgres!.environment as Record<string, string>;
    expect([database.hostname, database.port]).toEqual(["127.0.0.1", "5432"]);
    expect(database.username).toBe(env.POSTGRES_USER);
    expect(database.pathname).toBe(`/${env.POSTGRES_DB}`);
    // The default URL carries no password: the development server must not ask for one.
    expect(database.password).toBe("");
    expect(env.POSTGRES_HOST_AUTH_METHOD).toBe("trust");
    expect(String((postgres!.healthcheck as { test: string[] }).test)).toContain(
      `-U ${env.POSTGRES_USER} -d ${env.POSTGRES_DB}`,
    );
    const redisUrl = new URL(QUICK_START_DEFAULTS.REDIS_URL);
    expect(`${redisUrl.hostname}:${redisUrl.port}:6379`).toBe((redis!.ports as string[])[0]);
    // The roles reach the same database by the service's name.
    for (const role of ["api", "runner", "indexer"]) {
      const roleDb = new URL((services()[role]!.environment as Record<string, string>).DATABASE_URL!);
      expect([roleDb.username, roleDb.pathname], role).toEqual([database.username, database.pathname]);
    }
  });

  it("gives the roles a development configuration the real config loader accepts, with evidence signing and a webhook key", () => {
    for (const role of ["api", "runner", "indexer"]) {
      const service = services()[role]!;
      const env = service.environment as Record<string, string>;
      // The mount: host directory → container directory, as Docker would resolve it.
      const [hostDir, containerDir] = String((service.volumes as string[])[0]).split(":") as [string, string];
      const readFile = (path: string) => {
        expect(path.startsWith(`${containerDir}/`), path).toBe(true);
        return readFileSync(
          new URL(`${hostDir.replace(/^\.\//, "")}${path.slice(containerDir.length)}`, root),
          "utf8",
        );
      };
      const config = loadConfig({ env, readFile });
      expect(config.webhooks.secretKeys).toEqual([{ id: "dev", key: { env: DEV_WEBHOOK_KEY_ENV } }]);
      expect(env[DEV_WEBHOOK_KEY_ENV]).toBe(DEV_WEBHOOK_KEY);
      expect(Buffer.from(env[DEV_WEBHOOK_KEY_ENV]!, "base64")).toHaveLength(32);
      const signingKey = loadEvidenceSigningKey(config, { env, readFile });
      expect(signingKey?.asymmetricKeyType).toBe("ed25519");
    }
  });
});

describe("Dockerfile", () => {
  it("keeps the whole contract", () => {
    expect(dockerfileStages(dockerfileText).length).toBeGreaterThanOrEqual(2);
    expect(dockerfileViolations(dockerfileText)).toEqual([]);
  });

  /** The Dockerfile with its final stage edited by `edit` (earlier stages untouched). */
  function withFinalStage(edit: (finalStage: string) => string): string {
    const start = dockerfileText.lastIndexOf("\nFROM ");
    return dockerfileText.slice(0, start) + edit(dockerfileText.slice(start));
  }

  it.each([
    ["a single stage", () => dockerfileText.slice(dockerfileText.lastIndexOf("\nFROM ")), "multi-stage"],
    ["no USER in the final stage", () => withFinalStage((s) => s.replace(/^USER .*$/m, "")), "runs as root"],
    ["USER root in the final stage", () => withFinalStage((s) => `${s}\nUSER root\n`), "runs as root"],
    [
      "a USER only in the build stage",
      () => `${dockerfileText.replace(/^USER .*$/m, "")}`.replace("WORKDIR /app", "WORKDIR /app\nUSER node"),
      "runs as root",
    ],
    [
      "CMD running source",
      () =>
        withFinalStage((s) => s.replace(/^CMD .*$/m, 'CMD ["node", "--import", "tsx", "workers/main.ts"]')),
      "CMD must be",
    ],
    [
      "dev dependencies installed",
      () => withFinalStage((s) => s.replace("npm ci --omit=dev", "npm ci")),
      "installs dev dependencies",
    ],
    [
      "node_modules copied from build",
      () => withFinalStage((s) => `${s}\nCOPY --from=build /app/node_modules ./node_modules\n`),
      "copies node_modules",
    ],
    [
      "the source tree copied",
      () => withFinalStage((s) => `${s}\nCOPY --from=build /app/src ./src\n`),
      "copies source",
    ],
    [
      "tsconfig copied",
      () => withFinalStage((s) => `${s}\nCOPY --from=build /app/tsconfig.json ./tsconfig.json\n`),
      "copies source",
    ],
    [
      "no HEALTHCHECK",
      () => withFinalStage((s) => s.replace(/^HEALTHCHECK[^\n]*\\\n[^\n]*\n/m, "")),
      "no HEALTHCHECK",
    ],
    ["HEALTHCHECK NONE", () => withFinalStage((s) => `${s}\nHEALTHCHECK NONE\n`), "no HEALTHCHECK"],
  ] satisfies [string, () => string, string][])("fails for %s", (_name, broken, expected) => {
    expect(dockerfileViolations(broken()).join("\n")).toContain(expected);
  });

  it("joins continuation lines and skips comments when reading instructions", () => {
    const stages = dockerfileStages(
      "ARG X=1\nFROM a AS b\n# RUN npm ci\nRUN npm ci \\\n  --omit=dev\nFROM b\n",
    );
    expect(stages).toEqual([
      [
        { keyword: "FROM", args: "a AS b" },
        { keyword: "RUN", args: "npm ci    --omit=dev" },
      ],
      [{ keyword: "FROM", args: "b" }],
    ]);
  });
});

describe("package.json", () => {
  const pkg = JSON.parse(readFileSync(new URL("package.json", root), "utf8"));

  it("starts compiled JavaScript and keeps tsx out of production dependencies", () => {
    expect(packageViolations(pkg)).toEqual([]);
  });

  it.each([
    ["start through tsx", { start: "node --import tsx workers/main.ts" }, {}, "script start"],
    ["no start:migrate", { "start:migrate": "" }, {}, "script start:migrate"],
    ["tsx in production", {}, { tsx: "4.0.0" }, "tsx is a production dependency"],
  ])("fails for %s", (_name, scripts, dependencies, expected) => {
    const broken = {
      scripts: { ...pkg.scripts, ...scripts },
      dependencies: { ...pkg.dependencies, ...dependencies },
    };
    expect(packageViolations(broken).join("\n")).toContain(expected);
  });
});
