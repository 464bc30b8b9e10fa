import type { Pool } from "pg";
import type { Logger } from "../observability/logger.js";
import { SCHEDULE_NAMES, type ScheduleDefinition } from "../schedules/schedule-definition.js";
import { defineChain } from "../values/index.js";
import { broadcast, signAttempt, suggestFees } from "./lifecycle/node-steps.js";
import type { ChainClients } from "./rpc-clients.js";
import type { SignerRegistry } from "./signers/signer-registry.js";
import {
  listOpenNonceGaps,
  type NonceGap,
  recordNonceGapFill,
  settleNonceGap,
} from "./store/pg-nonce-gaps.js";

/** The lifecycle workflow's name (its reservations are the ones a failure can strand). */
const LIFECYCLE_WORKFLOW = "chain.transaction";

/** Gas of a plain value transfer: what a zero-value self-transfer costs. */
const SELF_TRANSFER_GAS = "21000";

/** Most gaps one run looks at; the rest wait for the next run. */
const BATCH = 200;

export interface NonceRecoveryDependencies {
  pool: Pool;
  chains: ChainClients;
  signers: SignerRegistry;
  logger: Logger;
}

export interface NonceRecoveryReport {
  examined: number;
  /** Gaps whose self-transfer was broadcast (or re-broadcast) in this run. */
  filled: number;
  /** Gaps the chain has moved past (mined by the fill or by anything else). */
  settled: number;
  /** Gaps on a chain or sender this runner cannot sign for. */
  skipped: number;
  /** Gaps whose examination failed (node unreachable, sender without gas): tried again next run. */
  failed: number;
}

/**
 * One nonce-recovery pass (docs/chains.md, "Nonce recovery"). A nonce the keyed nonce entity
 * reserved for an execution that then failed permanently is never used by that intent, and every
 * later nonce of the sender waits behind it. The pass fills such a gap with a zero-value
 * self-transfer at exactly that nonce: signed once, recorded in PostgreSQL before broadcast (a
 * second run or a second runner re-broadcasts the same bytes, never a second payload), and
 * settled once the chain's mined nonce has passed it.
 */
export async function recoverNonceGaps(deps: NonceRecoveryDependencies): Promise<NonceRecoveryReport> {
  const gaps = await listOpenNonceGaps(deps.pool, LIFECYCLE_WORKFLOW, BATCH);
  const report: NonceRecoveryReport = { examined: gaps.length, filled: 0, settled: 0, skipped: 0, failed: 0 };
  for (const gap of gaps) {
    // One gap's node or funding trouble does not hold up the other senders' gaps.
    const outcome = await recoverOne(deps, gap).catch((error: Error) => {
      deps.logger.warn("nonce gap not filled this run", {
        chainId: gap.chainId,
        sender: gap.sender,
        nonce: gap.nonce,
        error: error.message,
      });
      return "failed" as const;
    });
    report[outcome]++;
  }
  return report;
}

async function recoverOne(
  deps: NonceRecoveryDependencies,
  gap: NonceGap,
): Promise<"filled" | "settled" | "skipped"> {
  if (!deps.chains.has(gap.chainId)) return "skipped";
  const node = deps.chains.get(gap.chainId);
  const sender = gap.sender;
  const mined = await node.public.getTransactionCount({ address: sender, blockTag: "latest" });
  if (mined > gap.nonce) {
    await settleNonceGap(deps.pool, gap);
    return "settled";
  }
  const signer = deps.signers.localByAddress(sender);
  if (!signer) {
    deps.logger.warn("nonce gap without a local signer for its sender", {
      chainId: gap.chainId,
      sender,
      nonce: gap.nonce,
    });
    return "skipped";
  }
  let fill = gap.fill;
  if (!fill) {
    const chain = defineChain({ id: gap.chainId, nativeCurrency: { symbol: "ETH", decimals: 18 } });
    const signed = await signAttempt(signer, chain, {
      nonce: gap.nonce,
      to: sender,
      data: "0x",
      value: 0n,
      gas: SELF_TRANSFER_GAS,
      fees: await suggestFees(node.public, chain),
    });
    fill = await recordNonceGapFill(deps.pool, gap, signed);
  }
  const sent = await broadcast(node.public, fill);
  deps.logger.info("nonce gap filled with a self-transfer", {
    chainId: gap.chainId,
    sender,
    nonce: gap.nonce,
    hash: fill.hash,
    broadcast: sent,
  });
  return "filled";
}

/** The runner schedule that runs the pass every `intervalMs` (`durable.nonceRecovery.intervalMs`). */
export function nonceRecoverySchedule(
  deps: Omit<NonceRecoveryDependencies, "logger">,
  intervalMs: number,
): ScheduleDefinition {
  return {
    name: SCHEDULE_NAMES.nonceRecovery,
    cadence: { kind: "every", everyMs: intervalMs },
    async run({ logger }) {
      const report = await recoverNonceGaps({ ...deps, logger: logger.child({ component: "runner" }) });
      const moved = report.filled + report.settled;
      if (report.failed > 0 && moved === 0)
        return {
          outcome: "failed",
          summary: { ...report },
          error: `${report.failed} nonce gap(s) not filled`,
        };
      return { outcome: moved > 0 ? "succeeded" : "empty", summary: { ...report } };
    },
  };
}
