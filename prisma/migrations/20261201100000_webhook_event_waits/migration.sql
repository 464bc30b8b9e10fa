-- execution.waiting and execution.suspended events name what the execution waits for as the status
-- resource does: `data.waitingFor` is the list of waits (kind, name, until). The first version read
-- `kind` from `waiting_for` as if it were one object; it is a list, so every such event carried an
-- empty `waitingFor`, and a run that parks twice (an activity, then an approval) sent two events a
-- receiver could not tell apart.
CREATE OR REPLACE FUNCTION "webhook_capture_execution_event"() RETURNS trigger LANGUAGE plpgsql AS $$
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
        'waitingFor', CASE WHEN event_type IN ('execution.waiting', 'execution.suspended') THEN (
          SELECT coalesce(jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
                   'kind', w ->> 'kind', 'name', w ->> 'name', 'until', w ->> 'until')) ORDER BY ordinality), '[]'::jsonb)
            FROM jsonb_array_elements(CASE jsonb_typeof(NEW.waiting_for) WHEN 'array' THEN NEW.waiting_for
                                           ELSE '[]'::jsonb END) WITH ORDINALITY AS t(w, ordinality)) END
      ))
    ));
    INSERT INTO webhook_deliveries (id, event_id, subscription_id, org_id)
    SELECT gen_random_uuid(), event_id, s.id, s.org_id FROM webhook_subscriptions s
     WHERE s.org_id = NEW.org_id AND s.deleted_at IS NULL AND event_type = ANY (s.events);
  END LOOP;
  RETURN NULL;
END $$;
