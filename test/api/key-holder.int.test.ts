import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OTHER_ORGANISATION_HOLDER } from "../../src/api/executions/key-queue.js";
import { NONCE_GRANTS_PER_TURN, nonceEntity } from "../../src/chain/nonce-entity.js";
import { EntityClient } from "../../src/keyed/entity-client.js";
import { EntityRegistry } from "../../src/keyed/entity-registry.js";
import { createLogger } from "../../src/observability/logger.js";
import { runTenor } from "../cli/support/run-cli.js";
import { type ApiHarness, startApiHarness } from "./support/api-harness.js";
import { launchConsoleBrowser } from "./support/console-browser.js";

/**
 * Who holds the key (docs/keyed.md, "Who holds the key"): a run waiting in a key's line names the
 * execution holding the key, since when, and its own position (1 is next), in the run view, the
 * CLI and the console; a holder of another organisation is never named. The Platform API in the
 * test process, a real runner process, the real `tenor` CLI and Debian's chromium.
 */

// biome-ignore lint/suspicious/noExplicitAny: tests read the API's JSON answers as they come.
type Json = any;

let h: ApiHarness;
let server: Server;
let base: string;

beforeAll(async () => {
  h = await startApiHarness(import.meta.url);
  server = h.app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await h?.stop();
});

async function startKeyed(as: "integrator" | "otherIntegrator", account: string): Promise<string> {
  const res = await h.as(as).post("/v1/workflows/apitest.keyed/executions").send({ account });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.id as string;
}

const onSignal = (e: Json) => e.status === "waiting" && e.waitingFor.some((w: Json) => w.kind === "signal");
const lineOf = (e: Json) => e.keyQueue?.[0];

async function view(as: "operator" | "otherOperator", id: string): Promise<Json> {
  const res = await h.as(as).get(`/v1/executions/${id}`);
  expect(res.status).toBe(200);
  return res.body;
}

