/**
 * The deployment contract of docker-compose.yml and the Dockerfile, as functions that list every
 * violation. Returning violations (rather than asserting) lets compose.test.ts show each rule
 * passes on the real files and fails on a copy broken in exactly that way.
 */

/**
 * The roles (docs/architecture.md, "Roles"); a service may set DAPI_ROLE to one of these and
 * nothing else.
 */
export const ROLES = ["api", "runner", "indexer"] as const;

type Json = Record<string, unknown>;

const asRecord = (value: unknown): Json =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : {};

/** A compose `command` or healthcheck `test` as tokens, whichever of the two forms it uses. */
function tokens(value: unknown): string[] {
  if (Array.isArray(value)) return value.map(String).flatMap((part) => part.split(/\s+/));
  return typeof value === "string" ? value.split(/\s+/) : [];
}

/** A service's environment as a map, from either the map or the `KEY=value` list form. */
export function environmentOf(service: Json): Record<string, string> {
  const env = service.environment;
  if (Array.isArray(env)) {
    return Object.fromEntries(
      env.map(String).map((entry) => [entry.split("=")[0]!, entry.split("=").slice(1).join("=")]),
    );
  }
  return Object.fromEntries(Object.entries(asRecord(env)).map(([key, value]) => [key, String(value)]));
}

/** A service's `depends_on` as service → condition (the list form means `service_started`). */
function dependenciesOf(service: Json): Record<string, string> {
  const deps = service.depends_on;
  if (Array.isArray(deps)) return Object.fromEntries(deps.map((name) => [String(name), "service_started"]));
  return Object.fromEntries(
    Object.entries(asRecord(deps)).map(([name, spec]) => [name, String(asRecord(spec).condition)]),
  );
}

function hasPair(list: string[], flag: string, value: string): boolean {
  return list.some((token, index) => token === flag && list[index + 1] === value);
}

/** Every way a parsed docker-compose.yml breaks Tenor's deployment contract. */
export function composeViolations(doc: unknown): string[] {
  const services = asRecord(asRecord(doc).services);
  const service = (name: string) => asRecord(services[name]);
  const violations: string[] = [];

  const redisCommand = tokens(service("redis").command);
  if (!hasPair(redisCommand, "--appendonly", "yes")) violations.push("redis: command lacks --appendonly yes");
  if (!hasPair(redisCommand, "--maxmemory-policy", "noeviction")) {
    violations.push("redis: command lacks --maxmemory-policy noeviction");
  }
  const healthchecks: [string, string][] = [
    ["postgres", "pg_isready"],
    ["redis", "redis-cli ping"],
  ];
  for (const [name, probe] of healthchecks) {
    const check = asRecord(service(name).healthcheck);
    if (check.disable === true || !tokens(check.test).join(" ").includes(probe)) {
      violations.push(`${name}: healthcheck does not run ${probe}`);
    }
  }

  const migrate = service("migrate");
  if (migrate.restart !== "no") violations.push('migrate: restart must be "no" (one-shot)');
  const migrateCommand = tokens(migrate.command).join(" ");
  if (!migrateCommand.includes("migrate")) violations.push("migrate: command runs no migration");
  // The image carries compiled JavaScript only: no tsx, no npm scripts that run TypeScript.
  if (!/^node dist\//.test(migrateCommand)) {
    violations.push(`migrate: command must run compiled JavaScript (node dist/...), found ${migrateCommand}`);
  }

  const image = JSON.stringify([service("api").image, service("api").build]);
  if (service("api").image === undefined && service("api").build === undefined) {
    violations.push("api: has neither image nor build");
  }
  for (const name of [...ROLES, "migrate"]) {
    if (JSON.stringify([service(name).image, service(name).build]) !== image) {
      violations.push(`${name}: image/build differs from api's (one image for every role)`);
    }
  }

  for (const role of ROLES) violations.push(...roleServiceViolations(role, service(role)));

  for (const [name, spec] of Object.entries(services)) {
    const role = environmentOf(asRecord(spec)).DAPI_ROLE;
    if (role !== undefined && !(ROLES as readonly string[]).includes(role)) {
      violations.push(`${name}: DAPI_ROLE=${role} is not one of ${ROLES.join("|")}`);
    }
  }
  return violations;
}

