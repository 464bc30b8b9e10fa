-- CreateTable
CREATE TABLE "nonce_gap_fills" (
    "chain_id" BIGINT NOT NULL,
    "sender" TEXT NOT NULL,
    "nonce" BIGINT NOT NULL,
    "command_id" TEXT NOT NULL,
    "raw" TEXT,
    "hash" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "settled_at" TIMESTAMPTZ(3),

    CONSTRAINT "nonce_gap_fills_pkey" PRIMARY KEY ("chain_id","sender","nonce")
);

-- CreateIndex
CREATE INDEX "nonce_gap_fills_settled_at_idx" ON "nonce_gap_fills"("settled_at");
