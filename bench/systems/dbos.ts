import { DBOS } from "@dbos-inc/dbos-sdk";
import pg from "pg";
import { expectResult } from "../lib/checked-result.js";
import { nowMs } from "../lib/concurrency.js";

/**
 * DBOS Transact, the closest peer in design: step checkpoints in PostgreSQL, run in this process
 * against its own database on the same server (with `synchronous_commit=on` set on that
 * database). DBOS is configured once per process, so one instance serves every workload.
 */

const dbosNoopChain = DBOS.registerWorkflow(
  async (steps: number) => {
    let done = 0;
    for (let i = 0; i < steps; i++) done = await DBOS.runStep(async () => i + 1, { name: `s${i}` });
    return done;
  },
  { name: "benchNoopChain" },
);

const dbosChild = DBOS.registerWorkflow(async (i: number) => DBOS.runStep(async () => i, { name: "work" }), {
  name: "benchFanoutChild",
});

const dbosParent = DBOS.registerWorkflow(
  async (children: number) => {
    const handles = [];
    for (let i = 0; i < children; i++) handles.push(await DBOS.startWorkflow(dbosChild)(i));
    const outputs = await Promise.all(handles.map((h) => h.getResult()));
    return outputs.reduce((a, b) => a + b, 0);
  },
  { name: "benchFanoutParent" },
);

/** Same pool size as Tenor's default pool. */
const POOL_SIZE = 20;

export class DbosSystem {
  private constructor(private readonly pool: pg.Pool) {}

  /** Launches DBOS on `databaseUrl` (an empty database: DBOS creates its system tables). */
  static async launch(databaseUrl: string): Promise<DbosSystem> {
    const pool = new pg.Pool({
      connectionString: databaseUrl,
      max: POOL_SIZE,
      application_name: "dbos-bench",
    });
    pool.on("error", () => undefined);
    DBOS.setConfig({
      name: "tenor-bench",
      systemDatabaseUrl: databaseUrl,
      systemDatabasePool: pool,
      logLevel: "error",
    });
    await DBOS.launch();
    return new DbosSystem(pool);
  }

  /**
   * Runs one `steps`-step workflow; resolves with the start call to the checked result, in ms.
   * @throws Error when the workflow failed or returned another count than `steps`.
   */
  async chain(steps: number): Promise<number> {
    const started = nowMs();
    const handle = await DBOS.startWorkflow(dbosNoopChain)(steps);
    const result = await handle.getResult();
    const at = nowMs();
    expectResult(`dbos workflow ${handle.workflowID}`, result, steps);
    return at - started;
  }

  /** A parent workflow starting `children` child workflows and awaiting them; duration in ms. */
  async fanout(children: number): Promise<number> {
    const started = nowMs();
    const handle = await DBOS.startWorkflow(dbosParent)(children);
    await handle.getResult();
    return nowMs() - started;
  }

  async stop(): Promise<void> {
    await DBOS.shutdown();
    await this.pool.end().catch(() => undefined);
  }
}
