/** The lane of an entity key: entity names cannot contain ':', so the split is unambiguous. */
export function entityLane(entity: string, key: string): string {
  return `${entity}:${key}`;
}

/** The pub/sub channel on which one client process receives the replies to its commands. */
export function replyChannel(prefix: string, clientId: string): string {
  return `${prefix}:keyed:replies:${clientId}`;
}

/** A reply as it travels on a reply channel (a wake: PostgreSQL holds the same facts). */
export interface ReplyMessage {
  id: string;
  status: "done" | "failed";
  reply: unknown;
  error: { code: string; message: string; retryable: boolean; details: Record<string, unknown> } | null;
}
