-- DropIndex
DROP INDEX "assets_org_id_created_at_idx";

-- CreateIndex
CREATE INDEX "assets_org_id_created_at_id_idx" ON "assets"("org_id", "created_at", "id");
