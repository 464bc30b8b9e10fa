import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP proxy in front of PostgreSQL that can lose one acknowledgement: the client's statement
 * reaches the server and commits, but the connection dies before the reply comes back. This is
 * the window where a client cannot know whether its write landed (a network cut, a failover),
 * and the engine must treat its own retried write as written, not as someone else's.
 */
export interface PgProxy {
  /** The database URL with its host and port replaced by the proxy's. */
  url: string;
  /**
   * Arms one fault: on the first connection whose client sends `trigger` (and then, when given,
   * `thenTrigger`), the server's next reply is dropped and both sockets are destroyed.
   */
  loseReplyOnce(trigger: string, thenTrigger?: string): void;
  /** How many replies were dropped so far. */
  dropped(): number;
  close(): Promise<void>;
}

interface Pending {
  trigger: string;
  thenTrigger: string | undefined;
}

export async function startPgProxy(databaseUrl: string): Promise<PgProxy> {
  const target = new URL(databaseUrl);
  const targetPort = Number(target.port || 5432);
  const sockets = new Set<Socket>();
  let armed: Pending | null = null;
  let dropped = 0;

  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, target.hostname);
    sockets.add(client).add(upstream);
    // "idle" → "saw trigger" (waiting for thenTrigger) → "drop next reply".
    let stage: "idle" | "triggered" | "drop" = "idle";
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("data", (chunk: Buffer) => {
      const text = chunk.toString("latin1");
      if (stage === "idle" && armed && text.includes(armed.trigger)) {
        stage = armed.thenTrigger === undefined ? "drop" : "triggered";
        if (armed.thenTrigger === undefined) armed = null;
      } else if (stage === "triggered" && armed?.thenTrigger && text.includes(armed.thenTrigger)) {
        stage = "drop";
        armed = null;
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      if (stage === "drop") {
        dropped++;
        cut();
        return;
      }
      client.write(chunk);
    });
    for (const socket of [client, upstream]) {
      socket.on("error", cut);
      socket.on("close", () => {
        cut();
        sockets.delete(socket);
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (typeof address !== "object" || address === null) throw new Error("proxy did not bind");
  const url = new URL(databaseUrl);
  url.hostname = "127.0.0.1";
  url.port = String(address.port);

  return {
    url: url.toString(),
    loseReplyOnce(trigger, thenTrigger) {
      armed = { trigger, thenTrigger };
    },
    dropped: () => dropped,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
