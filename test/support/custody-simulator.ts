import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type Address, createWalletClient, type Hex, http, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { readBody } from "./http-body.js";

/**
 * A custody provider on loopback, for tests: a real HTTP server that holds intents, waits for an
 * operator's approval, then signs with its own key and broadcasts to the node (provider-native
 * broadcast: it allocates its own nonces). Faults are switched on per intent or for the next
 * requests, so each failure mode of a real provider can be produced on demand:
 *
 * - `autoApprove`: no operator step.
 * - `loseSubmitResponse`: the intent is accepted (and broadcast) but the POST answers 502.
 * - `drop`: accepted and approved, then never broadcast (status stays `approved`).
 * - `skipToConfirmed`: approved and broadcast at once, but every answer says `pending_approval`
 *   until the receipt exists, then `confirmed`: `approved` and `broadcast` are never shown.
 * - `outOfOrder`: approved and broadcast at once; answers come from a lagging replica, out of
 *   order: `approved`, then `pending_approval` again, then `confirmed` once mined, then
 *   `broadcast` after it.
 * - `unsimulated`: approved and broadcast at once with a fixed gas limit, without the node's
 *   estimate, so a call that reverts is mined reverted; the provider then says `confirmed` (it
 *   tracks inclusion, not success), as a provider does when the chain moved after its simulation.
 * - `failNext(n, status)`: the next n requests answer `status` without doing anything.
 * - `hangNext(n)`: the next n requests never answer (the client's timeout fires).
 */

/** The gas limit of an `unsimulated` broadcast: a plain call's, with room to spare. */
const UNSIMULATED_GAS = 100_000n;

export type IntentMode =
  | "normal"
  | "autoApprove"
  | "loseSubmitResponse"
  | "drop"
  | "skipToConfirmed"
  | "outOfOrder"
  | "unsimulated";

interface Intent {
  externalId: string;
  chainId: number;
  to: Address;
  data: Hex;
  valueWei: string;
  status: "pending_approval" | "approved" | "broadcast" | "confirmed" | "rejected" | "cancelled";
  mode: IntentMode;
  txHash?: Hex;
  reason?: string;
  /** Answers given so far (the out-of-order modes pick their answer by it). */
  answers: number;
  /** `confirmed` answers given so far (`outOfOrder` says `broadcast` after the first). */
  confirmedShown: number;
}

export interface CustodySimulator {
  readonly url: string;
  readonly address: Address;
  readonly apiKey: string;
  /** Mode for the next submitted intent(s) without one set by id; default `normal`. */
  setDefaultMode(mode: IntentMode): void;
  approve(externalId: string): Promise<void>;
  reject(externalId: string, reason: string): void;
  failNext(count: number, status: number): void;
  hangNext(count: number): void;
  intent(externalId: string): Intent | undefined;
  intents(): Intent[];
  /** Requests received, by method and path, for assertions on what the adapter did. */
  requests(): string[];
  stop(): Promise<void>;
}

export async function startCustodySimulator(options: {
  rpcUrl: string;
  chainId: number;
  privateKey: Hex;
  publicClient: PublicClient;
  apiKey?: string;
}): Promise<CustodySimulator> {
  const account = privateKeyToAccount(options.privateKey);
  const wallet = createWalletClient({
    account,
    chain: { ...foundry, id: options.chainId },
    transport: http(options.rpcUrl),
  });
  const apiKey = options.apiKey ?? "sim-key";
  const intents = new Map<string, Intent>();
  const log: string[] = [];
  const hanging = new Set<ServerResponse>();
  let defaultMode: IntentMode = "normal";
  let failures: { count: number; status: number } = { count: 0, status: 503 };
  let hangs = 0;

  async function broadcast(intent: Intent): Promise<void> {
    intent.status = "approved";
    if (intent.mode === "drop") return;
    intent.txHash = await wallet.sendTransaction({
      to: intent.to,
      data: intent.data,
      value: BigInt(intent.valueWei),
      ...(intent.mode === "unsimulated" ? { gas: UNSIMULATED_GAS } : {}),
    });
    intent.status = "broadcast";
  }

  async function refresh(intent: Intent): Promise<void> {
    if (intent.status !== "broadcast" || !intent.txHash) return;
    const receipt = await options.publicClient
      .getTransactionReceipt({ hash: intent.txHash })
      .catch(() => undefined);
    if (receipt) intent.status = "confirmed";
  }

  const truth = (intent: Intent) => ({
    externalId: intent.externalId,
    status: intent.status === "cancelled" ? "rejected" : intent.status,
    ...(intent.txHash && intent.status !== "approved" ? { txHash: intent.txHash } : {}),
    ...(intent.reason ? { reason: intent.reason } : {}),
  });

  /** What the provider answers: the truth, or in the out-of-order modes what a lagging replica says. */
  const view = (intent: Intent) => {
    const answer = intent.answers++;
    const said = (status: string, withHash = false) => ({
      externalId: intent.externalId,
      status,
      ...(withHash && intent.txHash ? { txHash: intent.txHash } : {}),
    });
    if (intent.mode === "skipToConfirmed")
      return intent.status === "confirmed" ? truth(intent) : said("pending_approval");
    if (intent.mode === "outOfOrder") {
      if (answer === 0) return said("approved");
      if (answer === 1 || intent.status !== "confirmed") return said("pending_approval");
      return intent.confirmedShown++ === 0 ? truth(intent) : said("broadcast", true);
    }
    return truth(intent);
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    log.push(`${req.method} ${path}`);
    if (hangs > 0) {
      hangs--;
      hanging.add(res);
      return;
    }
    if (failures.count > 0) {
      failures.count--;
      return send(res, failures.status, { error: "injected failure" });
    }
    if (req.headers.authorization !== `Bearer ${apiKey}`) return send(res, 401, { error: "bad api key" });
    if (req.method === "POST" && path === "/v1/intents") {
      const body = JSON.parse(await readBody(req)) as Omit<Intent, "status" | "mode">;
      let intent = intents.get(body.externalId);
      if (!intent) {
        intent = { ...body, status: "pending_approval", mode: defaultMode, answers: 0, confirmedShown: 0 };
        intents.set(body.externalId, intent);
        if (intent.mode !== "normal") await broadcast(intent);
      }
      if (intent.mode === "loseSubmitResponse") return send(res, 502, { error: "upstream reset" });
      return send(res, 202, view(intent));
    }
    const match = /^\/v1\/intents\/([^/]+)$/.exec(path);
    if (req.method === "GET" && match) {
      const intent = intents.get(decodeURIComponent(match[1] as string));
      if (!intent) return send(res, 404, { error: "no such intent" });
      await refresh(intent);
      return send(res, 200, view(intent));
    }
    return send(res, 404, { error: "no route" });
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: Error) => send(res, 500, { error: error.message }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    address: account.address,
    apiKey,
    setDefaultMode(mode) {
      defaultMode = mode;
    },
    async approve(externalId) {
      const intent = intents.get(externalId);
      if (intent?.status !== "pending_approval") throw new Error(`intent ${externalId} is not pending`);
      await broadcast(intent);
    },
    reject(externalId, reason) {
      const intent = intents.get(externalId);
      if (intent?.status !== "pending_approval") throw new Error(`intent ${externalId} is not pending`);
      intent.status = "rejected";
      intent.reason = reason;
    },
    failNext(count, status) {
      failures = { count, status };
    },
    hangNext(count) {
      hangs = count;
    },
    intent: (externalId) => intents.get(externalId),
    intents: () => [...intents.values()],
    requests: () => [...log],
    async stop() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
