import type { Pool, PoolClient } from "pg";
import { TenorError } from "../../../src/errors/tenor-error.js";
import { withTransaction } from "../../../src/store/with-transaction.js";
import { addressKey } from "../../../src/values/index.js";
import { ORGANISATION_ERRORS } from "../errors.js";
import type {
  AbandonedDeployment,
  Activation,
  OrganisationSystem,
  OrganisationSystems,
  Registration,
} from "../ports.js";

/** One row of `organisation_systems`: the flows' view of a deployment, with what only the API shows. */
export interface OrganisationSystemRow extends OrganisationSystem {
  id: string;
  /** Why the deployment was declared failed; null unless it was. */
  failureReason: string | null;
}

/** What registering a deployment names: the port's own argument. */
type SystemRegistration = Parameters<OrganisationSystems["register"]>[0];

const ADDRESS = /^0x[0-9a-f]{40}$/;
const COLUMNS = `s.id::text, s.org_id, s.chain_id, s.address, s.execution_id::text, s.status::text,
  s.from_height::text, s.removed_height::text, s.failure_reason`;

/**
 * The organisations' system deployments (`organisation_systems`). Every change of one
 * organisation's rows on one chain runs under a transaction-scoped advisory lock on (org, chain),
 * so "at most one deployment running" and "at most one active system" hold without a partial
 * unique index. Each call is idempotent: a workflow step re-run after a crash finds its own row.
 */
export class PgOrganisationSystems implements OrganisationSystems {
  constructor(private readonly pool: Pool) {}

  /**
   * Registers a deployment as `deploying` (or returns the execution's existing row). Refuses, as a
   * fact, while another deployment of the organisation on the chain is registered and its
   * execution has not ended: two deployments would both read the same current system.
   */
  async register(entry: SystemRegistration): Promise<Registration> {
    const address = normalise(entry.address);
    validateChain(entry.chainId);
    if (entry.fromHeight < 0n) invalid("fromHeight", entry.fromHeight.toString(), "must be ≥ 0");
    return withTransaction(this.pool, async (client) => {
      await lockOrganisationChain(client, entry.orgId, entry.chainId);
      const own = await byExecution(client, entry.executionId);
      if (own) return { registered: true, system: own };
      const running = await client.query(
        `SELECT ${COLUMNS} FROM organisation_systems s JOIN executions e ON e.id = s.execution_id
         WHERE s.org_id = $1 AND s.chain_id = $2 AND s.status = 'deploying'
           AND e.status IN ('running', 'waiting', 'suspended')
         ORDER BY s.id LIMIT 1`,
        [entry.orgId, entry.chainId],
      );
      if (running.rows[0]) return { registered: false, blockedBy: toRow(running.rows[0]) };
      const { rows } = await client.query(
        `INSERT INTO organisation_systems AS s (org_id, chain_id, address, execution_id, status, from_height)
         VALUES ($1, $2, $3, $4, 'deploying', $5) RETURNING ${COLUMNS}`,
        [entry.orgId, entry.chainId, address, entry.executionId, entry.fromHeight.toString()],
      );
      return { registered: true, system: toRow(rows[0]) };
    });
  }

  /** The organisation's active system on `chainId`, or null. */
  async active(orgId: string, chainId: number): Promise<OrganisationSystemRow | null> {
    const { rows } = await this.pool.query(
      `SELECT ${COLUMNS} FROM organisation_systems s
       WHERE s.org_id = $1 AND s.chain_id = $2 AND s.status = 'active'`,
      [orgId, chainId],
    );
    return rows[0] ? toRow(rows[0]) : null;
  }

  /** Every deployment of the organisation (on `chainId` when given), newest first. */
  async list(orgId: string, chainId?: number): Promise<OrganisationSystemRow[]> {
    const { rows } = await this.pool.query(
      `SELECT ${COLUMNS} FROM organisation_systems s
       WHERE s.org_id = $1 AND ($2::int IS NULL OR s.chain_id = $2) ORDER BY s.id DESC`,
      [orgId, chainId ?? null],
    );
    return rows.map(toRow);
  }

