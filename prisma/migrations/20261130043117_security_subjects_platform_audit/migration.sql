-- AlterEnum
-- This migration adds more than one value to an enum.
-- With PostgreSQL versions 11 and earlier, this is not possible
-- in a single migration. This can be worked around by creating
-- multiple migrations, each migration adding only one value to
-- the enum.


ALTER TYPE "ApiRole" ADD VALUE 'platform-operator';
ALTER TYPE "ApiRole" ADD VALUE 'platform-admin';

-- DropIndex
DROP INDEX "approval_votes_execution_id_name_position_approver_key_id_key";

-- AlterTable: keys issued before subjects existed take their name as their subject.
ALTER TABLE "api_keys" ADD COLUMN     "subject" TEXT,
ALTER COLUMN "org_id" DROP NOT NULL;
UPDATE "api_keys" SET "subject" = "name";
ALTER TABLE "api_keys" ALTER COLUMN "subject" SET NOT NULL;

-- AlterTable: votes cast before subjects existed count under their key's subject (else its id).
ALTER TABLE "approval_votes" ADD COLUMN     "approver_subject" TEXT;
UPDATE "approval_votes" v SET "approver_subject" = COALESCE(
  (SELECT k."subject" FROM "api_keys" k WHERE k."id" = v."approver_key_id"), v."approver_key_id"::text);
ALTER TABLE "approval_votes" ALTER COLUMN "approver_subject" SET NOT NULL;

-- CreateTable
CREATE TABLE "audit_events" (
    "id" BIGSERIAL NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "actor_key_id" UUID,
    "subject" TEXT NOT NULL,
    "org_id" TEXT,
    "role" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "target" TEXT NOT NULL,
    "request_id" TEXT,
    "outcome" TEXT NOT NULL,

    CONSTRAINT "audit_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "audit_events_org_id_id_idx" ON "audit_events"("org_id", "id");

-- CreateIndex
CREATE UNIQUE INDEX "approval_votes_execution_id_name_position_approver_subject_key" ON "approval_votes"("execution_id", "name", "position", "approver_subject");

-- The audit trail is append-only: UPDATE and DELETE change nothing. (Rules rather than a raising
-- trigger: migrations are run statement by statement, split at semicolons, so no function bodies.)
CREATE RULE "audit_events_no_update" AS ON UPDATE TO "audit_events" DO INSTEAD NOTHING;
CREATE RULE "audit_events_no_delete" AS ON DELETE TO "audit_events" DO INSTEAD NOTHING;
