import { describe, expect, it } from "vitest";
import {
  keyQueueOf,
  NO_EXECUTION_HOLDER,
  OTHER_ORGANISATION_HOLDER,
} from "../../src/api/executions/key-queue.js";
import { renderKeyQueue } from "../../src/cli/key-queue-render.js";
import type { KeyLine } from "../../src/keyed/key-line.js";

/** The run view's key lines (docs/keyed.md, "Who holds the key"), from the reader's rows alone. */

const since = new Date("2026-01-01T00:00:00.000Z");
const now = new Date("2026-01-01T00:01:30.000Z");
const holder = {
  executionId: "7b0c4f8e-2f7c-4d55-9b8a-6f1d2e3c4b5a",
  workflow: "w.one",
  orgId: "org-a",
  since,
};
const line = (over: Partial<KeyLine>): KeyLine => ({
  entity: "@workflow",
  key: "account:1",
  position: 1,
  holders: 1,
  holder,
  ...over,
});

describe("key lines in the run view", () => {
  it("names a holder of the viewer's organisation with how long it has held the key", () => {
    expect(keyQueueOf([line({})], "org-a", now)).toEqual([
      {
        kind: "key",
        entity: null,
        key: "account:1",
        position: 1,
        holders: 1,
        holder: {
          executionId: holder.executionId,
          workflow: "w.one",
          description: `w.one ${holder.executionId}`,
          since: since.toISOString(),
          heldMs: 90_000,
        },
      },
    ]);
  });

  it("hides the id and workflow of another organisation's holder, and says when no execution holds it", () => {
    const [theirs] = keyQueueOf([line({})], "org-b", now);
    expect(theirs?.holder).toEqual({
      executionId: null,
      workflow: null,
      description: OTHER_ORGANISATION_HOLDER,
      since: since.toISOString(),
      heldMs: 90_000,
    });
    const [none] = keyQueueOf(
      [line({ holder: { ...holder, executionId: null, workflow: null, orgId: null } })],
      "org-a",
      now,
    );
    expect(none?.holder?.description).toBe(NO_EXECUTION_HOLDER);
  });

  it("reads a nonce line's chain and sender from its key, and another entity's as an entity line", () => {
    const sender = "0x1111111111111111111111111111111111111111";
    const [nonce, other] = keyQueueOf(
      [
        line({ entity: "chain.nonce", key: `31337:${sender}`, position: 2 }),
        line({ entity: "q.x", key: "k", holder: null, holders: 0 }),
      ],
      "org-a",
      now,
    );
    expect(nonce).toMatchObject({
      kind: "nonce",
      entity: "chain.nonce",
      chainId: 31337,
      sender,
      position: 2,
    });
    expect(other).toMatchObject({ kind: "entity", entity: "q.x", holder: null, holders: 0 });
    expect(renderKeyQueue([nonce!, other!])).toBe(
      "in line:\n" +
        `  - nonce of ${sender} on chain 31337: position 2\n` +
        `    held by w.one ${holder.executionId} since ${since.toISOString()} (for 1 min 30 s)\n` +
        "  - q.x key k: position 1 (next)\n" +
        "    held by nobody at this moment (the line is moving)\n",
    );
    expect(renderKeyQueue([])).toBe("");
  });
});
