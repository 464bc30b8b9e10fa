import type { Address } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import {
  type ChainAccess,
  chainAccessService,
  entityNonceReservationReader,
  entityNonceReserver,
  entityParkedNonceReserver,
  entityWindowedNonceReserver,
} from "../../../src/chain/lifecycle/chain-access.js";
import {
  chainTransaction,
  chainTransactionVersions,
} from "../../../src/chain/lifecycle/transaction-workflow.js";
import { indexedHeightsService } from "../../../src/chain/lifecycle/wait-for-indexed.js";
import { nonceEntity } from "../../../src/chain/nonce-entity.js";
import { openNonceWindow } from "../../../src/chain/nonce-window.js";
import { ChainClients } from "../../../src/chain/rpc-clients.js";
import { createCustodyHttpSigner } from "../../../src/chain/signers/custody-http-signer.js";
import { createLocalKeySigner } from "../../../src/chain/signers/local-key-signer.js";
import type { Signer } from "../../../src/chain/signers/signer.js";
import { SignerRegistry } from "../../../src/chain/signers/signer-registry.js";
import { executionOrg } from "../../../src/chain/store/chain-watch-sql.js";
import { startConfirmationWatcher } from "../../../src/chain/watcher/confirmation-watcher.js";
import { chainSchema } from "../../../src/config/chains-schema.js";
import type { TenorConfig } from "../../../src/config/schema.js";
import { Secret } from "../../../src/config/secret.js";
import type { EngineHooks } from "../../../src/engine/context-types.js";
import type { ExecutionClient, ExecutionView } from "../../../src/engine/execution-client.js";
import { WorkflowRegistry } from "../../../src/engine/registry.js";
import { provide, type ServiceProvision } from "../../../src/engine/services.js";
import type { AnyWorkflow } from "../../../src/engine/workflow.js";
import { EntityClient } from "../../../src/keyed/entity-client.js";
import { EntityRegistry } from "../../../src/keyed/entity-registry.js";
import { PgLedgerReads } from "../../../src/ledger-index/store/reads.js";
import { createPlatformApi } from "../../../src/roles/platform-api.js";
import { applicationRoutes } from "../../../workers/api-routes.js";
import { ANVIL_KEYS, type Anvil, type AnvilOptions, startAnvil } from "../../support/anvil.js";
import { issueTestKeys } from "../../support/api-client.js";
import { type CustodySimulator, startCustodySimulator } from "../../support/custody-simulator.js";
import {
  type DurableOverrides,
  type EngineHarness,
  type HarnessConnections,
  startEngineHarness,
} from "../../support/engine-harness.js";
import { type RpcProxy, startRpcProxy } from "../../support/rpc-proxy.js";

/**
 * One test file's chain world: a real anvil, the engine harness with the lifecycle workflow and
 * the nonce entity, the chain access (and the index's heights) provided over local signers (and optionally the custody
 * simulator), and the confirmation watcher running on every execution.
 */
export interface ChainWorld {
  anvil: Anvil;
  engine: EngineHarness;
  chains: ChainClients;
  /**
   * The chain access the world provides (chains, signers, nonces): one object, so a test may
   * point its `chains` at another configuration for a while and put them back.
   */
  chainAccess: ChainAccess;
  custody?: CustodySimulator;
  /** The fault proxy the world's chain clients talk through, when `rpcProxy` was asked for. */
  proxy?: RpcProxy;
  /** The signers the access is bound to (`hot`, the extra local ones, custody when started). */
  signers: SignerRegistry;
  /** Address of the local signer `hot` (anvil key 1). */
  hot: Address;
  /** Starts one lifecycle execution for organisation `acme`. */
  send(request: Record<string, unknown>): Promise<string>;
  /** Starts an execution of any of the world's workflows for organisation `acme` (or `orgId`). */
  start(
    workflow: string,
    input: unknown,
    options?: { orgId?: string; idempotencyKey?: string },
  ): Promise<string>;
  /** Waits for a terminal status and returns the view. */
  settled(id: string, timeoutMs?: number): Promise<ExecutionView>;
  stop(): Promise<void>;
}

