import type { Address, Hex } from "viem";
import type { Secret } from "../../config/secret.js";
import { TenorError } from "../../errors/tenor-error.js";
import { CHAIN_ERRORS } from "../chain-error-codes.js";
import type { CustodyIntent, CustodySigner, CustodyState } from "./signer.js";

export interface CustodyHttpOptions {
  id: string;
  orgId: string | undefined;
  address: Address;
  baseUrl: string;
  apiKey: Secret;
  requestTimeoutMs: number;
  pollBudget: number;
  pollIntervalMs: number;
}

/**
 * The custody-provider adapter over HTTP (docs/chains.md, "Custody providers"):
 * `POST /v1/intents` (idempotent by `externalId`), `GET /v1/intents/{externalId}`. A 5xx, a
 * timeout or a connection error is CUSTODY_UNAVAILABLE (retryable: the intent may or may not exist,
 * so the caller reconciles by external id before anything else); a 4xx is CUSTODY_REFUSED. A 404
 * on status means the provider has no such intent (`unknown`).
 */
export function createCustodyHttpSigner(options: CustodyHttpOptions): CustodySigner {
  const base = options.baseUrl.replace(/\/$/, "");
  async function call(method: "GET" | "POST", path: string, body?: unknown): Promise<Response> {
    let response: Response;
    try {
      response = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${options.apiKey.reveal()}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(options.requestTimeoutMs),
      });
    } catch (error) {
      throw new TenorError(
        CHAIN_ERRORS.CUSTODY_UNAVAILABLE,
        `custody provider ${options.id}: ${method} ${path} failed (${(error as Error).message})`,
        { retryable: true, details: { signer: options.id, path } },
      );
    }
    if (response.status >= 500) {
      throw new TenorError(
        CHAIN_ERRORS.CUSTODY_UNAVAILABLE,
        `custody provider ${options.id}: ${method} ${path} answered ${response.status}`,
        { retryable: true, details: { signer: options.id, path, status: response.status } },
      );
    }
    return response;
  }
  async function state(response: Response, path: string): Promise<CustodyState> {
    if (response.status === 404) return { status: "unknown" };
    if (!response.ok) {
      const text = await response.text().catch(() => "");
      throw new TenorError(
        CHAIN_ERRORS.CUSTODY_REFUSED,
        `custody provider ${options.id}: ${path} refused with ${response.status} ${text.slice(0, 200)}`,
        { details: { signer: options.id, path, status: response.status } },
      );
    }
    return parseState((await response.json()) as Record<string, unknown>);
  }
  return Object.freeze({
    kind: "custody" as const,
    id: options.id,
    orgId: options.orgId,
    address: options.address,
    scope: options.orgId ? ("organisation" as const) : ("platform" as const),
    pollBudget: options.pollBudget,
    pollIntervalMs: options.pollIntervalMs,
    async submit(intent: CustodyIntent) {
      return state(await call("POST", "/v1/intents", intent), "/v1/intents");
    },
    async status(externalId: string) {
      const path = `/v1/intents/${encodeURIComponent(externalId)}`;
      return state(await call("GET", path), path);
    },
  } satisfies CustodySigner);
}

/** Normalises the provider's body; an unexpected shape counts as unknown rather than success. */
function parseState(body: Record<string, unknown>): CustodyState {
  const txHash =
    typeof body.txHash === "string" && /^0x[0-9a-fA-F]{64}$/.test(body.txHash)
      ? (body.txHash as Hex)
      : undefined;
  const reason = typeof body.reason === "string" ? body.reason : "no reason given";
  switch (body.status) {
    case "pending_approval":
    case "approved":
      return { status: body.status };
    case "broadcast":
    case "confirmed":
      // A hash lost from the response: the intent is known to be on its way; ask again by id.
      return txHash ? { status: body.status, txHash } : { status: "approved" };
    case "rejected":
      return { status: "rejected", reason };
    case "failed":
      return txHash ? { status: "failed", reason, txHash } : { status: "failed", reason };
    default:
      return { status: "unknown" };
  }
}
