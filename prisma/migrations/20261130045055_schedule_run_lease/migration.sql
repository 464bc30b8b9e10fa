-- AlterTable
ALTER TABLE "schedule_runs" ADD COLUMN     "lease_until" TIMESTAMPTZ(3);
