-- AlterTable
ALTER TABLE "replicas" ADD COLUMN     "busy" INTEGER,
ADD COLUMN     "capacity" INTEGER,
ADD COLUMN     "workflows" TEXT[] DEFAULT ARRAY[]::TEXT[];
