import { FloorProgram } from "./floor.js";

/**
 * The floor's work with nothing shared between chains: every step's Lua call is its own round
 * trip and every checkpoint its own INSERT and commit. What one commit per step costs here; the
 * floor (FloorSystem, which groups them) is below it as soon as more than one chain is in flight.
 */
export class FloorSerialSystem extends FloorProgram {
  protected async call(chainId: string, position: number): Promise<void> {
    await this.redis.evalsha(await this.sha, 2, this.chainKey(chainId), this.stepsKey, String(position));
  }

  protected async write(row: { chainId: string; position: number; result: string }): Promise<void> {
    await this.pool.query({
      name: "bench_floor_serial_checkpoint",
      text: "INSERT INTO bench_checkpoints (chain_id, position, result) VALUES ($1, $2, $3::jsonb)",
      values: [row.chainId, row.position, row.result],
    });
  }

  protected async read(chainId: string, position: number): Promise<unknown> {
    const { rows } = await this.pool.query<{ result: unknown }>({
      name: "bench_floor_serial_read",
      text: "SELECT result FROM bench_checkpoints WHERE chain_id = $1 AND position = $2",
      values: [chainId, position],
    });
    return rows[0]?.result;
  }
}
