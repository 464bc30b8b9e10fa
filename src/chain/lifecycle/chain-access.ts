import type { ExecutionClient } from "../../engine/execution-client.js";
import { defineService } from "../../engine/services.js";
import type { EntityClient } from "../../keyed/entity-client.js";
import { nonceEntity, nonceGrantKey } from "../nonce-entity.js";
import type { ChainClients } from "../rpc-clients.js";
import type { SignerRegistry } from "../signers/signer-registry.js";

/** Reserves the next nonce of (chain, sender); `commandId` makes a repeated ask return the same nonce. */
export type NonceReserver = (request: {
  chainId: number;
  sender: string;
  floor: number;
  commandId: string;
}) => Promise<number>;

/**
 * Reserves a nonce within the sender's window (docs/chains.md, "Pending transactions per sender"):
 * the nonce, or the window's state when `maxPending` nonces of the sender are not yet mined.
 * `reservationId` is the reservation's idempotency id; `commandId` the entity command's, which
 * changes when a run asks again after a full window.
 */
export type WindowedNonceReserver = (request: {
  chainId: number;
  sender: string;
  floor: number;
  window: { mined: number; maxPending: number };
  reservationId: string;
  commandId: string;
}) => Promise<{ nonce: number } | { full: { pending: number; bound: number } }>;

/**
 * Sends a windowed reservation without waiting for it (lifecycle version 6, docs/chains.md, "A
 * queued reservation parks its run"): resolves once the command is committed, with the reply when
 * it has one already, else `null`. The nonce entity stores the reply as the run's signal
 * `grant.signal` in the transaction that grants it, and the runner that sent the command wakes the
 * run once it hears the reply. Posting again with the same ids and input returns the same command.
 */
export type ParkedNonceReserver = (
  request: Parameters<WindowedNonceReserver>[0] & { grant: { executionId: string; signal: string } },
) => Promise<{ reply: { nonce: number } | { full: { pending: number; bound: number } } | null }>;

/**
 * The stored reply of reservation command `commandId`, read by its id (a parked run's recheck):
 * `null` while it is queued; a refused command rejects with its error.
 */
export type NonceReservationReader = (
  commandId: string,
) => Promise<{ reply: { nonce: number } | { full: { pending: number; bound: number } } | null }>;

/** What the transaction lifecycle's steps reach outside the journal: nodes, signers, nonces. */
export interface ChainAccess {
  chains: ChainClients;
  signers: SignerRegistry;
  reserveNonce: NonceReserver;
  reserveNonceWithin: WindowedNonceReserver;
  postNonceReservation: ParkedNonceReserver;
  nonceReservationReply: NonceReservationReader;
  /**
   * Wakes up to `slots` runs waiting for the sender's full nonce window; resolves with how many
   * were woken (src/chain/nonce-window.ts).
   */
  openNonceWindow: (window: { chainId: number; sender: string; slots: number }) => Promise<number>;
  /** The organisation an execution was started for (from the caller's key, never from input). */
  executionOrg: (executionId: string) => Promise<string | null>;
}

/**
 * The runner's chain clients, signers and nonces, as a service (src/engine/services.ts): the
 * runner role provides it (src/chain/runner-chain-boundary.ts); a workflow that writes to a chain
 * declares it and reads it through its context, inside the steps that reach the chain.
 */
export const chainAccessService = defineService<ChainAccess>("chain.access");

/** Nonce reservation through the keyed nonce entity (one sender's commands run one at a time). */
export function entityNonceReserver(client: EntityClient): NonceReserver {
  return async ({ chainId, sender, floor, commandId }) => {
    const reply = await client.send(nonceEntity, "reserve", { chainId, sender, floor }, { commandId });
    // Without a window the entity never answers `full`.
    if (!("nonce" in reply))
      throw new Error(`nonce entity answered ${JSON.stringify(reply)} without a window`);
    return reply.nonce;
  };
}

/** Windowed nonce reservation through the keyed nonce entity. */
export function entityWindowedNonceReserver(client: EntityClient): WindowedNonceReserver {
  return ({ chainId, sender, floor, window, reservationId, commandId }) =>
    client.send(nonceEntity, "reserve", { chainId, sender, floor, window, reservationId }, { commandId });
}

/** How long the sending runner listens for a posted reservation's reply to wake its run. */
const GRANT_WATCH_MS = 60_000;

/**
 * Parked reservation through the keyed nonce entity. When the reply reaches this runner, the run
 * is woken through `executions.signalMany` with the grant signal's own idempotency key: the signal
 * is already stored (the grant's transaction did it, with the same reply), so the statement stores
 * nothing and the call only wakes the run (a repeated key wakes again). The wakes of one tick go out as one batch.
 * A refused command stores no signal and wakes nobody: the run's recheck reads the refusal.
 */
export function entityParkedNonceReserver(
  client: EntityClient,
  executions: Pick<ExecutionClient, "signalMany">,
): ParkedNonceReserver {
  const wakes = new GrantWakes(executions);
  return async ({ chainId, sender, floor, window, reservationId, commandId, grant }) => {
    const posted = await client.post(
      nonceEntity,
      "reserve",
      { chainId, sender, floor, window, reservationId, grant },
      {
        commandId,
        watchMs: GRANT_WATCH_MS,
        onFinished: ({ status, reply }) => {
          if (status === "done")
            wakes.add(grant.executionId, {
              name: grant.signal,
              key: nonceGrantKey(commandId),
              payload: reply,
            });
        },
      },
    );
    return { reply: posted?.reply ?? null };
  };
}

/** A reservation's stored reply, read through the keyed nonce entity's client. */
export function entityNonceReservationReader(client: EntityClient): NonceReservationReader {
  return async (commandId) => ({
    reply: (await client.reply(nonceEntity, "reserve", commandId))?.reply ?? null,
  });
}

/** Wakes of granted runs gathered per event-loop tick into one signal batch. */
class GrantWakes {
  private pending = new Map<string, { name: string; key: string; payload: unknown }>();
  private scheduled = false;

  constructor(private readonly executions: Pick<ExecutionClient, "signalMany">) {}

  add(executionId: string, signal: { name: string; key: string; payload: unknown }): void {
    this.pending.set(executionId, signal);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const batch = [...this.pending.entries()];
      this.pending = new Map();
      // A lost wake costs the run its recheck interval (or the sweep's), never the grant.
      void this.executions
        .signalMany(
          batch.map(([id, signal]) => ({
            executionId: id,
            name: signal.name,
            payload: signal.payload,
            idempotencyKey: signal.key,
          })),
        )
        .catch(() => undefined);
    });
  }
}
