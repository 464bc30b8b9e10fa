import { parseArgs } from "node:util";
import type { ApiClient } from "./api-client.js";
import { answerPrinter, type CommandIo, EXIT, UsageError } from "./cli-io.js";
import { EXECUTION_FILTER_OPTIONS, parseExecutionFilterFlags } from "./execution-filter-flags.js";
import { renderFields, renderTable } from "./table.js";

/** A bulk operation as the API answers it (Operation in the OpenAPI document). */
interface OperationView {
  id: string;
  action: string;
  filter: Record<string, unknown>;
  reason: string | null;
  signal: { name: string; payload: unknown } | null;
  status: string;
  total: number;
  succeeded: number;
  failed: number;
  pending: number;
  createdBy: { name: string; subject: string };
  abortRequestedBy: { name: string; subject: string } | null;
  abortRequestedAt: string | null;
  createdAt: string;
  finishedAt: string | null;
}

interface FailureView {
  executionId: string;
  code: string;
  message: string;
  at: string;
}

const OPTIONS = {
  json: { type: "boolean" },
  action: { type: "string" },
  ...EXECUTION_FILTER_OPTIONS,
  version: { type: "string" },
  reason: { type: "string" },
  signal: { type: "string" },
  payload: { type: "string" },
  "dry-run": { type: "boolean" },
  limit: { type: "string" },
  cursor: { type: "string" },
} as const;

/**
 * `tenor ops create|list|get|failures|abort` (docs/console.md, "Bulk operations"): bulk actions by
 * query through `/v1/operations`; `create --dry-run` only counts.
 */
export async function runOpsCommand(args: readonly string[], api: ApiClient, io: CommandIo): Promise<number> {
  const [action, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: [...rest],
    options: OPTIONS,
    allowPositionals: true,
    strict: true,
  });
  const print = answerPrinter(io, values.json);
  switch (action) {
    case "create": {
      if (positionals.length > 0)
        throw new UsageError(`ops create takes no positional argument, got ${positionals[0]}`);
      const body = createBody(values);
      if (values["dry-run"]) {
        const count = await api.post<{ matched: number; maxItems: number }>("/v1/operations", body);
        print(
          count,
          () =>
            `${count.matched} runs match (at most ${count.maxItems} per operation); nothing was changed\n`,
        );
        return EXIT.OK;
      }
      const created = await api.post<OperationView>("/v1/operations", body);
      print(
        created,
        () =>
          `created ${created.id}: follow it with tenor ops get ${created.id}\n${renderOperation(created)}`,
      );
      return EXIT.OK;
    }
    case "list": {
      const query = new URLSearchParams();
      if (values.limit !== undefined) query.set("limit", values.limit);
      if (values.cursor !== undefined) query.set("cursor", values.cursor);
      const body = await api.get<{ items: OperationView[]; nextCursor: string | null }>(
        `/v1/operations?${query}`,
      );
      print(body, () => renderOperations(body.items, body.nextCursor));
      return EXIT.OK;
    }
    case "get": {
      const id = operationId(positionals, action);
      const body = await api.get<OperationView>(`/v1/operations/${id}`);
      print(body, () => renderOperation(body));
      return EXIT.OK;
    }
    case "failures": {
      const id = operationId(positionals, action);
      const query = new URLSearchParams();
      if (values.limit !== undefined) query.set("limit", values.limit);
      if (values.cursor !== undefined) query.set("cursor", values.cursor);
      const body = await api.get<{ items: FailureView[]; nextCursor: string | null }>(
        `/v1/operations/${id}/failures?${query}`,
      );
      print(body, () =>
        [
          renderTable(
            ["RUN", "CODE", "MESSAGE", "AT"],
            body.items.map((f) => [f.executionId, f.code, f.message, f.at]),
          ),
          body.nextCursor ? `more: --cursor ${body.nextCursor}\n` : "",
        ].join(""),
      );
      return EXIT.OK;
    }
    case "abort": {
      const id = operationId(positionals, action);
      const body = await api.post<OperationView>(`/v1/operations/${id}/abort`);
      print(
        body,
        () =>
          `abort asked: the batch in progress finishes, the rest is left untouched\n${renderOperation(body)}`,
      );
      return EXIT.OK;
    }
    default:
      throw new UsageError(action ? `unknown ops command ${JSON.stringify(action)}` : "name an ops command");
  }
}

