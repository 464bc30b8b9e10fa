import { createHash } from "node:crypto";
import { Redis, ReplyError } from "ioredis";
import pg from "pg";
import { LuaScript } from "../../src/keyed/lua-script.js";
import type { FaultKind } from "./faults.js";

/**
 * The explorer's hands inside a real runner process (docs/engine.md, "The fault-point explorer").
 * It wraps `pg.Client.prototype.query` (Pool.query goes through it, so each statement counts once)
 * and ioredis's `Redis.prototype.sendCommand` (pipelines and scripts included), names every
 * statement and command that belongs to the execution under test, and fires one armed fault when
 * the armed point is reached. The real servers answer everything else.
 *
 * Attribution: a statement or command belongs to the run when its parameters (or arguments) name
 * an execution whose turn this process began since the run was armed (the runner's `beforeTurn`
 * hook calls {@link Interposer.learn}), or when it ends a transaction in which such a statement
 * ran. Background traffic (liveness checks, schedules, BullMQ's idle fetches and stalled checks)
 * names no execution and is not counted; what is left that still varies with timing (a lock
 * renewal, a sweep that happened to look at the execution) the explorer drops by keeping only the
 * points two clean runs agree on.
 */

/** A named point of a clean run, with a sample of what was sent there (for reports). */
export interface PointRecord {
  name: string;
  sample: string;
}

export interface Armed {
  run: string;
  point: string;
  fault: FaultKind;
}

/** What a run is armed with: its fault (none for a clean run) and the executions of earlier runs. */
export interface Arming {
  armed: Armed | null;
  /** Executions of earlier runs: a late turn of one of them is not this run's traffic. */
  retired: string[];
}

/** Clients whose application name starts with this are the explorer's own, never fault points. */
export const EXPLORER_APPLICATION_PREFIX = "fp-";

const SAMPLE_CHARS = 120;

const sha1 = (text: string) => createHash("sha1").update(text).digest("hex");

/** `name` of a query config, else the first words of the normalised SQL and a hash of all of it. */
export function pgLabel(text: string, name: string | undefined): string {
  if (name) return name;
  // Statements that inline their ids (the simple protocol of beginTurns) name the same point every run.
  const normalised = text
    .replace(/\s+/g, " ")
    .trim()
    .toLowerCase()
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<id>");
  const words = normalised
    .replace(/[^a-z0-9_ ]/g, " ")
    .split(" ")
    .filter(Boolean)
    .slice(0, 4)
    .join("_");
  return `${words || "sql"}~${sha1(normalised).slice(0, 6)}`;
}

type Untyped = (...args: unknown[]) => unknown;

interface PgClientState {
  inTransaction: boolean;
  transactionMentions: boolean;
}

interface CommandLike {
  name: string;
  args: unknown[];
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  promise: Promise<unknown>;
}

export class Interposer {
  private interest = new Set<string>();
  private counts = new Map<string, number>();
  private points: PointRecord[] = [];
  private armed: Armed | null = null;
  private fired = false;
  private retired = new Set<string>();
  private readonly scripts = new Map<string, string>();
  private readonly pgStates = new WeakMap<object, PgClientState>();
  private readonly admin: pg.Client;

  constructor(databaseUrl: string) {
    this.admin = new pg.Client({ connectionString: databaseUrl, application_name: "fp-admin" });
    this.admin.on("error", () => undefined);
  }

  /** Patches the drivers; call before any pool or Redis client is created. */
  async install(): Promise<void> {
    await this.admin.connect();
    this.patchPg();
    this.patchRedis();
  }

  /** Starts a run: counters, recording and attribution start over; `armed` fires once. */
  arm({ armed, retired }: Arming): void {
    for (const id of retired) this.retired.add(id);
    this.interest = new Set();
    this.counts = new Map();
    this.points = [];
    this.armed = armed;
    this.fired = false;
  }

  /** The execution `executionId` belongs to the current run (its turn is about to begin). */
  learn(executionId: string): void {
    if (!this.retired.has(executionId)) this.interest.add(executionId);
  }

  collect(): { points: PointRecord[]; fired: boolean } {
    return { points: this.points, fired: this.fired };
  }

  private mentions(text: string): boolean {
    for (const id of this.interest) if (text.includes(id)) return true;
    return false;
  }

