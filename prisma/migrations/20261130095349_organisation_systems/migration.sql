-- CreateEnum
CREATE TYPE "OrganisationSystemStatus" AS ENUM ('deploying', 'active', 'replaced', 'failed');

-- CreateTable
CREATE TABLE "organisation_systems" (
    "id" BIGSERIAL NOT NULL,
    "org_id" TEXT NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "address" TEXT NOT NULL,
    "execution_id" UUID NOT NULL,
    "status" "OrganisationSystemStatus" NOT NULL,
    "from_height" BIGINT NOT NULL,
    "removed_height" BIGINT,
    "failure_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "activated_at" TIMESTAMPTZ(3),
    "ended_at" TIMESTAMPTZ(3),

    CONSTRAINT "organisation_systems_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "organisation_systems_execution_id_key" ON "organisation_systems"("execution_id");

-- CreateIndex
CREATE INDEX "organisation_systems_org_id_chain_id_status_idx" ON "organisation_systems"("org_id", "chain_id", "status");

-- CreateIndex
CREATE INDEX "organisation_systems_status_idx" ON "organisation_systems"("status");
