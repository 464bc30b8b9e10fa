import {
  createPublicClient,
  createTestClient,
  type Hex,
  http,
  type PublicClient,
  type TestClient,
} from "viem";
import { foundry } from "viem/chains";
import { anvilBinary } from "../../scripts/dev-chain/anvil-binary.js";
import { freePort, spawnProcess, type TestProcess } from "./processes.js";

/**
 * A real EVM node for tests: anvil from the npm package `@foundry-rs/anvil`, whose platform
 * package carries the binary (no download at install or run time). One node per test file, on a
 * free port, stopped in `afterAll`.
 */

/** anvil's default dev accounts (mnemonic "test test ... junk"), each funded with 10,000 ether. */
export const ANVIL_KEYS = [
  "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
  "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
  "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba",
  "0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e",
] as const satisfies readonly Hex[];

export interface AnvilOptions {
  /** Mine a block per transaction (anvil's default). Off: blocks only on `mine()`. */
  automine?: boolean;
  /** Interval mining: a block every this many seconds (with automine it also mines per transaction). */
  blockTimeSeconds?: number;
  /** Chain id; default 31337. */
  chainId?: number;
}

export interface Anvil {
  readonly url: string;
  readonly port: number;
  readonly chainId: number;
  readonly process: TestProcess;
  readonly public: PublicClient;
  /** anvil's own methods: mine, setBalance, snapshot/revert, dropTransaction, setAutomine. */
  readonly test: TestClient<"anvil">;
  /** Mines `blocks` blocks (default 1). */
  mine(blocks?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startAnvil(options: AnvilOptions = {}): Promise<Anvil> {
  const port = await freePort();
  const chainId = options.chainId ?? 31337;
  const args = ["--host", "127.0.0.1", "--port", String(port), "--chain-id", String(chainId)];
  if (options.automine === false) args.push("--no-mining");
  if (options.blockTimeSeconds !== undefined) args.push("--block-time", String(options.blockTimeSeconds));
  const node = spawnProcess(`anvil:${port}`, anvilBinary(), args);
  await node.waitFor(/Listening on/, 20_000);
  const url = `http://127.0.0.1:${port}`;
  const chain = { ...foundry, id: chainId };
  const transport = http(url, { batch: false, retryCount: 0 });
  const publicClient = createPublicClient({
    chain,
    transport,
    pollingInterval: 50,
    cacheTime: 0,
  }) as PublicClient;
  const test = createTestClient({ chain, mode: "anvil", transport });
  return {
    url,
    port,
    chainId,
    process: node,
    public: publicClient,
    test,
    async mine(blocks = 1) {
      await test.mine({ blocks });
    },
    async stop() {
      await node.kill();
    },
  };
}
