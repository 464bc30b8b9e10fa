-- GET /v1/executions?code=...: the failure's code, or a held run's hold code, newest first within
-- the organisation, keyset-paged on (created_at, id). Prisma's schema cannot state an expression
-- index; the list query (src/store/pg-execution-reads.ts) writes the same expression.
CREATE INDEX "executions_org_id_failure_code_created_at_id_idx"
  ON "executions" ("org_id", (COALESCE("failure" ->> 'code', "hold" ->> 'code')), "created_at", "id")
  WHERE "failure" IS NOT NULL OR "hold" IS NOT NULL;

-- GET /v1/executions?status=held: the organisation's held runs (suspended with a hold), newest
-- first. Few rows at any time; without it a page of held runs reads every execution of the
-- organisation when none is held.
CREATE INDEX "executions_org_id_held_created_at_id_idx"
  ON "executions" ("org_id", "created_at", "id")
  WHERE "hold" IS NOT NULL;
