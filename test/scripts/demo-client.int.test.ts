import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { demoCaller } from "../../scripts/demo-client.js";
import { QUICK_START_DEFAULTS, withQuickStartDefaults } from "../../scripts/dev-defaults.js";
import { repoRoot } from "../support/processes.js";

describe("the demos' connection defaults", () => {
  it("are the quick start's, and an exported URL wins", () => {
    const script = readFileSync(path.join(repoRoot, "scripts/quickstart.sh"), "utf8");
    const exported = (name: string) =>
      new RegExp(`export ${name}="\\$\\{${name}:-([^}]+)\\}"`).exec(script)?.[1];
    expect(exported("DATABASE_URL")).toBe(QUICK_START_DEFAULTS.DATABASE_URL);
    expect(exported("REDIS_URL")).toBe(QUICK_START_DEFAULTS.REDIS_URL);
    expect(withQuickStartDefaults({})).toMatchObject(QUICK_START_DEFAULTS);
    expect(withQuickStartDefaults({ DATABASE_URL: "postgresql://db/x", REDIS_URL: "" })).toMatchObject({
      DATABASE_URL: "postgresql://db/x",
      REDIS_URL: QUICK_START_DEFAULTS.REDIS_URL,
    });
  });
});

describe("the demo client", () => {
  it("waits out a 503 for its Retry-After and sends the request again", async () => {
    const seen: number[] = [];
    const server = createServer((req, res) => {
      seen.push(Date.now());
      req.resume();
      if (seen.length === 1) {
        res.writeHead(503, { "retry-after": "1", "content-type": "application/problem+json" });
        res.end(JSON.stringify({ code: "OVERLOADED", detail: "busy" }));
        return;
      }
      res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const call = demoCaller(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      const answer = await call("POST", "/v1/workflows/x/executions", "tnr_x", { a: 1 });
      expect(answer).toMatchObject({ status: 200, json: { ok: true } });
      expect(seen).toHaveLength(2);
      expect((seen[1] as number) - (seen[0] as number)).toBeGreaterThanOrEqual(950);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
