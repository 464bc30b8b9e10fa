import { randomUUID } from "node:crypto";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AssetRecord } from "../../../../flows/assets/asset-record.js";
import { PgAssets } from "../../../../flows/assets/store/pg-assets.js";
import { encodeCursor } from "../../../../src/api/list-cursor.js";
import { type ApiHarness, startApiHarness } from "../../../api/support/api-harness.js";

/**
 * GET /v1/assets and GET /v1/assets/{id}: an organisation sees only its own assets, newest first
 * in cursor pages that neither repeat nor skip an asset (also among assets created in the same
 * millisecond), filtered by status, chain and template; every refused parameter names the field,
 * the value and the rule. Rows are written through the store as `asset.create` writes them.
 */
let h: ApiHarness;
/** org-a's assets, newest first, as the API must order them. */
let ours: AssetRecord[];
let theirs: AssetRecord[];

const RESOLVER = "0x00000000000000000000000000000000000000aa";
const SAME_MS = "2026-01-02T03:04:05.678Z";

beforeAll(async () => {
  h = await startApiHarness(import.meta.url);
  const assets = new PgAssets(h.pool);
  const seed = async (orgId: string, templateId: string, chainId: number, symbol: string, at: string) => {
    const executionId = randomUUID();
    const { asset } = await assets.claim({
      id: randomUUID(),
      orgId,
      templateId,
      symbol,
      name: `${symbol} asset`,
      kind: templateId.startsWith("fund") ? "fund" : "bond",
      chainId,
      executionId,
      resolver: RESOLVER,
    });
    // Creation times are set so the order is known: three assets share one millisecond.
    await h.pool.query("UPDATE assets SET created_at = $2 WHERE id = $1", [asset.id, at]);
    return { id: asset.id, orgId, executionId };
  };
  const a = [
    await seed("org-a", "bond-a", 31337, "B1", "2026-01-01T00:00:00.000Z"),
    await seed("org-a", "bond-a", 31337, "B2", SAME_MS),
    await seed("org-a", "fund-b", 1, "F1", SAME_MS),
    await seed("org-a", "bond-a", 31337, "B3", SAME_MS),
    await seed("org-a", "fund-b", 1, "F2", "2026-01-03T00:00:00.000Z"),
    await seed("org-a", "bond-a", 1, "B4", "2026-01-04T00:00:00.000Z"),
    await seed("org-a", "fund-b", 31337, "F3", "2026-01-05T00:00:00.000Z"),
  ];
  const b = [
    await seed("org-b", "bond-a", 31337, "B1", "2026-01-06T00:00:00.000Z"),
    await seed("org-b", "bond-a", 31337, "B2", "2026-01-07T00:00:00.000Z"),
  ];
  const b2 = a[1];
  const f2 = a[4];
  const theirB1 = b[0];
  if (!b2 || !f2 || !theirB1) throw new Error("seed");
  for (const x of [b2, f2, theirB1]) {
    await assets.record(x.orgId, x.id, x.executionId, { hash: { step: "token.deploy", hash: "0xabc" } });
    await assets.activate(x.orgId, x.id, x.executionId);
  }
  const newestFirst = (rows: AssetRecord[]) =>
    rows.sort((x, y) => y.createdAt.localeCompare(x.createdAt) || (y.id < x.id ? -1 : y.id > x.id ? 1 : 0));
  const read = async (list: { orgId: string; id: string }[]) =>
    newestFirst(
      await Promise.all(
        list.map(async ({ orgId, id }) => (await assets.get(orgId, id)) ?? Promise.reject(new Error(id))),
      ),
    );
  ours = await read(a);
  theirs = await read(b);
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

const ids = (rows: { id: string }[]) => rows.map((r) => r.id);

/** Every page of `query` for `principal`, followed by nextCursor until null. */
async function allPages(query: Record<string, string>, principal: "operator" | "otherOperator" = "operator") {
  const pages: string[][] = [];
  let cursor: string | null = null;
  do {
    const res = await h
      .as(principal)
      .get("/v1/assets")
      .query({ ...query, ...(cursor ? { cursor } : {}) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    pages.push(ids(res.body.items));
    cursor = res.body.nextCursor;
    expect(pages.length).toBeLessThan(20);
  } while (cursor);
  return pages;
}

describe("GET /v1/assets", () => {
  it("lists only the key's organisation's assets, newest first, each as GET /v1/assets/{id} shows it", async () => {
    const list = await h.as("approver").get("/v1/assets");
    expect(list.status).toBe(200);
    expect(ids(list.body.items)).toEqual(ids(ours));
    expect(list.body.nextCursor).toBeNull();
    const other = await h.as("otherIntegrator").get("/v1/assets");
    expect(ids(other.body.items)).toEqual(ids(theirs));

    const first = list.body.items.find((i: { symbol: string }) => i.symbol === "B2");
    expect(first).toMatchObject({
      templateId: "bond-a",
      name: "B2 asset",
      kind: "bond",
      chainId: 31337,
      status: "active",
      resolver: RESOLVER,
      hashes: [{ step: "token.deploy", hash: "0xabc" }],
      createdAt: SAME_MS,
      links: { self: `/v1/assets/${first.id}`, execution: `/v1/executions/${first.executionId}` },
    });
    expect(first).not.toHaveProperty("orgId");
    const one = await h.as("integrator").get(`/v1/assets/${first.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(first);

    const notOurs = await h.as("otherAdmin").get(`/v1/assets/${first.id}`);
    expect(notOurs.status).toBe(404);
    expect(notOurs.body.code).toBe("ASSET_NOT_FOUND");
    expect((await h.as("admin").get("/v1/assets/not-a-uuid")).body.code).toBe("ASSET_NOT_FOUND");
    // The organisation is the key's: a parameter cannot name another.
    expect((await h.as("otherAdmin").get("/v1/assets").query({ orgId: "org-a" })).status).toBe(400);
  });

  it("pages with the cursor without repeating or skipping an asset, also within one millisecond", async () => {
    const pages = await allPages({ limit: "2" });
    expect(pages.map((p) => p.length)).toEqual([2, 2, 2, 1]);
    expect(pages.flat()).toEqual(ids(ours));
    // The three assets of SAME_MS straddle a page boundary; a limit of 1 steps through each.
    expect((await allPages({ limit: "1" })).flat()).toEqual(ids(ours));
    const exact = await h
      .as("operator")
      .get("/v1/assets")
      .query({ limit: String(ours.length) });
    expect(exact.body.nextCursor).toBeNull();
  });

  it("filters by status, chainId and template, alone, together and across pages", async () => {
    const expectFilter = async (query: Record<string, string>, want: (r: AssetRecord) => boolean) => {
      const expected = ids(ours.filter(want));
      expect(expected.length).toBeGreaterThan(0);
      expect((await allPages({ ...query, limit: "1" })).flat(), JSON.stringify(query)).toEqual(expected);
    };
    await expectFilter({ status: "active" }, (r) => r.status === "active");
    await expectFilter({ status: "paused" }, (r) => r.status === "paused");
    await expectFilter({ chainId: "1" }, (r) => r.chainId === 1);
    await expectFilter({ template: "fund-b" }, (r) => r.templateId === "fund-b");
    await expectFilter(
      { template: "bond-a", chainId: "31337", status: "paused" },
      (r) => r.templateId === "bond-a" && r.chainId === 31337 && r.status === "paused",
    );
    // org-b's active bond-a asset never joins org-a's results.
    expect((await allPages({ status: "active", template: "bond-a" }, "otherOperator")).flat()).toEqual(
      ids(theirs.filter((r) => r.status === "active")),
    );
    const none = await h.as("operator").get("/v1/assets").query({ template: "no-such-template" });
    expect(none.body).toEqual({ items: [], nextCursor: null });
  });

  it("refuses each invalid parameter naming the field, the value and the rule", async () => {
    const forged = encodeCursor({ createdAt: "not a time", id: randomUUID() });
    const cases: [string, string, RegExp][] = [
      ["status=frozen", "query.status", /one of paused, active.*"frozen"/],
      ["status=paused&status=active", "query.status", /given once.*\["paused","active"\]/],
      ["chainId=0", "query.chainId", /integer, 1 ≤ v ≤ 2147483647.*"0"/],
      ["chainId=abc", "query.chainId", /integer.*"abc"/],
      ["chainId=99999999999", "query.chainId", /≤ 2147483647.*"99999999999"/],
      ["template=Bad_T", "query.template", /\[a-z0-9-\]\{1,64\}.*"Bad_T"/],
      ["limit=0", "query.limit", /integer, 1 ≤ v ≤ 200.*"0"/],
      ["limit=201", "query.limit", /1 ≤ v ≤ 200.*"201"/],
      ["limit=1.5", "query.limit", /integer.*"1.5"/],
      ["cursor=zz", "query.cursor", /nextCursor of a previous page.*"zz"/],
      [`cursor=${forged}`, "query.cursor", new RegExp(`nextCursor.*"${forged}"`)],
      [
        "sort=asc",
        "query.sort",
        /not a parameter of this route \(status, chainId, template, limit, cursor\).*"asc"/,
      ],
    ];
    for (const [query, pointer, rule] of cases) {
      const res = await h.as("operator").get(`/v1/assets?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.code).toBe("REQUEST_INVALID");
      expect(res.body.errors, query).toEqual([{ pointer, message: expect.stringMatching(rule) }]);
    }
    const long = await h.as("operator").get(`/v1/assets?template=${"x".repeat(5000)}`);
    expect(long.body.errors[0].message).toMatch(/^must match \[a-z0-9-\]\{1,64\} \(got "x{99}…\)$/);
    const several = await h.as("operator").get("/v1/assets?status=gone&limit=0");
    expect(several.body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual([
      "query.limit",
      "query.status",
    ]);
  });

  it("admits the roles that read executions, and no platform key", async () => {
    for (const principal of ["integrator", "approver", "operator", "admin"] as const)
      expect((await h.as(principal).get("/v1/assets")).status, principal).toBe(200);
    const platform = await h.as("platformAdmin").get("/v1/assets");
    expect(platform.status).toBe(403);
    expect(platform.body.code).toBe("FORBIDDEN");
    expect((await h.as("platformOperator").get(`/v1/assets/${ours[0]?.id}`)).status).toBe(403);
    expect((await request(h.app).get("/v1/assets")).status).toBe(401);
  });
});
