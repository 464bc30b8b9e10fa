import { Agent, request } from "node:http";

/**
 * A JSON-over-HTTP client on one keep-alive agent, as a service's HTTP client pool holds its
 * connections open: a closed loop of N clients reuses N sockets instead of a TCP handshake per
 * call.
 */
export class KeepAliveHttp {
  private readonly agent: Agent;

  constructor(
    private readonly baseUrl: string,
    /** Sockets the agent keeps open at most: one per client of the loop. */
    sockets: number,
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets });
  }

  /** POSTs `body` as JSON to `path`; resolves with the status and the body text, whatever the status. */
  post(
    path: string,
    headers: Record<string, string>,
    body: unknown,
  ): Promise<{ status: number; text: string }> {
    const payload = JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(
        new URL(path, this.baseUrl),
        {
          method: "POST",
          agent: this.agent,
          headers: {
            ...headers,
            "content-type": "application/json",
            "content-length": String(Buffer.byteLength(payload)),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("end", () =>
            resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
          );
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(payload);
    });
  }

  /** Closes the kept sockets. */
  close(): void {
    this.agent.destroy();
  }
}
