/**
 * Where an execution stands in the lines of the keys it waits for (docs/keyed.md, "Who holds the
 * key"): its keyed workflow admission, and the entity commands it sent with its own id as command
 * id (the nonce reservation does). Read from PostgreSQL alone, so the answer survives a Redis loss.
 */

/** The execution holding a key, as `keyed_commands` and `executions` know it. */
export interface KeyHolder {
  /** Null when the holding command was not sent by an execution (its command id is no execution's id). */
  executionId: string | null;
  workflow: string | null;
  /** The holder's organisation: the reader compares it with the viewer's before naming the holder. */
  orgId: string | null;
  /**
   * When it reached the head of its key's line: the later of its arrival and the completion of the
   * key's previous command (PostgreSQL records no claim or promotion time).
   */
  since: Date;
}

/** One line an execution is queued in. */
export interface KeyLine {
  /** `@workflow` for a keyed workflow admission, else the entity's name (`chain.nonce`). */
  entity: string;
  key: string;
  /** 1: next to hold the key once a holder lets go. */
  position: number;
  /** How many hold the key now (at most the key's limit). */
  holders: number;
  /** The longest-holding of them; null when none holds it at this moment (the line is moving). */
  holder: KeyHolder | null;
}

/** Reads the lines an execution waits in; empty when it waits for no key. */
export interface KeyLineReader {
  linesOf(executionId: string): Promise<KeyLine[]>;
}
