-- AlterTable
ALTER TABLE "executions" ADD COLUMN     "traceparent" TEXT;
