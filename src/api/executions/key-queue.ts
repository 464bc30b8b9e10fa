import { z } from "zod";
import { nonceEntity } from "../../chain/nonce-entity.js";
import type { KeyLine, KeyLineReader } from "../../keyed/key-line.js";
import type { ExecutionRecord } from "../../store/pg-execution-reads.js";

/**
 * Who holds the key a run waits for, and where the run stands in line (docs/keyed.md, "Who holds
 * the key"): the `keyQueue` of `GET /v1/executions/{id}`. Keys are not per organisation (two
 * organisations' runs may share one), so a holder of another organisation is never named.
 */

/** What the view says in place of a holder of another organisation. */
export const OTHER_ORGANISATION_HOLDER = "an execution of another organisation";

/** What it says of a holding command no execution sent (its command id names none). */
export const NO_EXECUTION_HOLDER = "a command sent outside any execution";

const HolderSchema = z
  .object({
    executionId: z.uuid().nullable().meta({
      description:
        "The holding execution; null when it belongs to another organisation (or is no execution).",
    }),
    workflow: z.string().nullable(),
    description: z.string().meta({
      description: `The holder in words: its workflow and id, or "${OTHER_ORGANISATION_HOLDER}".`,
    }),
    since: z.string().meta({
      description:
        "When it reached the head of the line (ISO 8601): the later of its arrival and the end of the key's " +
        "previous run, from PostgreSQL.",
    }),
    heldMs: z
      .number()
      .int()
      .min(0)
      .meta({ description: "How long it has held the key, at the time of the read." }),
  })
  .meta({ id: "KeyHolder" });

export const KeyQueueEntrySchema = z
  .object({
    kind: z.enum(["key", "nonce", "entity"]).meta({
      description:
        "`key`: a keyed workflow's start waiting for its key; `nonce`: a nonce reservation waiting behind " +
        "another of the same sender and chain; `entity`: another keyed entity's command.",
    }),
    entity: z
      .string()
      .nullable()
      .meta({ description: "The keyed entity (`chain.nonce`); null for a workflow key." }),
    key: z.string(),
    chainId: z.number().int().optional().meta({ description: "A nonce reservation's chain." }),
    sender: z.string().optional().meta({ description: "A nonce reservation's sender address." }),
    position: z.number().int().min(1).meta({ description: "This run's place in line: 1 is next." }),
    holders: z.number().int().min(0).meta({ description: "How many hold the key now (at most its limit)." }),
    holder: HolderSchema.nullable().meta({
      description: "The longest-holding of them; null while none holds it (the line is moving).",
    }),
  })
  .meta({ id: "KeyQueueEntry" });

export type KeyQueueEntry = z.infer<typeof KeyQueueEntrySchema>;

/** The entities whose commands carry the sending execution's id as command id (src/keyed/key-line.ts). */
export const EXECUTION_SENT_ENTITIES: readonly string[] = [nonceEntity.name];

/** A nonce key `<chainId>:<sender>` (src/chain/nonce-entity.ts), split; null for any other form. */
function nonceKey(key: string): { chainId: number; sender: string } | null {
  const at = key.indexOf(":");
  const chainId = Number(key.slice(0, at));
  return at > 0 && Number.isSafeInteger(chainId) ? { chainId, sender: key.slice(at + 1) } : null;
}

function holderOf(line: KeyLine, viewerOrgId: string, now: Date): KeyQueueEntry["holder"] {
  const h = line.holder;
  if (!h) return null;
  const heldMs = Math.max(0, now.getTime() - h.since.getTime());
  const since = h.since.toISOString();
  if (h.executionId === null) {
    return { executionId: null, workflow: null, description: NO_EXECUTION_HOLDER, since, heldMs };
  }
  if (h.orgId !== viewerOrgId) {
    return { executionId: null, workflow: null, description: OTHER_ORGANISATION_HOLDER, since, heldMs };
  }
  const description = `${h.workflow} ${h.executionId}`;
  return { executionId: h.executionId, workflow: h.workflow, description, since, heldMs };
}

/** The view's `keyQueue` for a run of `viewerOrgId`, read at `now`. */
export function keyQueueOf(lines: readonly KeyLine[], viewerOrgId: string, now: Date): KeyQueueEntry[] {
  return lines.map((line) => {
    const base = {
      key: line.key,
      position: line.position,
      holders: line.holders,
      holder: holderOf(line, viewerOrgId, now),
    };
    if (line.entity === "@workflow") return { kind: "key", entity: null, ...base };
    const nonce = line.entity === nonceEntity.name ? nonceKey(line.key) : null;
    if (nonce) return { kind: "nonce", entity: line.entity, ...nonce, ...base };
    return { kind: "entity", entity: line.entity, ...base };
  });
}

/** The `keyQueue` of a run as its own organisation sees it now; a finished run waits for no key. */
export async function keyQueueFor(
  reader: KeyLineReader,
  record: Pick<ExecutionRecord, "id" | "orgId" | "status">,
): Promise<KeyQueueEntry[]> {
  if (record.status === "completed" || record.status === "failed") return [];
  return keyQueueOf(await reader.linesOf(record.id), record.orgId, new Date());
}

/** `key account:1`, `nonce of 0xab… on chain 31337`, `entity queue.x key k`. */
export function lineName(
  entry: Pick<KeyQueueEntry, "kind" | "entity" | "key" | "chainId" | "sender">,
): string {
  if (entry.kind === "nonce") return `nonce of ${entry.sender} on chain ${entry.chainId}`;
  if (entry.kind === "entity") return `${entry.entity} key ${entry.key}`;
  return `key ${entry.key}`;
}

/** `1 (next)`, `2`. */
export function positionText(position: number): string {
  return position === 1 ? "1 (next)" : String(position);
}
