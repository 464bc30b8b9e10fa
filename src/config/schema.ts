import { z } from "zod";
import { DEFAULT_MAX_STORED_VALUE_BYTES } from "../values/storable.js";
import { assetTemplatesSchema } from "./asset-templates-schema.js";
import { chainsSchema, secretSourceSchema, signersSchema } from "./chains-schema.js";

/**
 * The configuration schema: the single place where keys, defaults, units and rules live.
 * Nested keys mirror the dotted names the docs use (`durable.sharding.shardCount`, ...).
 * Every rule carries a message that names the rule itself, because ConfigError reports
 * `key = value: rule`.
 */

const port = (fallback: number) =>
  z.coerce
    .number()
    .int("must be an integer")
    .min(1, "must be 1–65535")
    .max(65535, "must be 1–65535")
    .default(fallback);

const positiveInt = (fallback: number, min = 1) =>
  z.coerce.number().int("must be an integer").min(min, `must be ≥ ${min}`).default(fallback);

/** An integer in `[min, max]`, with a rule message naming the range. */
const intBetween = (min: number, max: number, fallback: number) => {
  const rule = `${min} ≤ v ≤ ${max}`;
  return z.coerce.number().int("must be an integer").min(min, rule).max(max, rule).default(fallback);
};

const connectionUrl = (scheme: string[]) =>
  z
    .string({ error: "is required" })
    .min(1, "is required")
    .refine(
      (v) => scheme.some((s) => v.startsWith(`${s}://`)),
      `must be a URL starting with ${scheme.join(":// or ")}://`,
    );

/** Blockchain health cadence: whole minutes at or above 60 s, a divisor of 60 below it. */
const healthIntervalSeconds = z.coerce
  .number()
  .int("must be an integer")
  .min(1, "must be ≥ 1")
  .refine(
    (v) => (v >= 60 ? v % 60 === 0 : 60 % v === 0),
    "≥ 60 must be whole minutes (a multiple of 60); below 60 must divide 60",
  )
  .default(60);

/**
 * Default of a nested object: what its own fields' defaults make of `{}`, so each default is
 * stated once, at its field. `.prefault({})` would parse the same, but the JSON Schema the Helm
 * chart validates against would then show `{}` as the object's default instead of its values.
 */
const defaultFromFields = <T extends z.ZodType<object>>(schema: T) =>
  schema.default(() => schema.parse({}) as z.util.NoUndefined<z.output<T>>);

/** Id of a webhook secret key: stored beside every secret it encrypts, so it never changes. */
const SECRET_KEY_ID = /^[A-Za-z0-9_.-]{1,64}$/;

