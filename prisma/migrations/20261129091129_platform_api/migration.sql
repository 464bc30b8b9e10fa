-- CreateEnum
CREATE TYPE "ApiRole" AS ENUM ('integrator', 'approver', 'operator', 'admin');

-- CreateEnum
CREATE TYPE "ApprovalDecision" AS ENUM ('approve', 'reject');

-- AlterTable
ALTER TABLE "executions" ADD COLUMN     "cancel_requested_at" TIMESTAMPTZ(3),
ADD COLUMN     "created_by" UUID,
ADD COLUMN     "idempotency_expires_at" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" UUID NOT NULL,
    "org_id" TEXT NOT NULL,
    "role" "ApiRole" NOT NULL,
    "name" TEXT NOT NULL,
    "key_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "approval_votes" (
    "id" BIGSERIAL NOT NULL,
    "execution_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "approver_key_id" UUID NOT NULL,
    "approver_name" TEXT NOT NULL,
    "approver_role" "ApiRole" NOT NULL,
    "decision" "ApprovalDecision" NOT NULL,
    "params_hash" TEXT NOT NULL,
    "reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "approval_votes_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_key_hash_key" ON "api_keys"("key_hash");

-- CreateIndex
CREATE INDEX "api_keys_org_id_idx" ON "api_keys"("org_id");

-- CreateIndex
CREATE UNIQUE INDEX "approval_votes_execution_id_name_position_approver_key_id_key" ON "approval_votes"("execution_id", "name", "position", "approver_key_id");

-- CreateIndex
CREATE INDEX "executions_org_id_created_at_id_idx" ON "executions"("org_id", "created_at", "id");

-- AddForeignKey
ALTER TABLE "approval_votes" ADD CONSTRAINT "approval_votes_execution_id_fkey" FOREIGN KEY ("execution_id") REFERENCES "executions"("id") ON DELETE CASCADE ON UPDATE CASCADE;