export interface ChainWorldOptions {
  file: string;
  anvil?: AnvilOptions;
  chain?: Record<string, unknown>;
  custody?: boolean;
  /** False: no confirmation watcher runs; the test drives `watchOnce` itself. Default true. */
  watcher?: boolean;
  /** Put the JSON-RPC fault proxy between the world's chain clients and anvil (`world.proxy`). */
  rpcProxy?: boolean;
  durable?: DurableOverrides;
  /** Engine hooks (a test acts at a chosen step, e.g. drains a payer just before a broadcast). */
  hooks?: EngineHooks;
  /** Extra local signers: id → anvil key index (organisation `acme`), or the index and the organisation. */
  signers?: Record<string, number | { key: number; orgId: string }>;
  /** Workflows registered next to the lifecycle (domain flows that write through it). */
  workflows?: readonly AnyWorkflow[];
  /** Services those workflows declare, next to the world's chain access and indexed heights. */
  services?: (connections: HarnessConnections) => readonly ServiceProvision[];
}

export async function startChainWorld(options: ChainWorldOptions): Promise<ChainWorld> {
  const anvil = await startAnvil(options.anvil);
  const proxy = options.rpcProxy ? await startRpcProxy(anvil.url) : undefined;
  const worldChains = (durable: TenorConfig["durable"]) =>
    new ChainClients({
      chains: [
        chainSchema.parse({
          id: anvil.chainId,
          name: "anvil",
          rpcUrls: [proxy?.url ?? anvil.url],
          confirmationWatcher: { intervalMs: 50 },
          ...options.chain,
        }),
      ],
      durable,
    });
  const signers: Signer[] = [
    createLocalKeySigner({ id: "hot", orgId: "acme", privateKey: new Secret(ANVIL_KEYS[1], "test") }),
  ];
  for (const [id, spec] of Object.entries(options.signers ?? {})) {
    const { key, orgId } = typeof spec === "number" ? { key: spec, orgId: "acme" } : spec;
    signers.push(
      createLocalKeySigner({ id, orgId, privateKey: new Secret(ANVIL_KEYS[key] as string, "test") }),
    );
  }
  let custody: CustodySimulator | undefined;
  if (options.custody) {
    custody = await startCustodySimulator({
      rpcUrl: anvil.url,
      chainId: anvil.chainId,
      privateKey: ANVIL_KEYS[2],
      publicClient: anvil.public,
    });
    const common = {
      address: custody.address,
      baseUrl: custody.url,
      apiKey: new Secret(custody.apiKey, "test"),
      requestTimeoutMs: 500,
      pollBudget: 20,
      pollIntervalMs: 50,
    };
    signers.push(createCustodyHttpSigner({ id: "vault", orgId: "acme", ...common }));
    signers.push(
      createCustodyHttpSigner({ id: "platform-vault", orgId: undefined, ...common, pollBudget: 8 }),
    );
  }
  const registry = new SignerRegistry(signers);
  let entities: EntityClient | undefined;
  // One object for the world's life: a test may point its `chains` elsewhere for a while.
  let chainAccess: ChainAccess | undefined;
  // The engine's client exists once the harness is up; a run's window wake comes later still.
  let engineClient: Pick<ExecutionClient, "signalMany"> | undefined;
  const windowSignals: Pick<ExecutionClient, "signalMany"> = {
    signalMany: (deliveries) => (engineClient as Pick<ExecutionClient, "signalMany">).signalMany(deliveries),
  };
  const engine = await startEngineHarness({
    file: options.file,
    workflows: [...chainTransactionVersions, ...(options.workflows ?? [])],
    entities: [nonceEntity],
    ...(options.durable ? { durable: options.durable } : {}),
    ...(options.hooks ? { hooks: options.hooks } : {}),
    services: (connections) => {
      const nonces = new EntityClient({
        pool: connections.pool,
        redis: connections.producerRedis,
        prefix: connections.config.redisPrefix,
        registry: new EntityRegistry([nonceEntity]),
        logger: connections.logger,
        pollMs: 200,
      });
      entities = nonces;
      chainAccess = {
        chains: worldChains(connections.config.durable),
        signers: registry,
        reserveNonce: entityNonceReserver(nonces),
        reserveNonceWithin: entityWindowedNonceReserver(nonces),
        postNonceReservation: entityParkedNonceReserver(nonces, windowSignals),
        nonceReservationReply: entityNonceReservationReader(nonces),
        openNonceWindow: (window) =>
          openNonceWindow({ pool: connections.pool, executions: windowSignals }, window),
        executionOrg: (id) => executionOrg(connections.pool, id),
      };
      return [
        provide(chainAccessService, chainAccess),
        provide(indexedHeightsService, (chainId) =>
          new PgLedgerReads(connections.pool).indexedHeight(chainId),
        ),
        ...(options.services?.(connections) ?? []),
      ];
    },
  });
  engineClient = engine.client;
  const access = chainAccess as ChainAccess;
  const chains = access.chains;
  const watcher =
    options.watcher === false
      ? undefined
      : startConfirmationWatcher({
          pool: engine.pool,
          executions: engine.client,
          chains,
          owns: () => true,
          logger: engine.logger,
        });
  return {
    anvil,
    engine,
    chains,
    chainAccess: access,
    ...(custody ? { custody } : {}),
    ...(proxy ? { proxy } : {}),
    signers: registry,
    hot: privateKeyToAccount(ANVIL_KEYS[1]).address,
    async send(request) {
      const { executionId } = await engine.client.start({
        workflow: chainTransaction.name,
        input: { chainId: anvil.chainId, signerId: "hot", ...request },
        orgId: "acme",
      });
      return executionId;
    },
    async start(workflow, input, startOptions) {
      const { executionId } = await engine.client.start({
        workflow,
        input,
        orgId: startOptions?.orgId ?? "acme",
        ...(startOptions?.idempotencyKey ? { idempotencyKey: startOptions.idempotencyKey } : {}),
      });
      return executionId;
    },
    settled: (id, timeoutMs) =>
      engine.waitForView(
        id,
        (v) => v.status === "completed" || v.status === "failed",
        "a terminal status",
        timeoutMs,
      ),
    async stop() {
      await watcher?.stop();
      await engine.stop();
      await entities?.close().catch(() => undefined);
      await custody?.stop();
      await proxy?.stop();
      await anvil.stop();
    },
  };
}

