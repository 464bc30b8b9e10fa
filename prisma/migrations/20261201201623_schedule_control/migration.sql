-- AlterTable
ALTER TABLE "schedule_runs" ADD COLUMN     "triggered_by" TEXT;

-- AlterTable
ALTER TABLE "schedules" ADD COLUMN     "cadence" JSONB,
ADD COLUMN     "paused_at" TIMESTAMPTZ(3),
ADD COLUMN     "paused_by" TEXT,
ADD COLUMN     "paused_by_key_id" UUID,
ADD COLUMN     "resumed_at" TIMESTAMPTZ(3);
