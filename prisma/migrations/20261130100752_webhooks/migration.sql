-- CreateEnum
CREATE TYPE "WebhookDeliveryStatus" AS ENUM ('pending', 'delivered', 'dead', 'cancelled');

-- CreateTable
CREATE TABLE "webhook_subscriptions" (
    "id" UUID NOT NULL,
    "org_id" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "events" TEXT[],
    "secret" TEXT NOT NULL,
    "description" TEXT,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deleted_at" TIMESTAMPTZ(3),

    CONSTRAINT "webhook_subscriptions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_events" (
    "id" UUID NOT NULL,
    "org_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "execution_id" UUID,
    "payload" JSONB NOT NULL,
    "test" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "dispatch_settled_at" TIMESTAMPTZ(3),

    CONSTRAINT "webhook_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" UUID NOT NULL,
    "event_id" UUID NOT NULL,
    "subscription_id" UUID NOT NULL,
    "org_id" TEXT NOT NULL,
    "status" "WebhookDeliveryStatus" NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_status_code" INTEGER,
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_receipts" (
    "id" BIGSERIAL NOT NULL,
    "delivery_id" UUID NOT NULL,
    "attempt" INTEGER NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "duration_ms" INTEGER,
    "status_code" INTEGER,
    "error" TEXT,
    "response" TEXT,

    CONSTRAINT "webhook_receipts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "webhook_subscriptions_org_id_created_at_idx" ON "webhook_subscriptions"("org_id", "created_at");

-- CreateIndex
CREATE INDEX "webhook_events_dispatch_settled_at_idx" ON "webhook_events"("dispatch_settled_at");

-- CreateIndex
CREATE INDEX "webhook_events_org_id_created_at_idx" ON "webhook_events"("org_id", "created_at");

-- CreateIndex
CREATE INDEX "webhook_deliveries_status_next_attempt_at_idx" ON "webhook_deliveries"("status", "next_attempt_at");

-- CreateIndex
CREATE INDEX "webhook_deliveries_event_id_idx" ON "webhook_deliveries"("event_id");

-- CreateIndex
CREATE INDEX "webhook_deliveries_subscription_id_created_at_idx" ON "webhook_deliveries"("subscription_id", "created_at");

-- CreateIndex
CREATE INDEX "webhook_deliveries_org_id_status_created_at_idx" ON "webhook_deliveries"("org_id", "status", "created_at");

-- CreateIndex
CREATE INDEX "webhook_receipts_delivery_id_attempt_idx" ON "webhook_receipts"("delivery_id", "attempt");

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "webhook_events"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_subscription_id_fkey" FOREIGN KEY ("subscription_id") REFERENCES "webhook_subscriptions"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_receipts" ADD CONSTRAINT "webhook_receipts_delivery_id_fkey" FOREIGN KEY ("delivery_id") REFERENCES "webhook_deliveries"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- The outbox (docs/webhooks.md, "Events"): a change of an execution's status, or of its progress
-- milestone, writes its webhook event and deliveries in the same transaction as the change, so an
-- event is never lost and never reported for a change that rolled back. The trigger's WHEN clause
-- is evaluated without calling the function, so the engine's many updates that change neither
-- (a turn taking the fence, a progress without a new milestone) pay only that comparison; a change
-- of an organisation without a matching subscription pays one indexed lookup.
CREATE FUNCTION "webhook_capture_execution_event"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  event_types text[] := ARRAY[]::text[];
  event_type text;
  event_id uuid;
BEGIN
  IF NEW.status IS DISTINCT FROM OLD.status THEN
    event_type := CASE NEW.status::text
      WHEN 'completed' THEN 'execution.completed'
      WHEN 'failed' THEN 'execution.failed'
      WHEN 'waiting' THEN 'execution.waiting'
      WHEN 'suspended' THEN 'execution.suspended'
    END;
    IF event_type IS NOT NULL THEN event_types := event_types || event_type; END IF;
  END IF;
  IF (NEW.progress -> 'milestone') IS NOT NULL
     AND (NEW.progress -> 'milestone') IS DISTINCT FROM (OLD.progress -> 'milestone') THEN
    event_types := event_types || 'execution.milestone'::text;
  END IF;
  FOREACH event_type IN ARRAY event_types LOOP
    CONTINUE WHEN NOT EXISTS (
      SELECT 1 FROM webhook_subscriptions s
       WHERE s.org_id = NEW.org_id AND s.deleted_at IS NULL AND event_type = ANY (s.events));
    event_id := gen_random_uuid();
    INSERT INTO webhook_events (id, org_id, type, execution_id, payload)
    VALUES (event_id, NEW.org_id, event_type, NEW.id, jsonb_build_object(
      'id', event_id,
      'type', event_type,
      'createdAt', to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'data', jsonb_strip_nulls(jsonb_build_object(
        'executionId', NEW.id,
        'workflow', NEW.workflow,
        'workflowVersion', NEW.workflow_version,
        'status', NEW.status::text,
        'parentId', NEW.parent_id,
        'progress', CASE WHEN event_type = 'execution.milestone' THEN NEW.progress END,
        'failure', CASE WHEN NEW.status::text = 'failed' THEN jsonb_build_object(
          'code', NEW.failure ->> 'code', 'message', NEW.failure ->> 'message',
          'retryable', NEW.failure -> 'retryable') END,
        'waitingFor', CASE WHEN event_type IN ('execution.waiting', 'execution.suspended') THEN jsonb_build_object(
          'kind', NEW.waiting_for ->> 'kind', 'name', NEW.waiting_for ->> 'name',
          'until', NEW.waiting_for ->> 'until') END
      ))
    ));
    INSERT INTO webhook_deliveries (id, event_id, subscription_id, org_id)
    SELECT gen_random_uuid(), event_id, s.id, s.org_id FROM webhook_subscriptions s
     WHERE s.org_id = NEW.org_id AND s.deleted_at IS NULL AND event_type = ANY (s.events);
  END LOOP;
  RETURN NULL;
END $$;

CREATE TRIGGER "executions_webhook_events"
  AFTER UPDATE OF status, progress ON "executions"
  FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status
        OR (OLD.progress -> 'milestone') IS DISTINCT FROM (NEW.progress -> 'milestone'))
  EXECUTE FUNCTION "webhook_capture_execution_event"();