type Values = Partial<Record<keyof typeof OPTIONS, string | boolean>>;

/** The body of POST /v1/operations from the flags; the API validates and names what is wrong. */
function createBody(values: Values): Record<string, unknown> {
  const action = values.action;
  if (typeof action !== "string")
    throw new UsageError("ops create needs --action cancel|resume|signal|pause|unpause|reset-to-version");
  const text = (name: keyof typeof OPTIONS) =>
    typeof values[name] === "string" ? (values[name] as string) : undefined;
  // Bulk operations also select by workflow version, which the run list does not.
  const filter: Record<string, unknown> = { ...parseExecutionFilterFlags(values) };
  const version = text("version");
  if (version !== undefined) {
    if (!/^\d+$/.test(version))
      throw new UsageError(`--version must be a whole number, got ${JSON.stringify(version)}`);
    filter.version = Number(version);
  }
  const body: Record<string, unknown> = { action, filter };
  if (text("reason") !== undefined) body.reason = text("reason");
  const signal = text("signal");
  if (signal !== undefined) {
    let payload: unknown = null;
    const raw = text("payload");
    if (raw !== undefined) {
      try {
        payload = JSON.parse(raw);
      } catch {
        throw new UsageError(`--payload must be JSON, got ${JSON.stringify(raw)}`);
      }
    }
    body.signal = { name: signal, payload };
  } else if (text("payload") !== undefined) {
    throw new UsageError("--payload goes with --signal <name>");
  }
  if (values["dry-run"] === true) body.dryRun = true;
  return body;
}

function operationId(positionals: readonly string[], action: string): string {
  const [id, ...extra] = positionals;
  if (!id) throw new UsageError(`ops ${action} needs an operation id (tenor ops list shows them)`);
  if (extra.length > 0)
    throw new UsageError(`ops ${action} takes one operation id, got ${positionals.length}`);
  return encodeURIComponent(id);
}

function describeFilter(filter: Record<string, unknown>): string {
  return Object.entries(filter)
    .map(([name, value]) => `${name}=${Array.isArray(value) ? value.join(",") : String(value)}`)
    .join(" ");
}

function renderOperations(items: readonly OperationView[], nextCursor: string | null): string {
  return (
    renderTable(
      ["OPERATION", "ACTION", "STATUS", "DONE", "FAILED", "PENDING", "FILTER", "CREATED BY", "CREATED"],
      items.map((o) => [
        o.id,
        o.action,
        o.status,
        `${o.succeeded + o.failed}/${o.total}`,
        String(o.failed),
        String(o.pending),
        describeFilter(o.filter),
        o.createdBy.subject,
        o.createdAt,
      ]),
    ) + (nextCursor ? `more: --cursor ${nextCursor}\n` : "")
  );
}

function renderOperation(o: OperationView): string {
  return renderFields([
    ["operation", o.id],
    ["action", o.signal ? `signal ${o.signal.name}` : o.action],
    ["status", o.status],
    ["filter", describeFilter(o.filter)],
    [
      "progress",
      `${o.succeeded + o.failed} of ${o.total} done: ${o.succeeded} succeeded, ${o.failed} failed, ${o.pending} pending`,
    ],
    ["failures", o.failed > 0 ? `tenor ops failures ${o.id}` : null],
    ["reason", o.reason],
    ["created by", `${o.createdBy.subject} (${o.createdBy.name}) at ${o.createdAt}`],
    ["abort asked by", o.abortRequestedBy ? `${o.abortRequestedBy.subject} at ${o.abortRequestedAt}` : null],
    ["finished", o.finishedAt],
  ]);
}