function roleServiceViolations(role: string, service: Json): string[] {
  const violations: string[] = [];
  const env = environmentOf(service);
  if (env.DAPI_ROLE !== role) violations.push(`${role}: DAPI_ROLE is ${env.DAPI_ROLE}, expected ${role}`);
  if (!env.DATABASE_URL?.includes("@postgres:"))
    violations.push(`${role}: DATABASE_URL does not point at postgres`);
  if (!env.REDIS_URL?.includes("//redis:")) violations.push(`${role}: REDIS_URL does not point at redis`);
  const deps = dependenciesOf(service);
  const wanted: [string, string][] = [
    ["migrate", "service_completed_successfully"],
    ["redis", "service_healthy"],
    ["postgres", "service_healthy"],
  ];
  for (const [name, condition] of wanted) {
    if (deps[name] !== condition) violations.push(`${role}: must depend on ${name} with ${condition}`);
  }
  if (!tokens(asRecord(service.healthcheck).test).join(" ").includes("/readyz")) {
    violations.push(`${role}: healthcheck does not hit /readyz`);
  }
  return violations;
}

/** One instruction of a Dockerfile, continuation lines joined. */
export interface DockerInstruction {
  readonly keyword: string;
  readonly args: string;
}

/** Splits a Dockerfile into stages (each starting at FROM); instructions before the first FROM are dropped. */
export function dockerfileStages(text: string): DockerInstruction[][] {
  const joined = text
    .split("\n")
    .filter((line) => !line.trim().startsWith("#"))
    .join("\n")
    .replace(/\\\n/g, " ");
  const stages: DockerInstruction[][] = [];
  for (const line of joined.split("\n")) {
    const match = line.trim().match(/^(\w+)\s+(.*)$/);
    if (match === null) continue;
    const instruction = { keyword: match[1]!.toUpperCase(), args: match[2]!.trim() };
    if (instruction.keyword === "FROM") stages.push([instruction]);
    else stages.at(-1)?.push(instruction);
  }
  return stages;
}

/** Every way the Dockerfile breaks Tenor's image contract. */
export function dockerfileViolations(text: string): string[] {
  const stages = dockerfileStages(text);
  const violations: string[] = [];
  if (stages.length < 2) violations.push(`multi-stage build expected, found ${stages.length} FROM`);
  const final = stages.at(-1) ?? [];
  const of = (keyword: string) => final.filter((instruction) => instruction.keyword === keyword);

  const user = of("USER").at(-1)?.args.split(":")[0];
  if (user === undefined || user === "root" || user === "0") violations.push("final stage runs as root");

  const cmd = of("CMD").at(-1)?.args ?? "";
  if (!/^\[\s*"node"\s*,\s*"dist\/workers\/main\.js"\s*\]$/.test(cmd)) {
    violations.push(`final stage CMD must be ["node", "dist/workers/main.js"], found ${cmd || "none"}`);
  }

  const installs = of("RUN").filter((run) => /\bnpm\s+(ci|install|i)\b/.test(run.args));
  if (installs.length === 0) violations.push("final stage installs no production dependencies");
  for (const run of installs) {
    if (!run.args.includes("--omit=dev"))
      violations.push(`final stage installs dev dependencies: ${run.args}`);
  }
  for (const copy of of("COPY")) {
    if (copy.args.includes("--from=") && copy.args.includes("node_modules")) {
      violations.push(`final stage copies node_modules from another stage: ${copy.args}`);
    }
    const sources = copy.args
      .split(/\s+/)
      .filter((part) => !part.startsWith("--"))
      .slice(0, -1);
    for (const source of sources) {
      if (/(^|\/)(src|scripts|flows|test)\/?$|\.ts$|tsconfig/.test(source) || source === ".") {
        violations.push(`final stage copies source (only dist/ and prisma/ run): ${copy.args}`);
      }
    }
  }
  const healthcheck = of("HEALTHCHECK").at(-1)?.args ?? "NONE";
  if (/^NONE\b/.test(healthcheck)) violations.push("final stage has no HEALTHCHECK");
  if (/\btsx\b/.test(`${healthcheck} ${cmd}`)) violations.push("final stage runs TypeScript through tsx");
  return violations;
}

/** Every way package.json breaks the compiled-image contract: start scripts run dist/, tsx is dev-only. */
export function packageViolations(pkg: {
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
}): string[] {
  const violations: string[] = [];
  for (const name of ["start", "start:migrate"]) {
    const script = pkg.scripts?.[name] ?? "";
    if (!/^node dist\/\S+\.js$/.test(script)) {
      violations.push(`script ${name} must be "node dist/<file>.js", found ${script || "none"}`);
    }
  }
  if (pkg.dependencies?.tsx !== undefined) violations.push("tsx is a production dependency");
  return violations;
}
