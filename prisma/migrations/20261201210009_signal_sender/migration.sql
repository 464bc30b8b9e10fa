-- AlterTable
ALTER TABLE "signals" ADD COLUMN     "sent_by" JSONB;
