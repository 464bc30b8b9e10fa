import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from "node:dns";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { WEBHOOK_ERRORS } from "../errors/webhook-errors.js";
import { isInternalAddress, urlRefusal } from "./address-policy.js";

/** One HTTP attempt of a delivery. */
export interface WebhookRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
  /** Bound on the whole attempt (resolve, connect, send, answer), in ms. */
  timeoutMs: number;
  allowPrivateAddresses: boolean;
}

/** How an attempt ended: a status code (any), or an error without one. */
export interface WebhookAttemptResult {
  statusCode: number | null;
  /** `timeout`, `address refused: ...`, a socket error; `status <n>` for a non-2xx answer; null on 2xx. */
  error: string | null;
  /** The first bytes of the answer, for the receipt. */
  response: string | null;
  durationMs: number;
}

/** Bytes of the receiver's answer kept on the receipt; the rest is read and dropped. */
const RESPONSE_EXCERPT_BYTES = 512;

/**
 * Sends one delivery attempt with node:http(s). A 2xx answer is success; any other status, a
 * redirect included (redirects are not followed: the URL is the contract), is a failure. The
 * address check runs on the resolved address inside the connection's own lookup, so a name that
 * resolves to an internal address is refused even if it resolved elsewhere when checked before
 * (DNS rebinding). Never throws.
 */
export function sendWebhook(request: WebhookRequest): Promise<WebhookAttemptResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const refusal = urlRefusal(request.url, request.allowPrivateAddresses);
  if (refusal)
    return Promise.resolve({
      statusCode: null,
      error: `url refused: ${refusal}`,
      response: null,
      durationMs: 0,
    });
  const url = new URL(request.url);
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: Omit<WebhookAttemptResult, "durationMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, durationMs: elapsed() });
    };
    const req = client.request(url, {
      method: "POST",
      headers: { ...request.headers, "content-length": Buffer.byteLength(request.body) },
      agent: false,
      ...(request.allowPrivateAddresses ? {} : { lookup: guardedLookup }),
    });
    const timer = setTimeout(() => {
      finish({ statusCode: null, error: "timeout", response: null });
      req.destroy();
    }, request.timeoutMs);
    req.on("error", (error: Error) => finish({ statusCode: null, error: error.message, response: null }));
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      res.on("data", (chunk: Buffer) => {
        if (kept < RESPONSE_EXCERPT_BYTES) chunks.push(chunk.subarray(0, RESPONSE_EXCERPT_BYTES - kept));
        kept += chunk.length;
      });
      res.on("end", () => {
        const status = res.statusCode ?? 0;
        const response = Buffer.concat(chunks).toString("utf8");
        finish({
          statusCode: status,
          error: status >= 200 && status < 300 ? null : `status ${status}`,
          response,
        });
      });
      res.on("error", (error: Error) =>
        finish({ statusCode: status(res), error: error.message, response: null }),
      );
    });
    req.end(request.body);
  });
}

function status(res: http.IncomingMessage): number | null {
  return res.statusCode ?? null;
}

/** dns.lookup that fails the connection when any resolved address is internal. */
const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, options as LookupOptions, (error, address, family) => {
    if (error) {
      callback(error, address as string, family);
      return;
    }
    const addresses: string[] = Array.isArray(address)
      ? (address as LookupAddress[]).map((a) => a.address)
      : [address as string];
    const internal = addresses.find(isInternalAddress);
    if (internal) {
      callback(
        Object.assign(new Error(`address refused: ${hostname} resolves to internal ${internal}`), {
          code: WEBHOOK_ERRORS.WEBHOOK_ADDRESS_REFUSED,
        }),
        address as string,
        family,
      );
      return;
    }
    callback(null, address as string, family);
  });
};
