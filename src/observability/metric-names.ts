/**
 * Every Prometheus metric name Tenor exports, in one place (style rule 5). Labels are bounded by
 * construction: workflow and schedule names come from code, statuses and outcomes from closed
 * lists, routes are Express route templates. Never execution ids, keys, org ids or hashes
 * (test/observability/metrics-labels.int.test.ts scrapes a real run and checks every value).
 */
export const METRIC_NAMES = {
  executionsStarted: "tenor_executions_started_total",
  executionsFinished: "tenor_executions_finished_total",
  executionFailures: "tenor_execution_failures_total",
  executionsCurrent: "tenor_executions_current",
  turnDuration: "tenor_turn_duration_seconds",
  stepDuration: "tenor_step_duration_seconds",
  activityDuration: "tenor_activity_duration_seconds",
  jobWait: "tenor_job_wait_seconds",
  journalBatchSize: "tenor_journal_batch_rows",
  wakeupRepairs: "tenor_wakeup_repairs_total",
  queueDepth: "tenor_queue_depth",
  queueOldestWaitingAge: "tenor_queue_oldest_waiting_seconds",
  timersOverdue: "tenor_timers_overdue",
  replicasLive: "tenor_replicas_live",
  scheduleRuns: "tenor_schedule_runs_total",
  apiRequests: "tenor_api_requests_total",
  apiRequestDuration: "tenor_api_request_duration_seconds",
  apiAdmissionRefusals: "tenor_api_admission_refusals_total",
  keyedLaneDepth: "tenor_keyed_lane_depth",
  shardsOwned: "tenor_shards_owned",
  ledgerHeadHeight: "tenor_ledger_head_height",
  ledgerIndexedHeight: "tenor_ledger_indexed_height",
  ledgerLagBlocks: "tenor_ledger_lag_blocks",
  ledgerLagSeconds: "tenor_ledger_lag_seconds",
  ledgerLastReorgDepth: "tenor_ledger_last_reorg_depth",
  ledgerReorgs: "tenor_ledger_reorgs_total",
  ledgerWaitingSeconds: "tenor_ledger_waiting_seconds",
  webhookAttempts: "tenor_webhook_attempts_total",
  webhookAttemptDuration: "tenor_webhook_attempt_duration_seconds",
  webhookDeliveriesPending: "tenor_webhook_deliveries_pending",
} as const;
