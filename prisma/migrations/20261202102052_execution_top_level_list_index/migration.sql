-- GET /v1/executions lists top-level runs by default (children only with includeChildren=true):
-- the organisation's runs without a parent, newest first, keyset-paged on (created_at, id). A
-- corporate action or a batch mint starts many child transactions, so without it a page of
-- top-level runs reads past every child of the organisation. Prisma's schema cannot state a
-- partial index; the list query (src/store/pg-execution-reads.ts) writes the same predicate.
CREATE INDEX "executions_org_id_top_level_created_at_id_idx"
  ON "executions" ("org_id", "created_at", "id")
  WHERE "parent_id" IS NULL;
