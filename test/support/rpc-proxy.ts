import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { readBody } from "./http-body.js";

/**
 * A JSON-RPC node on loopback that forwards to a real one (anvil) and misbehaves on demand, for
 * the faults providers show in the field and anvil alone never does: a method the node does not
 * offer, a send that fails or times out after (or before) the node took it, a head that goes
 * backwards while the node syncs, an `eth_getLogs` answer that is short. Every test that needs a
 * faulty node builds it from this one fixture.
 *
 * A rule matches calls by method (and optionally a predicate on the params) and says what to do:
 *
 * - `{ error }`: answer with a JSON-RPC error; the node never sees the call.
 * - `{ httpStatus }`: answer the whole HTTP request with that status; the node never sees it.
 * - `{ hang: true }`: never answer (the client's timeout fires); the node never sees it.
 * - `{ result }`: answer with this result; the node never sees the call.
 * - `{ rewrite }`: forward, then answer what `rewrite` makes of the node's result.
 * - `{ forward: true, answer }`: forward, so the node acts, then reply `answer` (an error, an HTTP
 *   status or a hang) instead of its result: the call's effect happened and the client cannot
 *   know it.
 *
 * `times` bounds how many calls a rule takes (default: every call until it is removed).
 */

export type RpcParams = readonly unknown[];

export interface RpcError {
  code: number;
  message: string;
}

export type RpcFailure = { error: RpcError } | { httpStatus: number } | { hang: true };

export type RpcAction =
  | RpcFailure
  | { result: unknown }
  | { rewrite: (result: unknown, params: RpcParams) => unknown }
  | { forward: true; answer: RpcFailure };

export interface RpcRuleOptions {
  /** Only calls whose params satisfy this are taken. */
  when?: (params: RpcParams) => boolean;
  /** How many calls the rule takes before it retires itself; default unbounded. */
  times?: number;
}

export interface RpcRule {
  /** Calls this rule has taken so far. */
  readonly taken: number;
  remove(): void;
}

export interface RpcCall {
  method: string;
  params: RpcParams;
}

export interface RpcProxy {
  /** The URL a client (or a spawned role, through its configuration) uses instead of the node's. */
  readonly url: string;
  /** Adds a rule; the newest matching rule wins. */
  on(method: string, action: RpcAction, options?: RpcRuleOptions): RpcRule;
  /** Removes every rule: the proxy forwards everything again. */
  clear(): void;
  /** Calls received so far (every one, taken by a rule or forwarded), optionally of one method. */
  calls(method?: string): RpcCall[];
  stop(): Promise<void>;
}

/** JSON-RPC's "method not found", which nodes answer for a method they do not offer. */
export const METHOD_NOT_FOUND: RpcError = {
  code: -32601,
  message: "the method does not exist/is not available",
};

interface Rule {
  method: string;
  action: RpcAction;
  when: ((params: RpcParams) => boolean) | undefined;
  left: number;
  taken: number;
}

interface Request {
  jsonrpc: "2.0";
  id: unknown;
  method: string;
  params?: RpcParams;
}

/** An HTTP-level outcome of one request: the proxy answers the whole request with it. */
class HttpOutcome {
  constructor(readonly status: number | "hang") {}
}

export async function startRpcProxy(upstreamUrl: string): Promise<RpcProxy> {
  const rules: Rule[] = [];
  const log: RpcCall[] = [];
  const hanging = new Set<ServerResponse>();

  function take(call: Request): RpcAction | undefined {
    for (let i = rules.length - 1; i >= 0; i--) {
      const rule = rules[i] as Rule;
      if (rule.method !== call.method || rule.left <= 0) continue;
      if (rule.when && !rule.when(call.params ?? [])) continue;
      rule.left--;
      rule.taken++;
      return rule.action;
    }
    return undefined;
  }

  async function upstream(call: Request): Promise<{ result?: unknown; error?: RpcError }> {
    const response = await fetch(upstreamUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(call),
    });
    return (await response.json()) as { result?: unknown; error?: RpcError };
  }

  function failure(id: unknown, outcome: RpcFailure): object {
    if ("error" in outcome) return { jsonrpc: "2.0", id, error: outcome.error };
    throw new HttpOutcome("hang" in outcome ? "hang" : outcome.httpStatus);
  }

  /** One call's answer object, or an HttpOutcome thrown for the whole request. */
  async function answer(call: Request): Promise<object> {
    log.push({ method: call.method, params: call.params ?? [] });
    const action = take(call);
    if (action === undefined) return { jsonrpc: "2.0", id: call.id, ...(await upstream(call)) };
    if ("result" in action) return { jsonrpc: "2.0", id: call.id, result: action.result };
    if ("rewrite" in action) {
      const reply = await upstream(call);
      if (reply.error) return { jsonrpc: "2.0", id: call.id, error: reply.error };
      return { jsonrpc: "2.0", id: call.id, result: action.rewrite(reply.result, call.params ?? []) };
    }
    if ("forward" in action) {
      await upstream(call);
      return failure(call.id, action.answer);
    }
    return failure(call.id, action);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = JSON.parse(await readBody(req)) as Request | Request[];
    try {
      const reply = Array.isArray(body) ? await Promise.all(body.map(answer)) : await answer(body);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(reply));
    } catch (error) {
      if (!(error instanceof HttpOutcome)) throw error;
      if (error.status === "hang") {
        hanging.add(res);
        return;
      }
      res.writeHead(error.status, { "content-type": "text/plain" });
      res.end("injected failure");
    }
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: Error) => {
      res.writeHead(502, { "content-type": "text/plain" });
      res.end(`proxy: ${error.message}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    on(method, action, options = {}) {
      const rule: Rule = { method, action, when: options.when, left: options.times ?? Infinity, taken: 0 };
      rules.push(rule);
      return {
        get taken() {
          return rule.taken;
        },
        remove() {
          const at = rules.indexOf(rule);
          if (at >= 0) rules.splice(at, 1);
        },
      };
    },
    clear() {
      rules.length = 0;
    },
    calls: (method) => log.filter((call) => method === undefined || call.method === method),
    async stop() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
