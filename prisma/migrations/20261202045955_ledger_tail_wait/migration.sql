-- AlterTable
ALTER TABLE "ledger_chains" ADD COLUMN     "wait_detail" TEXT,
ADD COLUMN     "wait_reason" TEXT,
ADD COLUMN     "wait_since" TIMESTAMPTZ(3);
