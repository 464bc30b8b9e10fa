-- AlterTable
ALTER TABLE "executions" ADD COLUMN     "cancel_reason" TEXT,
ADD COLUMN     "cancel_requested_by" JSONB;