  /**
   * Records the execution's deployment as the organisation's system: the previous active one
   * becomes `replaced` at `replacedAtHeight`, in one transaction. Idempotent (an active row is
   * returned as it is). A deployment already declared failed is not revived: `activated: false`.
   * @throws TenorError ORGANISATION_SYSTEM_NOT_FOUND when the execution registered nothing.
   */
  async activate(executionId: string, replacedAtHeight: bigint): Promise<Activation> {
    const found = await this.deployment(executionId);
    if (!found)
      throw new TenorError(
        ORGANISATION_ERRORS.ORGANISATION_SYSTEM_NOT_FOUND,
        `execution ${executionId} registered no organisation system`,
        { details: { executionId } },
      );
    return withTransaction(this.pool, async (client) => {
      await lockOrganisationChain(client, found.orgId, found.chainId);
      const row = (await byExecution(client, executionId)) ?? found;
      if (row.status === "active") return { activated: true, system: row, replaced: null };
      if (row.status !== "deploying") return { activated: false, system: row };
      const previous = await client.query(
        `UPDATE organisation_systems s SET status = 'replaced', removed_height = $3, ended_at = now()
         WHERE s.org_id = $1 AND s.chain_id = $2 AND s.status = 'active' RETURNING ${COLUMNS}`,
        [row.orgId, row.chainId, replacedAtHeight.toString()],
      );
      const { rows } = await client.query(
        `UPDATE organisation_systems s SET status = 'active', activated_at = now()
         WHERE s.execution_id = $1 RETURNING ${COLUMNS}`,
        [executionId],
      );
      return {
        activated: true,
        system: toRow(rows[0]),
        replaced: previous.rows[0] ? toRow(previous.rows[0]) : null,
      };
    });
  }

  /**
   * Deployments to settle, oldest first: `deploying` ones whose execution failed (a cancel ends
   * as failed) or no longer exists, and `failed` ones whose system is still in the indexing scope
   * (the schedule stopped between its two writes).
   */
  async abandoned(limit: number): Promise<AbandonedDeployment[]> {
    const { rows } = await this.pool.query(
      `SELECT ${COLUMNS}, e.id IS NULL AS missing, e.failure->>'code' AS failure_code
       FROM organisation_systems s LEFT JOIN executions e ON e.id = s.execution_id
       WHERE (s.status = 'deploying' AND (e.id IS NULL OR e.status = 'failed'))
          OR (s.status = 'failed' AND EXISTS (
                SELECT 1 FROM ledger_scope l
                WHERE l.chain_id = s.chain_id AND l.org_id = s.org_id AND l.address = s.address
                  AND l.kind = 'system-settings' AND l.removed_height IS NULL))
       ORDER BY s.id LIMIT $1`,
      [limit],
    );
    return rows.map((r) => ({
      system: toRow(r),
      reason:
        r.status === "failed" ? "scope-not-released" : r.missing ? "execution-missing" : "execution-failed",
      failureCode: r.failure_code ?? null,
    }));
  }

  /**
   * Declares a `deploying` deployment failed at `removedHeight`; null when it is no longer
   * deploying (it was recorded, or already declared failed).
   */
  async markFailed(
    executionId: string,
    removedHeight: bigint,
    reason: string,
  ): Promise<OrganisationSystemRow | null> {
    const { rows } = await this.pool.query(
      `UPDATE organisation_systems s
       SET status = 'failed', removed_height = GREATEST($2::bigint, s.from_height), failure_reason = $3, ended_at = now()
       WHERE s.execution_id = $1 AND s.status = 'deploying' RETURNING ${COLUMNS}`,
      [executionId, removedHeight.toString(), reason],
    );
    return rows[0] ? toRow(rows[0]) : null;
  }

  /** The deployment registered by `executionId`, or null. */
  deployment(executionId: string): Promise<OrganisationSystemRow | null> {
    return byExecution(this.pool, executionId);
  }
}

async function lockOrganisationChain(client: PoolClient, orgId: string, chainId: number): Promise<void> {
  await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 746015))", [
    `organisation-system:${chainId}:${orgId}`,
  ]);
}

async function byExecution(
  client: Pool | PoolClient,
  executionId: string,
): Promise<OrganisationSystemRow | null> {
  const { rows } = await client.query(
    `SELECT ${COLUMNS} FROM organisation_systems s WHERE s.execution_id = $1`,
    [executionId],
  );
  return rows[0] ? toRow(rows[0]) : null;
}

function toRow(r: Record<string, string | number | null>): OrganisationSystemRow {
  return {
    id: r.id as string,
    orgId: r.org_id as string,
    chainId: Number(r.chain_id),
    address: r.address as string,
    executionId: r.execution_id as string,
    status: r.status as OrganisationSystemRow["status"],
    fromHeight: BigInt(r.from_height as string),
    removedHeight: r.removed_height === null ? null : BigInt(r.removed_height as string),
    failureReason: (r.failure_reason as string | null) ?? null,
  };
}

function normalise(address: string): string {
  const lower = addressKey(address);
  if (!ADDRESS.test(lower)) invalid("address", address, "must be 0x + 40 hex digits");
  return lower;
}

function validateChain(chainId: number): void {
  if (!Number.isInteger(chainId) || chainId < 1) invalid("chainId", chainId, "must be an integer ≥ 1");
}

function invalid(field: string, value: unknown, rule: string): never {
  throw new TenorError(ORGANISATION_ERRORS.ORGANISATION_SYSTEM_INVALID, `${field} = ${value}: ${rule}`, {
    details: { field, value, rule },
  });
}
