import { z } from "zod";
import type { WaitDescriptor } from "../../engine/execution-store.js";
import type { ExecutionRecord } from "../../store/pg-execution-reads.js";

/**
 * A parent waiting for a child that waits for gas funding shows that funding request in its own
 * `child` wait (docs/chains.md, "Funding"): a corporate action whose batch write ran dry says which
 * wallet needs how much, by when, without opening the child. Read when the run is read, from the
 * child's own projection, so it is as current as the child.
 */

/** How far down a line of `child` waits the funding request is looked for (parent → child → grandchild). */
const MAX_DEPTH = 3;

export const ChildFundingSchema = z
  .object({
    executionId: z.uuid().meta({ description: "The run that waits for funding (a `chain.transaction`)." }),
    workflow: z.string(),
    chainId: z.number().int(),
    address: z.string().meta({
      description:
        "The wallet to fund: the sender, or for a paymaster the account whose EntryPoint deposit pays.",
    }),
    destination: z.record(z.string(), z.unknown()).meta({
      description: "`{ kind: balance, address }` or `{ kind: entryPointDeposit, entryPoint, account }`.",
    }),
    requiredWei: z
      .string()
      .meta({ description: "What the wallet must hold, in wei, for the write to go on." }),
    availableWei: z.string(),
    shortfallWei: z.string(),
    deadline: z.string().meta({
      description: "The write's funding deadline (ISO 8601); past it the write fails GAS_REQUIRED.",
    }),
  })
  .meta({ id: "ChildFunding" });

export type ChildFunding = z.infer<typeof ChildFundingSchema>;

/** Reads one run of an organisation (the API's execution reads). */
export type RunReader = (orgId: string, executionId: string) => Promise<ExecutionRecord | null>;

/**
 * `record` with each `child` wait whose child (or a child of it) waits for gas funding carrying
 * `details.funding` (ChildFunding). Other waits, and runs that do not wait, are returned as they are.
 */
export async function withChildFunding(read: RunReader, record: ExecutionRecord): Promise<ExecutionRecord> {
  if (record.status !== "waiting" && record.status !== "suspended") return record;
  const waits = record.waitingFor ?? [];
  if (!waits.some((w) => w.kind === "child")) return record;
  const shown = await Promise.all(
    waits.map(async (wait) => {
      const funding = await fundingBelow(read, record.orgId, wait, MAX_DEPTH);
      return funding ? { ...wait, details: { ...wait.details, funding } } : wait;
    }),
  );
  return { ...record, waitingFor: shown };
}

async function fundingBelow(
  read: RunReader,
  orgId: string,
  wait: WaitDescriptor,
  depth: number,
): Promise<ChildFunding | null> {
  const childId = wait.details?.childId;
  if (wait.kind !== "child" || typeof childId !== "string" || depth === 0) return null;
  const child = await read(orgId, childId);
  if (child?.status !== "waiting") return null;
  for (const w of child.waitingFor ?? []) {
    if (w.kind === "funding") {
      const funding = fundingOf(child, w);
      if (funding) return funding;
    }
    const deeper = await fundingBelow(read, orgId, w, depth - 1);
    if (deeper) return deeper;
  }
  return null;
}

function fundingOf(child: ExecutionRecord, wait: WaitDescriptor): ChildFunding | null {
  const d = wait.details ?? {};
  const destination = d.destination as Record<string, unknown> | undefined;
  const address = destination?.kind === "entryPointDeposit" ? destination.account : destination?.address;
  if (typeof address !== "string" || typeof d.chainId !== "number") return null;
  return {
    executionId: child.id,
    workflow: child.workflow,
    chainId: d.chainId,
    address,
    destination: destination ?? {},
    requiredWei: String(d.requiredWei),
    availableWei: String(d.availableWei),
    shortfallWei: String(d.shortfallWei),
    deadline: String(d.deadline ?? wait.until ?? ""),
  };
}

/** The funding a `child` wait carries (set by {@link withChildFunding}), if any. */
export function childFundingOf(wait: Pick<WaitDescriptor, "kind" | "details">): ChildFunding | null {
  if (wait.kind !== "child") return null;
  const parsed = ChildFundingSchema.safeParse(wait.details?.funding);
  return parsed.success ? parsed.data : null;
}

/** `gas funding: 0xab… needs 21000 wei more (holds 0 of 21000) on chain 31337 before <deadline>, for chain.transaction <id>`. */
export function childFundingSummary(f: ChildFunding): string {
  return (
    `gas funding: ${f.address} needs ${f.shortfallWei} wei more (holds ${f.availableWei} of ${f.requiredWei}) ` +
    `on chain ${f.chainId} before ${f.deadline}, for ${f.workflow} ${f.executionId}`
  );
}