describe("who holds the key", () => {
  it("names the holder and each run's place in line, and moves both on when the holder finishes", async () => {
    const a = await startKeyed("integrator", "k1");
    await h.waitFor(a, onSignal, "a holding the key, waiting for its signal");
    const b = await startKeyed("integrator", "k1");
    const c = await startKeyed("integrator", "k1");

    const bView = await h.waitFor(b, (e) => lineOf(e)?.position === 1, "b next in line");
    expect(bView.status).toBe("waiting");
    expect(bView.keyQueue).toHaveLength(1);
    expect(lineOf(bView)).toMatchObject({
      kind: "key",
      entity: null,
      key: "account:k1",
      position: 1,
      holders: 1,
      holder: { executionId: a, workflow: "apitest.keyed", description: `apitest.keyed ${a}` },
    });
    const held = lineOf(bView).holder;
    expect(Number.isNaN(Date.parse(held.since))).toBe(false);
    expect(held.heldMs).toBeGreaterThanOrEqual(0);
    const cView = await h.waitFor(c, (e) => lineOf(e)?.position === 2, "c second in line");
    expect(lineOf(cView)).toMatchObject({ position: 2, holder: { executionId: a } });
    // A run that holds the key stands in no line.
    expect((await view("operator", a)).keyQueue).toEqual([]);

    // The answer is PostgreSQL's: with the keyed workflows' Redis space gone, the line reads the same.
    await dropWorkflowLanes();
    expect(lineOf(await view("operator", b))).toEqual({
      ...lineOf(bView),
      holder: { ...held, heldMs: expect.any(Number) },
    });
    expect(lineOf(await view("operator", c))).toMatchObject({
      position: 2,
      holder: { executionId: a, since: held.since },
    });
    await expect.poll(() => h.redis.exists(`${h.prefix}:keyed:workflows:meta`), { timeout: 20_000 }).toBe(1);

    // The CLI says the same in words.
    const cli = await runTenor(["runs", "get", c], {
      ...process.env,
      TENOR_API_URL: base,
      TENOR_API_KEY: h.keys.operator,
    } as Record<string, string>);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toContain("in line:\n  - key account:k1: position 2\n");
    expect(cli.stdout).toMatch(new RegExp(`held by apitest\\.keyed ${a} since \\d{4}-\\S+ \\(for [^)]+\\)`));

    expect((await h.as("integrator").post(`/v1/executions/${a}/signals/go`).send({})).status).toBe(202);
    const aDone = await h.waitFor(a, (e) => e.status === "completed", "a completed");
    await h.waitFor(b, onSignal, "b holding the key after a finished");
    const cNext = await h.waitFor(
      c,
      (e) => lineOf(e)?.position === 1 && lineOf(e)?.holder?.executionId === b,
      "c next, behind b",
    );
    // b reached the head of the line when a's admission ended, after a completed.
    expect(Date.parse(lineOf(cNext).holder.since)).toBeGreaterThanOrEqual(
      Date.parse(aDone.completedAt as string),
    );
    expect(aDone.keyQueue).toEqual([]);

    const next = await runTenor(["runs", "get", c], {
      ...process.env,
      TENOR_API_URL: base,
      TENOR_API_KEY: h.keys.operator,
    } as Record<string, string>);
    expect(next.stdout).toContain("in line:\n  - key account:k1: position 1 (next)\n");
    expect(next.stdout).toContain(`held by apitest.keyed ${b} since`);

    await screenshotWaitingRun(c, b);

    for (const id of [b, c]) {
      await h.waitFor(id, onSignal, "its turn");
      expect((await h.as("integrator").post(`/v1/executions/${id}/signals/go`).send({})).status).toBe(202);
      await h.waitFor(id, (e) => e.status === "completed", "completed");
    }
  }, 120_000);

  it("never names a holder of another organisation on a shared key", async () => {
    const theirs = await startKeyed("otherIntegrator", "shared");
    const seenByThem = async () => view("otherOperator", theirs);
    await expect.poll(async () => onSignal(await seenByThem()), { timeout: 20_000 }).toBe(true);
    const ours = await startKeyed("integrator", "shared");

    const body = await h.waitFor(ours, (e) => lineOf(e)?.position === 1, "ours behind theirs");
    expect(lineOf(body)).toMatchObject({
      kind: "key",
      key: "account:shared",
      position: 1,
      holders: 1,
      holder: { executionId: null, workflow: null, description: OTHER_ORGANISATION_HOLDER },
    });
    expect(JSON.stringify(body)).not.toContain(theirs);
    const cli = await runTenor(["runs", "get", ours], {
      ...process.env,
      TENOR_API_URL: base,
      TENOR_API_KEY: h.keys.operator,
    } as Record<string, string>);
    expect(cli.stdout).toContain(`held by ${OTHER_ORGANISATION_HOLDER} since`);
    expect(cli.stdout).not.toContain(theirs);

    expect((await h.as("otherIntegrator").post(`/v1/executions/${theirs}/signals/go`).send({})).status).toBe(
      202,
    );
    await h.waitFor(ours, onSignal, "ours holding the key");
    expect((await h.as("integrator").post(`/v1/executions/${ours}/signals/go`).send({})).status).toBe(202);
    await h.waitFor(ours, (e) => e.status === "completed", "ours completed");
  }, 60_000);

  it("shows a nonce reservation waiting behind another run's reservation for the same sender and chain", async () => {
    // The test runner handles no keyed entity: the first NONCE_GRANTS_PER_TURN reservations (the
    // entity's key limit) stay at the head of the line, holding the sender's key, and the next ones
    // queue behind them, as behind a slow handler.
    const sender = "0x1111111111111111111111111111111111111111";
    const signalRun = async (as: "integrator" | "otherIntegrator") => {
      const res = await h.as(as).post("/v1/workflows/apitest.signal/executions").send({});
      expect(res.status).toBe(202);
      return res.body.id as string;
    };
    const first = await signalRun("integrator");
    const second = await signalRun("integrator");
    const theirs = await signalRun("otherIntegrator");
    const client = new EntityClient({
      pool: h.pool,
      redis: h.redis,
      prefix: h.prefix,
      registry: new EntityRegistry([nonceEntity]),
      logger: createLogger({ level: "error" }),
    });
    try {
      const fillers = Array.from({ length: NONCE_GRANTS_PER_TURN - 1 }, (_, i) => `filler-${i}`);
      for (const id of [first, ...fillers, second, theirs]) {
        const sent = client.send(
          nonceEntity,
          "reserve",
          { chainId: 31337, sender },
          { commandId: id, timeoutMs: 50 },
        );
        await sent.catch(() => undefined);
      }
      const line = lineOf(await view("operator", second));
      expect(line).toMatchObject({
        kind: "nonce",
        entity: "chain.nonce",
        key: `31337:${sender}`,
        chainId: 31337,
        sender,
        position: 1,
        holders: NONCE_GRANTS_PER_TURN,
        holder: { executionId: first, workflow: "apitest.signal" },
      });
      // The reservation at the head of the line is being handled, not waiting.
      expect((await view("operator", first)).keyQueue).toEqual([]);
      const seenByThem = await view("otherOperator", theirs);
      expect(lineOf(seenByThem)).toMatchObject({
        kind: "nonce",
        position: 2,
        holder: { executionId: null, description: OTHER_ORGANISATION_HOLDER },
      });
      expect(JSON.stringify(seenByThem)).not.toContain(first);
    } finally {
      await client.close();
    }
  }, 60_000);
});

/** Deletes every Redis key of the keyed workflows' space (the repair rebuilds it from PostgreSQL). */
async function dropWorkflowLanes(): Promise<void> {
  const pattern = `${h.prefix}:keyed:workflows:*`;
  let cursor = "0";
  do {
    const [next, keys] = await h.redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
    if (keys.length > 0) await h.redis.del(...keys);
    cursor = next;
  } while (cursor !== "0");
  expect(await h.redis.exists(`${h.prefix}:keyed:workflows:meta`)).toBe(0);
}

/** Opens run `id`'s console page in Chromium: its place in line, the holder linked; a screenshot. */
async function screenshotWaitingRun(id: string, holder: string): Promise<void> {
  const chromium = await launchConsoleBrowser(base, "key-holder");
  try {
    const page = await chromium.signIn(h.keys.operator, "/console");
    await chromium.visit(page, `${base}/console/executions/${id}`);
    const section = page.locator("section[aria-label='Waiting in line']");
    const row = section.locator("tbody tr");
    expect(await row.count()).toBe(1);
    const cells = await row.locator("td").allInnerTexts();
    expect(cells[0]).toBe("key account:k1");
    expect(cells[1]).toBe("1 (next)");
    expect(cells[2]).toBe(`apitest.keyed ${holder}`);
    expect(await row.locator("td a").getAttribute("href")).toBe(`/console/executions/${holder}`);
    expect(await row.locator("td time").getAttribute("datetime")).toMatch(/^\d{4}-/);
    await chromium.screenshot(page, "run-waiting-on-a-key");
  } finally {
    await chromium.close();
  }
}
