import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { WEBHOOK_HEADERS } from "../../src/webhooks/event-types.js";
import { verifyWebhookSignature } from "../../src/webhooks/signature.js";

/** What the receiver does with one request: answer a status, or never answer (a hung endpoint). */
export type ReceiverAnswer = { status: number } | "hang";

/** One request as the receiver saw it. */
export interface ReceivedDelivery {
  eventId: string;
  eventType: string;
  attempt: number;
  rawBody: string;
  body: Record<string, unknown>;
  /** Whether `Tenor-Signature` verified against the secret the test gave (within 300 s). */
  signatureValid: boolean;
  /** Whether the receiver had already accepted (2xx) this event id: a duplicate it dedupes. */
  duplicate: boolean;
  answered: ReceiverAnswer;
}

/**
 * A real HTTP webhook receiver (node:http) on 127.0.0.1 for tests: it verifies every signature,
 * dedupes by event id the way docs/webhooks.md tells receivers to, and answers each request as
 * `answer` decides (a status, or `hang` to never answer, so the sender's timeout fires).
 */
export interface WebhookReceiver {
  url: string;
  received: ReceivedDelivery[];
  /** Event ids accepted (answered 2xx) at least once. */
  accepted(): Set<string>;
  /** Decides the answer to each request; default 200. */
  answer: (request: {
    eventId: string;
    attempt: number;
    index: number;
    executionId: string | null;
  }) => ReceiverAnswer;
  /** Secret used to verify signatures; set once the subscription exists. */
  secret: string;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const hung = new Set<ServerResponse>();
  const acceptedIds = new Set<string>();
  const receiver: WebhookReceiver = {
    url: "",
    received: [],
    accepted: () => new Set(acceptedIds),
    answer: () => ({ status: 200 }),
    secret: "",
    async close() {
      for (const res of hung) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks).toString("utf8");
      const eventId = String(req.headers[WEBHOOK_HEADERS.eventId.toLowerCase()] ?? "");
      const attempt = Number(req.headers[WEBHOOK_HEADERS.attempt.toLowerCase()] ?? 0);
      let signatureValid = true;
      try {
        verifyWebhookSignature({
          secret: receiver.secret,
          header: req.headers[WEBHOOK_HEADERS.signature.toLowerCase()] as string | undefined,
          rawBody,
          toleranceSeconds: 300,
          nowSeconds: Math.floor(Date.now() / 1_000),
        });
      } catch {
        signatureValid = false;
      }
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(rawBody) as Record<string, unknown>;
      } catch {
        // A sender killed mid-request leaves a truncated body: refuse it as a receiver would.
        res.writeHead(400, { "content-type": "text/plain" }).end("body is not JSON");
        return;
      }
      const executionId = ((body.data as { executionId?: string } | undefined)?.executionId ?? null) as
        | string
        | null;
      const answered = receiver.answer({ eventId, attempt, index: receiver.received.length, executionId });
      receiver.received.push({
        eventId,
        eventType: String(req.headers[WEBHOOK_HEADERS.eventType.toLowerCase()] ?? ""),
        attempt,
        rawBody,
        body,
        signatureValid,
        duplicate: acceptedIds.has(eventId),
        answered,
      });
      if (answered === "hang") {
        hung.add(res);
        return;
      }
      if (answered.status >= 200 && answered.status < 300 && signatureValid) acceptedIds.add(eventId);
      res.writeHead(answered.status, { "content-type": "text/plain" }).end(`answer ${answered.status}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}