  /** Counts a point; returns the fault to fire there, if it is the armed one. */
  private reach(name: string, sample: string): FaultKind | null {
    this.points.push({ name, sample: sample.slice(0, SAMPLE_CHARS) });
    if (this.fired || this.armed?.point !== name) return null;
    this.fired = true;
    return this.armed.fault;
  }

  private nextName(kind: "pg" | "redis", label: string): string {
    const n = (this.counts.get(`${kind}:${label}`) ?? 0) + 1;
    this.counts.set(`${kind}:${label}`, n);
    return `${kind}:${label}#${n}`;
  }

  /** Records when and where a fault fired, in PostgreSQL time, before it acts. */
  private async log(point: string, fault: FaultKind): Promise<void> {
    await this.admin
      .query("INSERT INTO fp_faults (run, point, fault, pid) VALUES ($1, $2, $3, $4)", [
        this.armed?.run ?? "?",
        point,
        fault,
        process.pid,
      ])
      .catch(() => undefined);
  }

  private async die(point: string, fault: FaultKind): Promise<never> {
    await this.log(point, fault);
    process.kill(process.pid, "SIGKILL");
    return new Promise<never>(() => undefined);
  }

  private patchPg(): void {
    const original = pg.Client.prototype.query as unknown as Untyped;
    const self = this;
    const patched = function (this: pg.Client, ...args: unknown[]): unknown {
      const decision = self.pgPoint(this, args);
      if (!decision) return original.apply(this, args);
      return self.firePg(this, original, args, decision.point, decision.fault);
    };
    pg.Client.prototype.query = patched as unknown as typeof pg.Client.prototype.query;
  }

  /** Names the statement when it belongs to the run; the fault to fire, if armed here. */
  private pgPoint(client: pg.Client, args: unknown[]): { point: string; fault: FaultKind } | null {
    const application = (client as unknown as { connectionParameters?: { application_name?: string } })
      .connectionParameters?.application_name;
    if (application?.startsWith(EXPLORER_APPLICATION_PREFIX)) return null;
    const [first, second] = args;
    let text: string;
    let name: string | undefined;
    let values: unknown;
    if (typeof first === "string") {
      text = first;
      values = second;
    } else if (
      typeof first === "object" &&
      first !== null &&
      typeof (first as { text?: unknown }).text === "string"
    ) {
      const config = first as { text: string; name?: string; values?: unknown };
      text = config.text;
      name = config.name;
      values = Array.isArray(second) ? second : config.values;
    } else {
      return null;
    }
    const state = this.pgState(client);
    const verb = text.trimStart().slice(0, 8).toLowerCase();
    let belongs: boolean;
    if (verb.startsWith("begin")) {
      state.inTransaction = true;
      state.transactionMentions = false;
      return null;
    }
    if (verb.startsWith("commit") || verb.startsWith("rollback")) {
      belongs = state.inTransaction && state.transactionMentions;
      state.inTransaction = false;
      state.transactionMentions = false;
    } else {
      belongs = this.interest.size > 0 && this.mentions(`${text}\n${safeJson(values)}`);
      if (belongs && state.inTransaction) state.transactionMentions = true;
    }
    process.stderr.write(`pg ${belongs} ${this.interest.size} ${text.slice(0, 60).replace(/\s+/g, " ")}\n`);
    if (!belongs) return null;
    const point = this.nextName("pg", pgLabel(text, name));
    const fault = this.reach(point, text.replace(/\s+/g, " ").trim());
    return fault ? { point, fault } : null;
  }

  private pgState(client: object): PgClientState {
    let state = this.pgStates.get(client);
    if (!state) {
      state = { inTransaction: false, transactionMentions: false };
      this.pgStates.set(client, state);
    }
    return state;
  }

  private firePg(
    client: pg.Client,
    original: Untyped,
    args: unknown[],
    point: string,
    fault: FaultKind,
  ): unknown {
    const callback = typeof args[args.length - 1] === "function" ? (args[args.length - 1] as Untyped) : null;
    const deliver = (outcome: Promise<unknown>): unknown => {
      if (!callback) return outcome;
      outcome.then(
        (result) => callback(null, result),
        (error) => callback(error),
      );
      return undefined;
    };
    if (fault === "kill-before") return deliver(this.die(point, fault));
    if (fault === "kill-after") {
      // Sent for real; the process dies when the answer arrives, before the caller sees it.
      const rest = callback ? args.slice(0, -1) : args;
      original.apply(client, [...rest, () => void this.die(point, fault)]);
      return deliver(new Promise<never>(() => undefined));
    }
    if (fault === "57P01") {
      const terminated = (async () => {
        await this.log(point, fault);
        await this.admin
          .query("SELECT pg_terminate_backend($1)", [(client as unknown as { processID: number }).processID])
          .catch(() => undefined);
        const rest = callback ? args.slice(0, -1) : args;
        return (original.apply(client, rest) as Promise<unknown>) ?? Promise.resolve(undefined);
      })();
      return deliver(terminated);
    }
    const refused = (async () => {
      await this.log(point, fault);
      throw databaseError(fault, point);
    })();
    return deliver(refused);
  }

