/** Every BullMQ queue name Tenor uses, in one place (style rule 5). */
export const QUEUE_NAMES = {
  /** One job per workflow execution; its id is the execution id. */
  executions: "executions",
} as const;

/** The BullMQ job id of an execution: the execution id itself, so a job can never be duplicated while it exists. */
export function executionJobId(executionId: string): string {
  return executionId;
}
