-- CreateTable
CREATE TABLE "execution_resets" (
    "id" UUID NOT NULL,
    "execution_id" UUID NOT NULL,
    "org_id" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "from_version" INTEGER NOT NULL,
    "to_version" INTEGER NOT NULL,
    "from_status" TEXT NOT NULL,
    "actor" JSONB,
    "reason" TEXT,
    "idempotency_key" TEXT,
    "request_hash" TEXT NOT NULL,
    "set_aside" INTEGER NOT NULL,
    "signals_returned" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "execution_resets_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "journal_set_aside" (
    "reset_id" UUID NOT NULL,
    "execution_id" UUID NOT NULL,
    "position" INTEGER NOT NULL,
    "kind" "JournalKind" NOT NULL,
    "name" TEXT NOT NULL,
    "state" "JournalState" NOT NULL,
    "result" JSONB,
    "error" JSONB,
    "attempts" INTEGER NOT NULL,
    "turn" INTEGER NOT NULL,
    "seq" INTEGER,
    "cause" INTEGER,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "journal_set_aside_pkey" PRIMARY KEY ("reset_id","position")
);

-- CreateIndex
CREATE INDEX "execution_resets_execution_id_created_at_idx" ON "execution_resets"("execution_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "execution_resets_execution_id_idempotency_key_key" ON "execution_resets"("execution_id", "idempotency_key");

-- CreateIndex
CREATE INDEX "journal_set_aside_execution_id_idx" ON "journal_set_aside"("execution_id");

-- AddForeignKey
ALTER TABLE "execution_resets" ADD CONSTRAINT "execution_resets_execution_id_fkey" FOREIGN KEY ("execution_id") REFERENCES "executions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "journal_set_aside" ADD CONSTRAINT "journal_set_aside_reset_id_fkey" FOREIGN KEY ("reset_id") REFERENCES "execution_resets"("id") ON DELETE CASCADE ON UPDATE CASCADE;
