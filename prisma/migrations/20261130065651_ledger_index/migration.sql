-- CreateTable
CREATE TABLE "ledger_scope" (
    "id" BIGSERIAL NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "org_id" TEXT NOT NULL,
    "address" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "added_height" BIGINT NOT NULL,
    "removed_height" BIGINT,
    "backfill_spawned" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "removed_at" TIMESTAMPTZ(3),

    CONSTRAINT "ledger_scope_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ledger_chains" (
    "chain_id" INTEGER NOT NULL,
    "indexed_height" BIGINT NOT NULL,
    "indexed_hash" TEXT NOT NULL,
    "indexed_block_time" TIMESTAMPTZ(3) NOT NULL,
    "head_height" BIGINT NOT NULL,
    "head_block_time" TIMESTAMPTZ(3) NOT NULL,
    "last_reorg_depth" INTEGER NOT NULL DEFAULT 0,
    "last_reorg_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ledger_chains_pkey" PRIMARY KEY ("chain_id")
);

-- CreateTable
CREATE TABLE "ledger_blocks" (
    "chain_id" INTEGER NOT NULL,
    "height" BIGINT NOT NULL,
    "hash" TEXT NOT NULL,
    "parent_hash" TEXT NOT NULL,
    "block_time" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "ledger_blocks_pkey" PRIMARY KEY ("chain_id","height")
);

-- CreateTable
CREATE TABLE "ledger_erc20_transfers" (
    "chain_id" INTEGER NOT NULL,
    "block_number" BIGINT NOT NULL,
    "log_index" INTEGER NOT NULL,
    "block_hash" TEXT NOT NULL,
    "tx_hash" TEXT NOT NULL,
    "token" TEXT NOT NULL,
    "from_address" TEXT NOT NULL,
    "to_address" TEXT NOT NULL,
    "value" DECIMAL(78,0) NOT NULL,

    CONSTRAINT "ledger_erc20_transfers_pkey" PRIMARY KEY ("chain_id","block_number","log_index")
);

-- CreateTable
CREATE TABLE "ledger_erc20_balances" (
    "chain_id" INTEGER NOT NULL,
    "token" TEXT NOT NULL,
    "holder" TEXT NOT NULL,
    "balance" DECIMAL(78,0) NOT NULL,

    CONSTRAINT "ledger_erc20_balances_pkey" PRIMARY KEY ("chain_id","token","holder")
);

-- CreateTable
CREATE TABLE "ledger_erc20_supplies" (
    "chain_id" INTEGER NOT NULL,
    "token" TEXT NOT NULL,
    "total_supply" DECIMAL(78,0) NOT NULL,

    CONSTRAINT "ledger_erc20_supplies_pkey" PRIMARY KEY ("chain_id","token")
);

-- CreateTable
CREATE TABLE "ledger_ranges" (
    "id" BIGSERIAL NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "address" TEXT NOT NULL,
    "from_block" BIGINT NOT NULL,
    "to_block" BIGINT NOT NULL,
    "next_block" BIGINT NOT NULL,
    "lease_owner" TEXT,
    "lease_epoch" BIGINT NOT NULL DEFAULT 0,
    "lease_expires_at" TIMESTAMPTZ(3),
    "completed_at" TIMESTAMPTZ(3),
    "completed_by" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ledger_ranges_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "ledger_scope_chain_id_address_idx" ON "ledger_scope"("chain_id", "address");

-- CreateIndex
CREATE INDEX "ledger_scope_chain_id_org_id_address_kind_idx" ON "ledger_scope"("chain_id", "org_id", "address", "kind");

-- CreateIndex
CREATE INDEX "ledger_erc20_transfers_chain_id_token_to_address_idx" ON "ledger_erc20_transfers"("chain_id", "token", "to_address");

-- CreateIndex
CREATE INDEX "ledger_erc20_transfers_chain_id_token_from_address_idx" ON "ledger_erc20_transfers"("chain_id", "token", "from_address");

-- CreateIndex
CREATE INDEX "ledger_ranges_chain_id_completed_at_idx" ON "ledger_ranges"("chain_id", "completed_at");
