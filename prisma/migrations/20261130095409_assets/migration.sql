-- CreateTable
CREATE TABLE "assets" (
    "id" TEXT NOT NULL,
    "org_id" TEXT NOT NULL,
    "template_id" TEXT NOT NULL,
    "symbol" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "execution_id" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'paused',
    "token" TEXT,
    "feed" TEXT,
    "resolver" TEXT NOT NULL,
    "hashes" JSONB NOT NULL DEFAULT '[]',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "activated_at" TIMESTAMPTZ(3),

    CONSTRAINT "assets_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "assets_org_id_created_at_idx" ON "assets"("org_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "assets_org_id_template_id_symbol_key" ON "assets"("org_id", "template_id", "symbol");
