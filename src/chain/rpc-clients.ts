import {
  type Chain,
  createPublicClient,
  fallback,
  http,
  type PublicClient,
  type Transport,
  webSocket,
} from "viem";
import type { ChainConfig } from "../config/chains-schema.js";
import type { TenorConfig } from "../config/schema.js";
import { TenorError } from "../errors/tenor-error.js";
import { CHAIN_ERRORS } from "./chain-error-codes.js";

/** One configured chain: its settings, viem's description of it and a read client. */
export interface ChainHandle {
  readonly config: ChainConfig;
  readonly chain: Chain;
  readonly public: PublicClient;
  /** One RPC transport (fallback over `rpcUrls`) shared by the read client and wallet clients. */
  readonly transport: Transport;
  /** The confirmation watcher's period on this chain, in ms. */
  readonly watchIntervalMs: number;
}

/** The viem clients of every configured chain, built once at a role's composition root. */
export class ChainClients {
  private readonly byId = new Map<number, ChainHandle>();

  constructor(config: Pick<TenorConfig, "chains" | "durable">) {
    for (const chainConfig of config.chains) {
      const chain: Chain = {
        id: chainConfig.id,
        name: chainConfig.name,
        nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
        rpcUrls: { default: { http: chainConfig.rpcUrls.filter((u) => u.startsWith("http")) } },
      };
      const transports = chainConfig.rpcUrls.map((url) =>
        url.startsWith("ws")
          ? webSocket(url, { retryCount: 1, timeout: chainConfig.rpcTimeoutMs })
          : http(url, { retryCount: 1, timeout: chainConfig.rpcTimeoutMs }),
      );
      const transport = transports.length === 1 ? (transports[0] as Transport) : fallback(transports);
      const watchIntervalMs =
        chainConfig.confirmationWatcher.intervalMs ?? config.durable.confirmationWatcher.intervalMs;
      // cacheTime 0: the watcher and the lifecycle must see the newest block, never a cached one.
      const publicClient = createPublicClient({
        chain,
        transport,
        cacheTime: 0,
        pollingInterval: watchIntervalMs,
      });
      this.byId.set(chainConfig.id, {
        config: chainConfig,
        chain,
        public: publicClient as PublicClient,
        transport,
        watchIntervalMs,
      });
    }
  }

  /** The chain `chainId`, or CHAIN_UNKNOWN (not retryable: configuration must change). */
  get(chainId: number): ChainHandle {
    const handle = this.byId.get(chainId);
    if (!handle)
      throw new TenorError(CHAIN_ERRORS.CHAIN_UNKNOWN, `chain ${chainId} is not configured`, {
        details: { chainId, configured: [...this.byId.keys()] },
      });
    return handle;
  }

  has(chainId: number): boolean {
    return this.byId.has(chainId);
  }

  all(): ChainHandle[] {
    return [...this.byId.values()];
  }
}
