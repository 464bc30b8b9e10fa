-- AlterTable
ALTER TABLE "journal_entries" ADD COLUMN     "cause" INTEGER,
ADD COLUMN     "seq" INTEGER;

-- Journals written before delivery numbers were replayed in call order: number them so, and
-- leave `cause` unset (no causality check for them).
UPDATE "journal_entries" SET "seq" = "position" + 1 WHERE "state" <> 'pending';
