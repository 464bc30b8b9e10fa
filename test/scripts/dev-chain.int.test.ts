import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { freePort } from "../support/ports.js";
import { freeRolePorts, runLocal } from "./local/supervisor-harness.js";

/**
 * `npm run local` (and so the quick start) with no chain configured starts anvil as the demo chain
 * and hands the roles a configuration naming it; with a chain configured it starts nothing.
 * The real CLI supervises the fake role, which reports what it sees.
 */

const directory = mkdtempSync(path.join(tmpdir(), "tenor-dev-chain-test-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

async function rpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return ((await res.json()) as { result: unknown }).result;
}

async function rpcAnswers(url: string): Promise<boolean> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
  }).then(
    (r) => r.ok,
    () => false,
  );
}

describe("the demo chain of npm run local", () => {
  it("starts anvil when no chain is configured, the roles see it, and it stops with them", async () => {
    const port = await freePort();
    const env = {
      ...(await freeRolePorts()),
      TENOR_DEV_CHAIN: "",
      TENOR_DEV_CHAIN_PORT: String(port),
      TENOR_DEV_CHAIN_STATE: path.join(directory, "chain-state.json"),
      FAKE_PROBE_CHAIN_ROLE: "runner",
    };
    const run = runLocal(["--roles", "runner", "--wait-ready"], env);
    const seen = await run.waitFor(
      /fake runner sees chain (\d+) at (\S+): eth_chainId (\S+), (\w+) the demo key/,
    );
    expect(seen.slice(1)).toEqual(["31337", `http://127.0.0.1:${port}`, "0x7a69", "with"]);
    expect(run.stderr()).toContain(`dev chain: anvil at http://127.0.0.1:${port} (chain 31337)`);
    // The demo asset template's resolver is deployed on it before the roles start.
    const resolver = run.stderr().match(/asset template demo-bond with resolver (0x[0-9a-fA-F]{40})/)?.[1];
    expect(resolver).toBeDefined();
    expect(await rpc(`http://127.0.0.1:${port}`, "eth_getCode", [resolver, "latest"])).toMatch(
      /^0x[0-9a-f]{100,}$/,
    );
    run.process.kill("SIGTERM");
    expect((await run.exit).code).toBe(0);
    expect(await rpcAnswers(`http://127.0.0.1:${port}`)).toBe(false);

    // The next run continues the same chain (the database's nonces stay true): the first run's
    // resolver is still there, and the demo signer's nonce went on counting.
    const again = runLocal(["--roles", "runner", "--wait-ready"], env);
    await again.waitFor(/fake runner sees chain 31337/);
    const url = `http://127.0.0.1:${port}`;
    expect(await rpc(url, "eth_getCode", [resolver, "latest"])).toMatch(/^0x[0-9a-f]{100,}$/);
    const signer = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
    expect(Number(await rpc(url, "eth_getTransactionCount", [signer, "latest"]))).toBe(2);
    again.process.kill("SIGTERM");
    expect((await again.exit).code).toBe(0);
  });

  it("starts no chain when the configuration names one, and the configuration it writes is valid", async () => {
    const file = path.join(directory, "with-chain.yaml");
    writeFileSync(file, "chains:\n  - { id: 5, name: elsewhere, rpcUrls: ['http://127.0.0.1:9'] }\n");
    const env = {
      ...(await freeRolePorts()),
      TENOR_DEV_CHAIN: "",
      TENOR_CONFIG: file,
      FAKE_PROBE_CHAIN_ROLE: "runner",
    };
    const run = runLocal(["--roles", "runner", "--wait-ready"], env);
    await run.waitFor(
      /fake runner sees chain 5 at http:\/\/127\.0\.0\.1:9: eth_chainId .+, without the demo key/,
    );
    expect(run.stderr()).not.toContain("dev chain:");
    run.process.kill("SIGTERM");
    expect((await run.exit).code).toBe(0);
    // The roles' own parser accepts what the dev chain writes (schema, signer, secret source).
    const { withDevChain } = await import("../../scripts/dev-chain/dev-chain.js");
    const written = path.join(directory, "dev.json");
    writeFileSync(
      written,
      JSON.stringify(
        withDevChain(
          { durable: { runnerConcurrency: 7 } },
          "http://127.0.0.1:8545",
          "0x5FbDB2315678afecb367f032d93F642f64180aa3",
        ),
      ),
    );
    const config = loadConfig({
      env: {
        DATABASE_URL: "postgresql://x@127.0.0.1/db",
        REDIS_URL: "redis://127.0.0.1",
        TENOR_CONFIG: written,
      },
    });
    expect(config.chains.map((c) => c.id)).toEqual([31337]);
    expect(config.signers).toEqual([expect.objectContaining({ id: "demo", kind: "local", orgId: "demo" })]);
    expect(config.durable.runnerConcurrency).toBe(7);
    // Subscriptions can be created locally: the development webhook key encrypts their secrets.
    expect(config.webhooks.secretKeys).toEqual([{ id: "dev", key: { env: "TENOR_DEV_WEBHOOK_KEY" } }]);
    expect(config.assetTemplates).toEqual([
      expect.objectContaining({
        id: "demo-bond",
        orgId: "demo",
        signerId: "demo",
        chainId: 31337,
        resolver: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
      }),
    ]);
  });
});