export const configSchema = z
  .object({
    /** PostgreSQL URL (DATABASE_URL). Required: never defaulted, never empty. */
    databaseUrl: connectionUrl(["postgres", "postgresql"]),
    /** Redis URL (REDIS_URL). Required. */
    redisUrl: connectionUrl(["redis", "rediss"]),
    /**
     * Prefix of every BullMQ and Tenor key in Redis; lets several deployments or tests share one
     * Redis. On a Redis Cluster it must hold a hash tag (`{tenor}`): every key of a deployment then
     * hashes to one slot, which BullMQ's and Tenor's Lua scripts need (docs/performance.md).
     */
    redisPrefix: z
      .string()
      .regex(
        /^[A-Za-z0-9_.:-]*(\{[A-Za-z0-9_.:-]+\}[A-Za-z0-9_.:-]*)?$/,
        "must match [A-Za-z0-9_.:-]+ with at most one non-empty hash tag {…}",
      )
      .min(1, "must not be empty")
      .default("tenor"),
    /**
     * REDIS_URL names one node of a Redis Cluster (TENOR_REDIS_CLUSTER=true) instead of a single
     * Redis; the others are discovered from it. Requires a hash-tagged redisPrefix.
     */
    redisCluster: z
      .union([z.boolean(), z.enum(["true", "false"], "must be true or false").transform((v) => v === "true")])
      .default(false),
    logLevel: z
      .enum(["error", "warn", "info", "debug"], "must be one of error, warn, info, debug")
      .default("info"),
    api: z
      .object({
        port: port(3000),
        /**
         * The api's health port: /livez, /readyz and /metrics, apart from the public API port (which
         * serves /livez and /readyz for probes but never /metrics). 3003 by default; 0 binds any free
         * port and logs it (tests running several apis on one machine).
         */
        healthPort: z.coerce
          .number()
          .int("must be an integer")
          .min(0, "must be 0–65535")
          .max(65535, "must be 0–65535")
          .default(3003),
        /** Upper bound of `Prefer: wait=N` on a start, in seconds; a larger N is capped to it. */
        maxPreferWaitSeconds: positiveInt(30, 0),
        /**
         * While a `Prefer: wait` waits, the projection is re-read this often, in milliseconds, in
         * case the runner's finished notification was lost (docs/performance.md). 10 ≤ v ≤ 600000.
         */
        waitFallbackPollMs: intBetween(10, 600_000, 1_000),
        /** Largest accepted request body, in bytes; a larger one is refused with 413. */
        bodyLimitBytes: positiveInt(1_048_576, 1_024),
        /** How long an Idempotency-Key binds its execution, in seconds (24 h); after it the key is released. */
        idempotencyTtlSeconds: positiveInt(86_400, 60),
        /** Platform status: a non-terminal execution not updated for this many seconds counts as "no mutation". */
        noMutationThresholdSeconds: positiveInt(3_600, 1),
        /**
         * Requests per API key (per client address without a key) in a fixed window, counted in Redis
         * so every api replica spends one budget. Over it: 429 with Retry-After. Defaults: 2000 per
         * 10 s, 200 requests a second: four times a client polling 50 executions once a second, and
         * 100 clients each waiting (`Prefer: wait`) for runs of 0.5 s (README, "Rate limits"). The
         * short window keeps a key's burst at a window's turn (twice the budget) under a few
         * seconds of one replica, and a throttled client's Retry-After under 10 s.
         */
        rateLimit: z
          .object({
            /** Requests allowed per window (≥ 1). */
            max: positiveInt(2_000, 1),
            /** Window length, in seconds (1–3600). */
            windowSeconds: z.coerce
              .number()
              .int("must be an integer")
              .min(1, "must be ≥ 1")
              .max(3_600, "must be ≤ 3600")
              .default(10),
          })
          .strict()
          .apply(defaultFromFields),
        /**
         * HTTP server timeouts, in milliseconds. keepAliveTimeoutMs stays above common load
         * balancer idle timeouts (60 s) so the balancer, not Tenor, closes idle connections;
         * headersTimeoutMs must exceed it (Node's 5 s default reset connections under load);
         * requestTimeoutMs bounds a whole request and must cover `Prefer: wait`.
         */
        http: z
          .object({
            keepAliveTimeoutMs: positiveInt(65_000, 1_000),
            headersTimeoutMs: positiveInt(66_000, 1_000),
            requestTimeoutMs: positiveInt(300_000, 1_000),
          })
          .strict()
          .superRefine((v, ctx) => {
            if (v.headersTimeoutMs <= v.keepAliveTimeoutMs)
              ctx.addIssue({
                code: "custom",
                path: ["headersTimeoutMs"],
                input: v.headersTimeoutMs,
                message: `must be > api.http.keepAliveTimeoutMs (${v.keepAliveTimeoutMs})`,
              });
            if (v.requestTimeoutMs < v.headersTimeoutMs)
              ctx.addIssue({
                code: "custom",
                path: ["requestTimeoutMs"],
                input: v.requestTimeoutMs,
                message: `must be ≥ api.http.headersTimeoutMs (${v.headersTimeoutMs})`,
              });
          })
          .apply(defaultFromFields),
        /**
         * Admission control: past any bound a request is refused at once with 503 and
         * Retry-After instead of queueing behind the database (health and /metrics exempt).
         */
        admission: z
          .object({
            /**
             * Expected wait for a pool connection, in ms, past which a request is refused
             * (`pool_queue`). 0 disables. The expected wait is the requests waiting × the mean
             * time a connection is held ÷ the pool size (src/api/pool-wait-estimate.ts), so a long
             * queue of quick statements is served and a short one behind a stalled database is
             * not. Default 250: a twentieth of the pool's 5 s connection timeout, so a request is
             * refused long before that timeout would fail it, and above the waits of a healthy
             * database behind a saturated api process (bench W13 on 2 cores: p99 about 120 ms).
             * CPU saturation is maxEventLoopUtilization's to catch, not this bound's.
             */
            maxPoolWaitMs: positiveInt(250, 0),
            /**
             * Requests in progress in one api process; more refuses. 0 (default) disables. Long
             * polls (`Prefer: wait`) count while they wait, so size it above their number.
             */
            maxInFlight: positiveInt(0, 0),
            /**
             * Event-loop utilization, 0..1, past which a growing share of requests is refused
             * (src/api/load-shedder.ts). 0 (default) disables; 0.95 is what bench W10 measures.
             * Catches CPU saturation, where requests queue in the kernel before the app sees them.
             */
            maxEventLoopUtilization: z.coerce
              .number("must be a number")
              .min(0, "0 ≤ v ≤ 1")
              .max(1, "0 ≤ v ≤ 1")
              .default(0),
            /** Event-loop lag over the last second, in milliseconds; more refuses. 0 disables. */
            maxEventLoopLagMs: positiveInt(500, 0),
            /** Retry-After of a refusal (503 OVERLOADED, and 503 DATABASE_UNAVAILABLE too), in seconds. */
            retryAfterSeconds: positiveInt(1, 1),
          })
          .strict()
          .apply(defaultFromFields),
      })
      .strict()
      .apply(defaultFromFields),
    /** The role's PostgreSQL pool (src/store/pg-pool.ts). */
    database: z
      .object({
        /**
         * Most pool connections one process opens (TENOR_DATABASE_POOL_MAX). The Helm chart's
         * capacity gate prices replicas × this (plus reserved sessions) against max_connections.
         */
        poolMax: z.coerce
          .number()
          .int("must be an integer")
          .min(1, "1 ≤ v ≤ 1000")
          .max(1_000, "1 ≤ v ≤ 1000")
          .default(20),
        /**
         * PostgreSQL URL of the reserved sessions (TENOR_DATABASE_SESSION_URL): shard ownership and
         * runner liveness hold session advisory locks on them, so they must reach PostgreSQL
         * directly, never through a transaction-mode pooler. Unset: `databaseUrl`. Set it when
         * `databaseUrl` points at PgBouncer in transaction mode (docs/performance.md, "PgBouncer").
         */
        sessionUrl: connectionUrl(["postgres", "postgresql"]).optional(),
        /**
         * The pools' hot-path statements are named prepared statements, parsed and planned once
         * per connection (TENOR_DATABASE_NAMED_STATEMENTS, default true). Set false when the pools
         * go through a transaction-mode PgBouncer older than 1.21 (or without
         * `max_prepared_statements`): every statement is then sent unnamed.
         */
        namedStatements: z
          .preprocess(
            (v) => (typeof v === "boolean" ? String(v) : v),
            z.enum(["true", "false"], "must be true or false"),
          )
          .transform((v) => v === "true")
          .default(true),
      })
      .strict()
      .apply(defaultFromFields),
    runner: z
      .object({ healthPort: port(3001) })
      .strict()
      .apply(defaultFromFields),
    indexer: z
      .object({
        healthPort: port(3002),
        /** Ledger Index (docs/ledger-index.md): how often an idle live tail asks for a new head, in ms. */
        pollIntervalMs: intBetween(50, 60_000, 1_000),
        /** Most blocks one live-tail batch (and one catch-up cursor commit) covers. */
        batchBlocks: intBetween(1, 10_000, 100),
        /** Blocks per historical catch-up range (the unit a replica leases). */
        rangeBlocks: intBetween(1, 1_000_000, 2_000),
        /** A catch-up lease's lifetime, in ms; each cursor commit renews it, an expired one is offered again. */
        leaseMs: intBetween(500, 600_000, 30_000),
      })
      .strict()
      .apply(defaultFromFields),
    shutdown: z
      .object({
        /** Bounded drain after SIGTERM, in milliseconds; past it the process exits 1. */
        graceMs: positiveInt(10_000, 100),
        /**
         * After SIGTERM, /readyz answers 503 for this long, in milliseconds, before the role stops
         * taking work, so a load balancer without a preStop hook stops routing first. Part of
         * graceMs. Default 0 (Kubernetes: the chart's preStop sleep does this).
         */
        readinessDelayMs: positiveInt(0, 0),
      })
      .strict()
      .superRefine((v, ctx) => {
        if (v.readinessDelayMs >= v.graceMs)
          ctx.addIssue({
            code: "custom",
            path: ["readinessDelayMs"],
            input: v.readinessDelayMs,
            message: `must be < shutdown.graceMs (${v.graceMs})`,
          });
      })
      .apply(defaultFromFields),
    /**
     * Startup relaunch (docs/operations.md, "Start, drain, overload"): a role whose dependencies fail
     * before it is up retries in process with exponential backoff for `relaunchBudgetMs`, logging
     * each failure, then exits 1. Errors that retrying cannot fix (configuration, registration,
     * shard count) exit at once.
     */
    startup: z
      .object({
        /** Time window of retries from the first attempt, in milliseconds; 0 disables retrying. */
        relaunchBudgetMs: positiveInt(60_000, 0),
        /** First backoff delay, in milliseconds; doubles per attempt up to `maxDelayMs`. */
        initialDelayMs: positiveInt(500, 10),
        /** Largest backoff delay, in milliseconds. */
        maxDelayMs: positiveInt(10_000, 10),
      })
      .strict()
      .apply(defaultFromFields),
    durable: z
      .object({
        /**
         * Shard ownership (docs/ownership.md). Every lock operation on the reserved connection has
         * a deadline of `min(refreshIntervalMs, livenessWindowMs / 3)`: it must end before the next
         * refresh is due, and a stuck replica must have given its shards up well inside the window
         * after which its peers stop counting it.
         */
        sharding: z
          .object({
            /** Shards per ownership domain; identical on every role (recorded in engine_settings). */
            shardCount: positiveInt(64),
            /** Locks and the heartbeat are re-asserted this often, in milliseconds. */
            refreshIntervalMs: z.coerce
              .number()
              .int("must be an integer")
              .min(100, "100 ≤ v ≤ 60000")
              .max(60_000, "100 ≤ v ≤ 60000")
              .default(2_000),
            /** A replica whose heartbeat is older than this is not counted live, in milliseconds. */
            livenessWindowMs: positiveInt(10_000, 300),
          })
          .strict()
          .superRefine((v, ctx) => {
            if (v.livenessWindowMs < 3 * v.refreshIntervalMs)
              ctx.addIssue({
                code: "custom",
                path: ["livenessWindowMs"],
                input: v.livenessWindowMs,
                message: `must be ≥ 3 × durable.sharding.refreshIntervalMs (${3 * v.refreshIntervalMs})`,
              });
          })
          .apply(defaultFromFields),
        confirmationWatcher: z
          .object({
            intervalMs: z.coerce
              .number()
              .int("must be an integer")
              .min(50, "50 ≤ v ≤ 60000")
              .max(60_000, "50 ≤ v ≤ 60000")
              .default(250),
          })
          .strict()
          .apply(defaultFromFields),
        /** Daily deletion of completed queue messages and terminal projections (docs/schedules.md). */
        retention: z
          .object({
            days: positiveInt(30),
            /** Rows (or jobs) one retention batch deletes, each in its own short transaction. */
            batchSize: z.coerce
              .number()
              .int("must be an integer")
              .min(10, "10 ≤ v ≤ 10000")
              .max(10_000, "10 ≤ v ≤ 10000")
              .default(500),
          })
          .strict()
          .apply(defaultFromFields),
        /**
         * BullMQ job lock: a runner that dies is detected after at most about
         * `lockDurationMs + stalledIntervalMs`. Shorter means faster takeover and more
         * false takeovers of a runner whose event loop stalls (fencing keeps those safe).
         */
        lock: z
          .object({
            lockDurationMs: positiveInt(4_000, 500),
            stalledIntervalMs: positiveInt(3_000, 500),
          })
          .strict()
          .apply(defaultFromFields),
        /**
         * Runner liveness (docs/engine.md, "Crash recovery"): every runner holds a session
         * advisory lock on a reserved PostgreSQL connection and, every `checkIntervalMs`, looks for
         * registered runners whose lock is gone (their session ended: the process died) and moves
         * their active jobs back to wait at once, instead of waiting for lock expiry.
         */
        liveness: z
          .object({
            checkIntervalMs: intBetween(50, 60_000, 250),
          })
          .strict()
          .apply(defaultFromFields),
        /** Workflow turns one runner process advances at once. */
        runnerConcurrency: positiveInt(100),
        /**
         * Largest value, in bytes of its JSON, a workflow may hand to storage (a step's or an
         * activity's result, an output, an input, a progress snapshot); a larger one is refused
         * with a typed error naming it (docs/engine.md, "What PostgreSQL can store"). jsonb holds
         * at most 255 MiB; 1024 ≤ v ≤ 268435455.
         */
        maxStoredValueBytes: intBetween(1_024, 268_435_455, DEFAULT_MAX_STORED_VALUE_BYTES),
        /** Recovery of suspended executions: exponential backoff, bounded in count and time. */
        recovery: z
          .object({
            maxAttempts: positiveInt(10),
            maxDurationMs: positiveInt(3_600_000, 1_000),
            baseDelayMs: positiveInt(1_000, 10),
            maxDelayMs: positiveInt(60_000, 10),
          })
          .strict()
          .apply(defaultFromFields),
        /** The convergent sweep that re-enqueues executions PostgreSQL says should move. */
        sweep: z
          .object({ intervalMs: positiveInt(5_000, 100), graceMs: positiveInt(10_000, 0) })
          .strict()
          .apply(defaultFromFields),
        /** The runner schedule filling nonces held by failed chain writes (docs/chains.md, "Nonce recovery"). */
        nonceRecovery: z
          .object({
            /** How often the pass runs, in ms. */
            intervalMs: z.coerce
              .number()
              .int("must be an integer")
              .min(1_000, "1000 ≤ v ≤ 3600000")
              .max(3_600_000, "1000 ≤ v ≤ 3600000")
              .default(60_000),
          })
          .strict()
          .apply(defaultFromFields),
        /** Bulk operations by query (docs/console.md, "Bulk operations"). */
        operations: z
          .object({
            /** How often the runners' pass looks for running operations, in ms. */
            intervalMs: intBetween(100, 60_000, 1_000),
            /** Runs one batch acts on before their outcomes are recorded together. */
            batchSize: intBetween(1, 5_000, 500),
            /** The most runs one operation may match; a wider filter is refused with its count. */
            maxItems: intBetween(1, 1_000_000, 100_000),
          })
          .strict()
          .apply(defaultFromFields),
        /** Keyed serialization: entity commands and keyed workflows (docs/keyed.md). */
        keyed: z
          .object({
            /** Lease of a claimed entity command, in ms: a dead runner's commands return after about this long. */
            leaseMs: positiveInt(10_000, 200),
            /** Most commands one claim takes (one PostgreSQL transaction). */
            batchSize: positiveInt(128),
            /** Claim loops per runner process. */
            concurrency: positiveInt(4),
            /** Period of the keyed repair (lost Redis state, expired leases, finished slots), in ms. */
            repairIntervalMs: positiveInt(1_000, 50),
            /** Work younger than this is left to its sender by the repair, in ms. */
            graceMs: positiveInt(5_000, 0),
          })
          .strict()
          .apply(defaultFromFields),
      })
      .strict()
      .apply(defaultFromFields),
    monitoring: z
      .object({
        blockchainHealthCollector: z
          .object({ intervalSeconds: healthIntervalSeconds })
          .strict()
          .apply(defaultFromFields),
        /** Hourly outcome buckets: how often the rollup schedule looks for hours to build, in seconds. */
        rollups: z
          .object({
            intervalSeconds: z.coerce
              .number()
              .int("must be an integer")
              .min(60, "60 ≤ v ≤ 3600")
              .max(3_600, "60 ≤ v ≤ 3600")
              .default(300),
          })
          .strict()
          .apply(defaultFromFields),
      })
      .strict()
      .apply(defaultFromFields),
    /** Organisation deployment (docs/organisations.md). */
    organisations: z
      .object({
        /** How often the failed-deployment schedule looks for abandoned deployments, in ms. */
        abandonedDeploymentsIntervalMs: intBetween(1_000, 3_600_000, 60_000),
      })
      .strict()
      .apply(defaultFromFields),
    /**
     * Webhook delivery (docs/webhooks.md): the runners' dispatcher sends each pending delivery,
     * retrying with exponential backoff and jitter, and dead-letters it after `maxAttempts`.
     */
    webhooks: z
      .object({
        /** Bound on one attempt (connect, send, answer), in ms; past it the attempt fails `timeout`. */
        timeoutMs: intBetween(100, 60_000, 10_000),
        /** Attempts per delivery before it is dead-lettered. */
        maxAttempts: intBetween(1, 50, 8),
        /** Backoff before retry n: a random delay in [0, min(maxMs, baseMs × 2^(n-1))] (full jitter). */
        backoff: z
          .object({
            baseMs: intBetween(10, 3_600_000, 1_000),
            maxMs: intBetween(10, 86_400_000, 3_600_000),
          })
          .strict()
          .superRefine((v, ctx) => {
            if (v.maxMs < v.baseMs)
              ctx.addIssue({
                code: "custom",
                path: ["maxMs"],
                input: v.maxMs,
                message: `must be ≥ webhooks.backoff.baseMs (${v.baseMs})`,
              });
          })
          .apply(defaultFromFields),
        /**
         * How old a signature's timestamp may be when a receiver checks it, in seconds (documented
         * to receivers; the verification helper's default). Each attempt is signed afresh.
         */
        replayWindowSeconds: intBetween(30, 86_400, 300),
        /** Deliveries one runner process sends at once. */
        concurrency: intBetween(1, 256, 8),
        /** How often an idle dispatcher looks for due deliveries, in ms. */
        pollIntervalMs: intBetween(50, 60_000, 1_000),
        /**
         * Allow URLs whose host is or resolves to a loopback, private, link-local or otherwise
         * internal address. Off by default (SSRF); tests and local development turn it on.
         */
        allowPrivateAddresses: z
          .union([
            z.boolean(),
            z.enum(["true", "false"], "must be true or false").transform((v) => v === "true"),
          ])
          .default(false),
        /**
         * Keys that encrypt subscription signing secrets at rest (AES-256-GCM), each a 256-bit key
         * in base64 read from `{ env: NAME }` or `{ file: /path }` under a stable `id`. The first
         * encrypts new secrets; every listed key decrypts, so a key is rotated by putting the new
         * one first and keeping the old one until the runners have re-encrypted its rows
         * (docs/webhooks.md, "Secrets"). Empty: new subscriptions are refused unless
         * `plaintextSecrets` is on.
         */
        secretKeys: z
          .array(
            z
              .object({
                id: z.string().regex(SECRET_KEY_ID, "must match [A-Za-z0-9_.-]{1,64}"),
                key: secretSourceSchema,
              })
              .strict(),
            "must be a list of { id, key: { env: NAME } | { file: /path } }",
          )
          .superRefine((keys, ctx) => {
            keys.forEach((entry, index) => {
              if (keys.findIndex((other) => other.id === entry.id) !== index)
                ctx.addIssue({
                  code: "custom",
                  path: [index, "id"],
                  input: entry.id,
                  message: "must be unique among webhooks.secretKeys",
                });
            });
          })
          .default([]),
        /**
         * Development only: with no `secretKeys`, store new signing secrets in plain text instead
         * of refusing to create subscriptions. Ignored when a key is configured.
         */
        plaintextSecrets: z
          .union([
            z.boolean(),
            z.enum(["true", "false"], "must be true or false").transform((v) => v === "true"),
          ])
          .default(false),
      })
      .strict()
      .apply(defaultFromFields),
    /**
     * Evidence export (docs/console.md): `signingKey` names where the api reads the Ed25519 private
     * key (PKCS#8 PEM) that signs every export, `{ env: NAME }` or `{ file: /path }`. Unset: the
     * export answers 503 EVIDENCE_SIGNING_DISABLED.
     */
    evidence: z.object({ signingKey: secretSourceSchema.optional() }).strict().apply(defaultFromFields),
    /** Chains Tenor writes to, and the signers that sign for them (src/config/chains-schema.ts). */
    chains: chainsSchema,
    signers: signersSchema,
    /** What organisations may create as bonds and funds (src/config/asset-templates-schema.ts). */
    assetTemplates: assetTemplatesSchema,
  })
  .strict()
  .superRefine((v, ctx) => {
    v.assetTemplates.forEach((template, index) => {
      if (!v.chains.some((chain) => chain.id === template.chainId))
        ctx.addIssue({
          code: "custom",
          path: ["assetTemplates", index, "chainId"],
          input: template.chainId,
          message: "must name a configured chain",
        });
      const signer = v.signers.find((s) => s.id === template.signerId);
      if (!signer || signer.orgId !== template.orgId)
        ctx.addIssue({
          code: "custom",
          path: ["assetTemplates", index, "signerId"],
          input: template.signerId,
          message: "must name a configured signer of the template's orgId",
        });
    });
    if (v.redisCluster && !v.redisPrefix.includes("{"))
      ctx.addIssue({
        code: "custom",
        path: ["redisPrefix"],
        input: v.redisPrefix,
        message: "must hold a hash tag such as {tenor} when redisCluster is true (one slot per deployment)",
      });
  });

/** The validated, frozen configuration every module receives. */
export type TenorConfig = z.infer<typeof configSchema>;

/**
 * Keys that no longer exist, each with the rule reported when a configuration still sets one: what
 * replaced it. "Is not a known configuration key" would leave the operator guessing, and accepting
 * the key would let it silently do nothing.
 */
export const REMOVED_KEYS: Readonly<Record<string, string>> = Object.freeze({
  "api.admission.maxPoolWaiting":
    "was removed: admission now bounds the expected wait for a pool connection, not the number waiting; set api.admission.maxPoolWaitMs (ms, default 250, 0 disables) instead",
});
