import type { KeyLine, KeyLineReader } from "../key-line.js";
import type { Queryable } from "./pg-keyed-commands.js";

const UUID_PATTERN = "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$";

/**
 * The lines one execution is queued in (src/keyed/key-line.ts), from `keyed_commands` alone.
 *
 * `mine`: its queued admission (`@workflow`, id = execution id) and its queued commands of the
 * given entities (command id = execution id), found through the primary key and the unique
 * `(entity, command_id)` index. Per line, `ahead` counts the queued rows of the key with a lower
 * seq. Who holds the key: for workflows the `running` admissions of the key; for entities the first
 * `key_limit` queued rows by seq (Redis promotes a lane's head, and PostgreSQL marks an entity
 * command only when it is done). `since` is the later of the holder's arrival and the completion of
 * the key's row just before it: when the holder reached the head of the line.
 */
const KEY_LINES_SQL = `
  WITH mine AS (
    SELECT k.seq, k.entity, k.key, k.key_limit FROM keyed_commands k
    WHERE k.status = 'queued'
      AND ((k.entity = '@workflow' AND k.id = $1::uuid)
        OR (k.entity, k.command_id) IN (SELECT e, $1::text FROM unnest($2::text[]) AS e))
  )
  SELECT m.entity, m.key, m.key_limit, a.ahead::int AS ahead, n.holders::int AS holders,
         x.id AS holder_execution, x.workflow AS holder_workflow, x.org_id AS holder_org,
         GREATEST(f.created_at, p.completed_at) AS holder_since
  FROM mine m
  CROSS JOIN LATERAL (
    SELECT count(*) AS ahead FROM keyed_commands q
    WHERE q.entity = m.entity AND q.key = m.key AND q.status = 'queued' AND q.seq < m.seq
  ) a
  CROSS JOIN LATERAL (
    SELECT count(*) AS holders FROM (
      SELECT 1 FROM keyed_commands q
      WHERE q.entity = m.entity AND q.key = m.key
        AND ((m.entity = '@workflow' AND q.status = 'running')
          OR (m.entity <> '@workflow' AND q.status = 'queued' AND q.seq < m.seq))
      ORDER BY q.seq LIMIT m.key_limit
    ) h
  ) n
  LEFT JOIN LATERAL (
    SELECT q.seq, q.command_id, q.created_at FROM keyed_commands q
    WHERE q.entity = m.entity AND q.key = m.key
      AND ((m.entity = '@workflow' AND q.status = 'running')
        OR (m.entity <> '@workflow' AND q.status = 'queued' AND q.seq < m.seq))
    ORDER BY q.seq LIMIT 1
  ) f ON true
  LEFT JOIN LATERAL (
    SELECT q.completed_at FROM keyed_commands q
    WHERE q.entity = m.entity AND q.key = m.key AND q.seq < f.seq
    ORDER BY q.seq DESC LIMIT 1
  ) p ON true
  LEFT JOIN executions x
    ON x.id = CASE WHEN f.command_id ~* '${UUID_PATTERN}' THEN f.command_id::uuid END
  ORDER BY m.seq`;

interface LineRow {
  entity: string;
  key: string;
  key_limit: number;
  ahead: number;
  holders: number;
  holder_execution: string | null;
  holder_workflow: string | null;
  holder_org: string | null;
  holder_since: Date | null;
}

/** Where each of an execution's queued rows stands; an entity command already in flight is left out. */
export async function readKeyLines(
  db: Queryable,
  executionId: string,
  entities: readonly string[],
): Promise<KeyLine[]> {
  const { rows } = await db.query<LineRow>(KEY_LINES_SQL, [executionId, entities]);
  const lines: KeyLine[] = [];
  for (const row of rows) {
    const workflow = row.entity === "@workflow";
    // An entity's first `key_limit` queued commands are the ones in flight: this one is handled now.
    if (!workflow && row.ahead < row.key_limit) continue;
    lines.push({
      entity: row.entity,
      key: row.key,
      position: workflow ? row.ahead + 1 : row.ahead - row.key_limit + 1,
      holders: row.holders,
      holder:
        row.holders > 0 && row.holder_since
          ? {
              executionId: row.holder_execution,
              workflow: row.holder_workflow,
              orgId: row.holder_org,
              since: row.holder_since,
            }
          : null,
    });
  }
  return lines;
}

/**
 * The key-line reader over a pool: `entities` names the entities whose commands carry the sending
 * execution's id as command id (the chain boundary's nonce entity), so their lines are looked up.
 */
export class PgKeyLines implements KeyLineReader {
  constructor(
    private readonly db: Queryable,
    private readonly entities: readonly string[],
  ) {}

  linesOf(executionId: string): Promise<KeyLine[]> {
    return readKeyLines(this.db, executionId, this.entities);
  }
}
