-- AlterTable
ALTER TABLE "executions" ADD COLUMN     "paused" JSONB;
