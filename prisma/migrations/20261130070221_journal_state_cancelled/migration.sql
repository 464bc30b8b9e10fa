-- AlterEnum
ALTER TYPE "JournalState" ADD VALUE 'cancelled';
