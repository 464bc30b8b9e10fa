-- Signing secrets encrypted at rest (docs/webhooks.md, "Secrets"). Existing rows keep their
-- plaintext secret with a null key id; a runner started with webhooks.secretKeys re-encrypts them.
-- AlterTable
ALTER TABLE "webhook_subscriptions" ADD COLUMN     "secret_key_id" TEXT;
