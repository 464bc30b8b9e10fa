/** Every BullMQ queue name Tenor uses, in one place (style rule 5). */
export const QUEUE_NAMES = {
  /** One job per workflow execution; its id is the execution id. */
  executions: "executions",
  /** Ticks of the runners' cron and singleton schedules (src/schedules), one job scheduler each. */
  schedules: "schedules",
} as const;

/** The queue of an activity pool (defineActivity's `queue.name`). */
export function activityQueueName(queue: string): string {
  return `activity-${queue}`;
}

/** The BullMQ job id of an activity step: one job per execution position, never two. */
export function activityJobId(executionId: string, position: number): string {
  return `${executionId}.${position}`;
}

/** The BullMQ job id of an execution: the execution id itself, so a job can never be duplicated while it exists. */
export function executionJobId(executionId: string): string {
  return executionId;
}

/**
 * Keyed serialization spaces (docs/keyed.md): groups of Redis keys under `<prefix>:keyed:<space>`
 * managed by Lua scripts, not BullMQ queues. Entity commands are dispatched from their space's
 * ready list; keyed workflow admissions start the execution's job on the executions queue.
 */
export const KEYED_SPACES = {
  entities: "entities",
  workflows: "workflows",
} as const;