  private patchRedis(): void {
    const self = this;
    const defineCommand = Redis.prototype.defineCommand;
    Redis.prototype.defineCommand = function (this: Redis, name: string, definition: { lua: string }) {
      self.scripts.set(sha1(definition.lua), name.replace(/:[^:]*$/, ""));
      return defineCommand.call(this, name, definition as Parameters<typeof defineCommand>[1]);
    } as typeof defineCommand;
    const run = LuaScript.prototype.run;
    LuaScript.prototype.run = function (this: LuaScript, ...args: Parameters<typeof run>) {
      const sha = (this as unknown as { sha: string }).sha;
      if (!self.scripts.has(sha)) self.scripts.set(sha, `keyed-${this.name}`);
      return run.apply(this, args);
    };
    const sendCommand = Redis.prototype.sendCommand as unknown as Untyped;
    Redis.prototype.sendCommand = function (this: Redis, ...args: unknown[]): unknown {
      const command = args[0] as CommandLike;
      const decision = self.redisPoint(command);
      if (!decision) return sendCommand.apply(this, args);
      return self.fireRedis(this, sendCommand, args, command, decision.point, decision.fault);
    } as unknown as typeof Redis.prototype.sendCommand;
  }

  private redisLabel(command: CommandLike): string {
    const name = command.name.toLowerCase();
    if (name === "evalsha") {
      const sha = String(command.args[0]);
      return this.scripts.get(sha) ?? `evalsha~${sha.slice(0, 6)}`;
    }
    if (name === "eval") {
      const sha = sha1(String(command.args[0]));
      return this.scripts.get(sha) ?? `eval~${sha.slice(0, 6)}`;
    }
    return name;
  }

  private redisPoint(command: CommandLike): { point: string; fault: FaultKind } | null {
    if (this.interest.size === 0 || !command?.name) return null;
    const name = command.name.toLowerCase();
    // A script's own text is not a mention; its keys and arguments are.
    const args = name === "eval" ? command.args.slice(1) : command.args;
    const flat = args.map((a) => (Buffer.isBuffer(a) ? a.toString("latin1") : String(a))).join(" ");
    if (!this.mentions(flat)) return null;
    const point = this.nextName("redis", this.redisLabel(command));
    const fault = this.reach(point, `${command.name} ${flat}`);
    return fault ? { point, fault } : null;
  }

  private fireRedis(
    redis: Redis,
    sendCommand: Untyped,
    args: unknown[],
    command: CommandLike,
    point: string,
    fault: FaultKind,
  ): unknown {
    if (fault === "kill-before") {
      void this.die(point, fault);
      return command.promise;
    }
    if (fault === "kill-after") {
      command.resolve = () => void this.die(point, fault);
      command.reject = () => void this.die(point, fault);
      return sendCommand.apply(redis, args);
    }
    if (fault === "redis-error") {
      void this.log(point, fault);
      command.reject(new ReplyError(`ERR injected by the fault-point explorer at ${point}`));
      return command.promise;
    }
    // redis-drop: the socket goes away under the command; ioredis reconnects as it would.
    void this.log(point, fault);
    (redis as unknown as { stream?: { destroy(): void } }).stream?.destroy();
    return sendCommand.apply(redis, args);
  }
}

/** An error shaped as pg's own for a refused statement (code, message, severity). */
function databaseError(code: FaultKind, point: string): pg.DatabaseError {
  const messages: Record<string, string> = {
    "22P05": "unsupported Unicode escape sequence",
    "23505": 'duplicate key value violates unique constraint "fault_point"',
    "40001": "could not serialize access due to concurrent update",
  };
  const error = new pg.DatabaseError(messages[code] ?? `injected ${code}`, 0, "error");
  error.code = code;
  error.severity = "ERROR";
  error.detail = `injected by the fault-point explorer at ${point}`;
  return error;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    return "";
  }
}
