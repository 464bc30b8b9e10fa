-- CreateEnum
CREATE TYPE "ExecutionStatus" AS ENUM ('running', 'waiting', 'suspended', 'completed', 'failed');

-- CreateEnum
CREATE TYPE "JournalKind" AS ENUM ('step', 'sleep', 'signal', 'child', 'condition', 'now', 'uuid', 'random');

-- CreateEnum
CREATE TYPE "JournalState" AS ENUM ('pending', 'ok', 'error');

-- CreateTable
CREATE TABLE "executions" (
    "id" UUID NOT NULL,
    "workflow" TEXT NOT NULL,
    "workflow_version" INTEGER NOT NULL,
    "org_id" TEXT NOT NULL DEFAULT 'default',
    "key" TEXT,
    "idempotency_key" TEXT,
    "request_hash" TEXT,
    "status" "ExecutionStatus" NOT NULL,
    "input" JSONB NOT NULL,
    "output" JSONB,
    "failure" JSONB,
    "waiting_for" JSONB,
    "wake_at" TIMESTAMPTZ(3),
    "hold" JSONB,
    "progress" JSONB,
    "turn" INTEGER NOT NULL DEFAULT 0,
    "recovery_attempts" INTEGER NOT NULL DEFAULT 0,
    "suspended_since" TIMESTAMPTZ(3),
    "parent_id" UUID,
    "parent_position" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "executions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "journal_entries" (
    "execution_id" UUID NOT NULL,
    "position" INTEGER NOT NULL,
    "kind" "JournalKind" NOT NULL,
    "name" TEXT NOT NULL,
    "state" "JournalState" NOT NULL,
    "result" JSONB,
    "error" JSONB,
    "attempts" INTEGER NOT NULL DEFAULT 1,
    "turn" INTEGER NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "journal_entries_pkey" PRIMARY KEY ("execution_id","position")
);

-- CreateTable
CREATE TABLE "signals" (
    "id" BIGSERIAL NOT NULL,
    "execution_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "idempotency_key" TEXT,
    "consumed_position" INTEGER,
    "consumed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "signals_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "executions_status_updated_at_idx" ON "executions"("status", "updated_at");

-- CreateIndex
CREATE INDEX "executions_parent_id_idx" ON "executions"("parent_id");

-- CreateIndex
CREATE INDEX "executions_workflow_created_at_idx" ON "executions"("workflow", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "executions_org_id_idempotency_key_key" ON "executions"("org_id", "idempotency_key");

-- CreateIndex
CREATE INDEX "signals_execution_id_name_id_idx" ON "signals"("execution_id", "name", "id");

-- CreateIndex
CREATE UNIQUE INDEX "signals_execution_id_idempotency_key_key" ON "signals"("execution_id", "idempotency_key");

-- AddForeignKey
ALTER TABLE "journal_entries" ADD CONSTRAINT "journal_entries_execution_id_fkey" FOREIGN KEY ("execution_id") REFERENCES "executions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "signals" ADD CONSTRAINT "signals_execution_id_fkey" FOREIGN KEY ("execution_id") REFERENCES "executions"("id") ON DELETE CASCADE ON UPDATE CASCADE;