/** The Platform API on the world's engine, with the lifecycle workflow registered (close it after). */
export function chainWorldApi(world: ChainWorld): ReturnType<typeof createPlatformApi> {
  return createPlatformApi({
    settings: world.engine.config.api,
    pool: world.engine.pool,
    redis: world.engine.producerRedis,
    prefix: world.engine.config.redisPrefix,
    registry: new WorkflowRegistry([...chainTransactionVersions]),
    routes: applicationRoutes,
    logger: world.engine.logger,
    readiness: {},
    health: { draining: false },
    chainIds: [world.anvil.chainId],
    ...(world.custody ? { custodySigners: WORLD_CUSTODY_SIGNERS } : {}),
    chains: world.chains,
  });
}

/** The custody signers a world started with `custody` holds, as the api role reads them from `signers`. */
const WORLD_CUSTODY_SIGNERS = [{ id: "vault", orgId: "acme" }, { id: "platform-vault" }];

/** Integrator keys of `acme` and `globex` on the world's API; each key's person is `ops@<org>`. */
export async function integratorKeys(
  api: ReturnType<typeof chainWorldApi>,
): Promise<{ acme: string; globex: string }> {
  const { keys } = await issueTestKeys(api.keys, {
    acme: { org: "acme", role: "integrator", subject: "ops@acme" },
    globex: { org: "globex", role: "integrator", subject: "ops@globex" },
  });
  return keys;
}
