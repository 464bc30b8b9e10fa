-- CreateTable
CREATE TABLE "ledger_price_feeds" (
    "chain_id" INTEGER NOT NULL,
    "block_number" BIGINT NOT NULL,
    "log_index" INTEGER NOT NULL,
    "block_hash" TEXT NOT NULL,
    "tx_hash" TEXT NOT NULL,
    "feed" TEXT NOT NULL,
    "asset" TEXT NOT NULL,
    "owner" TEXT NOT NULL,
    "decimals" INTEGER NOT NULL,

    CONSTRAINT "ledger_price_feeds_pkey" PRIMARY KEY ("chain_id","block_number","log_index")
);

-- CreateTable
CREATE TABLE "ledger_price_observations" (
    "chain_id" INTEGER NOT NULL,
    "block_number" BIGINT NOT NULL,
    "log_index" INTEGER NOT NULL,
    "block_hash" TEXT NOT NULL,
    "tx_hash" TEXT NOT NULL,
    "feed" TEXT NOT NULL,
    "round_id" DECIMAL(78,0) NOT NULL,
    "answer" DECIMAL(78,0) NOT NULL,
    "updated_at" DECIMAL(78,0) NOT NULL,

    CONSTRAINT "ledger_price_observations_pkey" PRIMARY KEY ("chain_id","block_number","log_index")
);

-- CreateTable
CREATE TABLE "ledger_staleness_bounds" (
    "chain_id" INTEGER NOT NULL,
    "block_number" BIGINT NOT NULL,
    "log_index" INTEGER NOT NULL,
    "block_hash" TEXT NOT NULL,
    "tx_hash" TEXT NOT NULL,
    "resolver" TEXT NOT NULL,
    "asset" TEXT NOT NULL,
    "feed" TEXT NOT NULL,
    "max_age_seconds" DECIMAL(78,0) NOT NULL,

    CONSTRAINT "ledger_staleness_bounds_pkey" PRIMARY KEY ("chain_id","block_number","log_index")
);

-- CreateTable
CREATE TABLE "ledger_setting_changes" (
    "chain_id" INTEGER NOT NULL,
    "block_number" BIGINT NOT NULL,
    "log_index" INTEGER NOT NULL,
    "block_hash" TEXT NOT NULL,
    "tx_hash" TEXT NOT NULL,
    "contract" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,

    CONSTRAINT "ledger_setting_changes_pkey" PRIMARY KEY ("chain_id","block_number","log_index")
);

-- CreateIndex
CREATE INDEX "ledger_price_feeds_chain_id_feed_idx" ON "ledger_price_feeds"("chain_id", "feed");

-- CreateIndex
CREATE INDEX "ledger_price_feeds_chain_id_asset_idx" ON "ledger_price_feeds"("chain_id", "asset");

-- CreateIndex
CREATE INDEX "ledger_price_observations_chain_id_feed_block_number_log_in_idx" ON "ledger_price_observations"("chain_id", "feed", "block_number", "log_index");

-- CreateIndex
CREATE INDEX "ledger_staleness_bounds_chain_id_asset_block_number_log_ind_idx" ON "ledger_staleness_bounds"("chain_id", "asset", "block_number", "log_index");

-- CreateIndex
CREATE INDEX "ledger_setting_changes_chain_id_contract_key_block_number_l_idx" ON "ledger_setting_changes"("chain_id", "contract", "key", "block_number", "log_index");
