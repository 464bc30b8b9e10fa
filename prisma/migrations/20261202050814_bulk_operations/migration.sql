-- CreateTable
CREATE TABLE "operations" (
    "id" UUID NOT NULL,
    "org_id" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "filter" JSONB NOT NULL,
    "params" JSONB NOT NULL,
    "status" TEXT NOT NULL,
    "total" INTEGER NOT NULL,
    "succeeded" INTEGER NOT NULL DEFAULT 0,
    "failed" INTEGER NOT NULL DEFAULT 0,
    "created_by" JSONB NOT NULL,
    "abort_requested_by" JSONB,
    "abort_requested_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "operations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "operation_items" (
    "operation_id" UUID NOT NULL,
    "execution_id" UUID NOT NULL,
    "attempted_at" TIMESTAMPTZ(3),
    "outcome" TEXT,
    "code" TEXT,
    "message" TEXT,
    "done_at" TIMESTAMPTZ(3),

    CONSTRAINT "operation_items_pkey" PRIMARY KEY ("operation_id","execution_id")
);

-- CreateIndex
CREATE INDEX "operations_org_id_created_at_idx" ON "operations"("org_id", "created_at" DESC);

-- CreateIndex
CREATE INDEX "operations_status_idx" ON "operations"("status");

-- AddForeignKey
ALTER TABLE "operation_items" ADD CONSTRAINT "operation_items_operation_id_fkey" FOREIGN KEY ("operation_id") REFERENCES "operations"("id") ON DELETE CASCADE ON UPDATE CASCADE;
