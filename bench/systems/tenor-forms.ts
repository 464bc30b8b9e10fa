import type { Chain } from "../lib/chains.js";
import { measure, type SystemResult, type WorkloadContext } from "../workloads/types.js";
import { TenorSystem } from "./tenor.js";
import { TenorDeployed } from "./tenor-deployed.js";

/**
 * Measures Tenor both ways a workload reports it: `tenor-in-process` (the engine in the bench
 * process) and `tenor` (one compiled runner process, as deployed), each on its own Redis prefix
 * of the workload's database, with the same measurement over its chain.
 */
export async function measureTenorForms(
  ctx: WorkloadContext,
  options: { databaseUrl: string; label: string },
  run: (chain: Chain) => Promise<SystemResult>,
): Promise<{ "tenor-in-process": SystemResult; tenor: SystemResult }> {
  const connection = { databaseUrl: options.databaseUrl, redisUrl: ctx.env.redisUrl };
  const inProcess = await measure(ctx, "tenor-in-process", async () => {
    const tenor = await TenorSystem.start({
      ...connection,
      prefix: ctx.env.prefix(`${options.label}-tenor`),
    });
    try {
      return await run((steps) => tenor.chain(steps));
    } finally {
      await tenor.stop();
    }
  });
  const deployed = await measure(ctx, "tenor (deployed runner)", async () => {
    const tenor = await TenorDeployed.start({
      ...connection,
      prefix: ctx.env.prefix(`${options.label}-deployed`),
    });
    try {
      return await run((steps) => tenor.chain(steps));
    } finally {
      await tenor.stop();
    }
  });
  return { "tenor-in-process": inProcess, tenor: deployed };
}
