import { parseArgs } from "node:util";
import { type ActivityBody, renderActivity } from "./activity-render.js";
import type { ApiClient } from "./api-client.js";
import { answerPrinter, type CommandIo, EXIT, UsageError } from "./cli-io.js";
import {
  EXECUTION_FILTER_OPTIONS,
  executionFilterQuery,
  parseExecutionFilterFlags,
} from "./execution-filter-flags.js";
import {
  type Cancellation,
  cancelledBy,
  type Pause,
  type ResetBody,
  renderExecution,
  renderExecutionList,
  renderSteps,
} from "./runs-render.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const OPTIONS = {
  json: { type: "boolean" },
  ...EXECUTION_FILTER_OPTIONS,
  "idempotency-key": { type: "string" },
  limit: { type: "string" },
  cursor: { type: "string" },
  parent: { type: "string" },
  "include-children": { type: "boolean" },
  payload: { type: "string" },
  reject: { type: "boolean" },
  reason: { type: "string" },
  position: { type: "string" },
} as const;

/** `tenor runs ...` through the Platform API; returns the exit code. */
export async function runRunsCommand(
  args: readonly string[],
  api: ApiClient,
  io: CommandIo,
): Promise<number> {
  const [action, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: [...rest],
    options: OPTIONS,
    allowPositionals: true,
    strict: true,
  });
  const print = answerPrinter(io, values.json);
  switch (action) {
    case "list": {
      const query = executionFilterQuery(parseExecutionFilterFlags(values));
      if (values.limit !== undefined) query.set("limit", values.limit);
      if (values.cursor !== undefined) query.set("cursor", values.cursor);
      if (values["idempotency-key"] !== undefined) query.set("idempotencyKey", values["idempotency-key"]);
      if (values.parent !== undefined) query.set("parentId", values.parent);
      if (values["include-children"]) query.set("includeChildren", "true");
      const body = await api.get<Parameters<typeof renderExecutionList>[0]>(`/v1/executions?${query}`);
      print(body, () => renderExecutionList(body));
      return EXIT.OK;
    }
    case "get": {
      const id = executionId(positionals, 0);
      const [body, activity] = await Promise.all([
        api.get<Parameters<typeof renderExecution>[0]>(`/v1/executions/${id}`),
        api.get<ActivityBody>(`/v1/executions/${id}/activity`),
      ]);
      print({ ...body, activity }, () => renderExecution(body) + renderActivity(activity));
      return EXIT.OK;
    }
    case "steps": {
      const id = executionId(positionals, 0);
      const body = await api.get<Parameters<typeof renderSteps>[0]>(`/v1/executions/${id}/steps`);
      print(body, () => renderSteps(body));
      return EXIT.OK;
    }
    case "history": {
      // Always the file itself (JSON): `tenor runs history <id> > run.json`, then `tenor replay run.json`.
      const id = executionId(positionals, 0);
      const body = await api.get(`/v1/executions/${id}/history`);
      io.stdout(`${JSON.stringify(body, null, 2)}\n`);
      return EXIT.OK;
    }
    case "evidence": {
      // Always the signed document itself: `tenor runs evidence <id> > e.json`, then `tenor verify e.json`.
      const id = executionId(positionals, 0);
      const body = await api.get(`/v1/executions/${id}/evidence`);
      io.stdout(`${JSON.stringify(body, null, 2)}\n`);
      return EXIT.OK;
    }
    case "signal": {
      const id = executionId(positionals, 0);
      const name = required(positionals[1], "name the signal: tenor runs signal <id> <name>");
      const payload = values.payload === undefined ? undefined : parseJson(values.payload, "--payload");
      const headers: Record<string, string> = values["idempotency-key"]
        ? { "idempotency-key": values["idempotency-key"] }
        : {};
      const body = await api.post<{ duplicate: boolean }>(
        `/v1/executions/${id}/signals/${encodeURIComponent(name)}`,
        payload,
        headers,
      );
      print(
        body,
        () => `signal ${name} ${body.duplicate ? "was already delivered" : "delivered"} to ${id}\n`,
      );
      return EXIT.OK;
    }
    case "approve":
      return approve(api, io, positionals, values);
    case "cancel": {
      const id = executionId(positionals, 0);
      const body = await api.post<{ cancelRequestedAt: string; cancellation: Cancellation }>(
        `/v1/executions/${id}/cancel`,
        values.reason === undefined ? undefined : { reason: values.reason },
      );
      print(
        body,
        () =>
          `cancellation of ${id} requested at ${body.cancelRequestedAt}${cancelledBy(body.cancellation)}\n`,
      );
      return EXIT.OK;
    }
    case "resume": {
      const id = executionId(positionals, 0);
      const body = await api.post<{ held: boolean }>(`/v1/executions/${id}/resume`);
      print(body, () => `${id} ${body.held ? "(held)" : "(suspended)"} resumed: it runs again now\n`);
      return EXIT.OK;
    }
    case "pause": {
      const id = executionId(positionals, 0);
      const body = await api.post<{ status: string; pause: Pause }>(
        `/v1/executions/${id}/pause`,
        values.reason === undefined ? undefined : { reason: values.reason },
      );
      print(
        body,
        () =>
          `${id} paused at ${body.pause.at}${cancelledBy({ requestedAt: body.pause.at, ...body.pause })}: ` +
          "it finishes its current step and takes no new turn until unpaused\n",
      );
      return EXIT.OK;
    }
    case "unpause": {
      const id = executionId(positionals, 0);
      const body = await api.post<{ status: string; pause: Pause }>(`/v1/executions/${id}/unpause`);
      print(body, () => `${id} unpaused: it runs again now\n`);
      return EXIT.OK;
    }
    case "reset":
      return resetRun(api, print, positionals, values);
    default:
      throw new UsageError(action ? `unknown runs command ${JSON.stringify(action)}` : "name a runs command");
  }
}

interface PendingApproval {
  name: string;
  params: unknown;
  paramsHash: string;
  quorum: number;
  until: string | null;
}

/**
 * Identity-bound voting from a terminal: the CLI fetches the pending approval, shows its
 * parameters (on stderr, so `--json` output stays clean) and votes on exactly their hash.
 */
async function approve(
  api: ApiClient,
  io: CommandIo,
  positionals: string[],
  values: { json?: boolean; reject?: boolean; reason?: string },
): Promise<number> {
  const id = executionId(positionals, 0);
  const name = required(positionals[1], "name the approval: tenor runs approve <id> <approval>");
  const approvals = await api.get<{ pending: PendingApproval[] }>(`/v1/executions/${id}/approvals`);
  const pending = approvals.pending.find((p) => p.name === name);
  if (!pending) {
    const names = approvals.pending.map((p) => p.name);
    io.stderr(
      `execution ${id} does not wait for approval ${JSON.stringify(name)}` +
        (names.length > 0 ? ` (it waits for: ${names.join(", ")})\n` : " (it waits for no approval)\n"),
    );
    return EXIT.FAILED;
  }
  io.stderr(
    `approval ${name} of ${id}\n  params: ${JSON.stringify(pending.params)}\n  hash:   ${pending.paramsHash}\n`,
  );
  const decision = values.reject ? "reject" : "approve";
  const body = await api.post<VoteAnswer>(`/v1/executions/${id}/approvals/${encodeURIComponent(name)}`, {
    decision,
    paramsHash: pending.paramsHash,
    ...(values.reason ? { reason: values.reason } : {}),
  });
  io.stdout(values.json ? `${JSON.stringify(body, null, 2)}\n` : renderVoteAnswer(decision, body));
  return EXIT.OK;
}

interface VoteAnswer {
  outcome: string;
  approvals: number;
  quorum: number;
  votes: {
    decision: string;
    reason: string | null;
    approver: { name: string; subject: string; at: string };
  }[];
}

/** The outcome, then who voted what and when on this approval, oldest first. */
export function renderVoteAnswer(decision: string, body: VoteAnswer): string {
  let text = `${decision} recorded: ${body.outcome} (${body.approvals} of ${body.quorum})\n`;
  for (const v of body.votes) {
    text += `  - ${v.decision} by ${v.approver.subject} (key ${v.approver.name}) at ${v.approver.at}`;
    text += v.reason === null ? "\n" : `: ${v.reason}\n`;
  }
  return text;
}

/** `tenor runs reset <id> --position N --reason <text> [--idempotency-key <key>]`. */
async function resetRun(
  api: ApiClient,
  print: ReturnType<typeof answerPrinter>,
  positionals: readonly string[],
  values: { position?: string; reason?: string; "idempotency-key"?: string },
): Promise<number> {
  const id = executionId(positionals, 0);
  const position = Number(
    required(values.position, "--position <n> is required: the first journal position to set aside"),
  );
  if (!Number.isInteger(position) || position < 0) {
    throw new UsageError(`--position must be a whole number ≥ 0, got ${JSON.stringify(values.position)}`);
  }
  const reason = required(values.reason, "--reason <text> is required: it is kept with the reset");
  const key = values["idempotency-key"];
  const body = await api.post<{ duplicate: boolean; reset: ResetBody }>(
    `/v1/executions/${id}/reset`,
    { position, reason },
    key === undefined ? {} : { "Idempotency-Key": key },
  );
  const r = body.reset;
  print(
    body,
    () =>
      `${id} reset${body.duplicate ? " (already, by this Idempotency-Key)" : ""}: from position ${r.position} on ` +
      `version ${r.toVersion} (was ${r.fromVersion}); ${r.setAside} positions set aside, ` +
      `${r.signalsReturned} signals given back; it runs again now\n`,
  );
  return EXIT.OK;
}

function executionId(positionals: readonly string[], index: number): string {
  const id = required(positionals[index], "name the execution id");
  if (!UUID.test(id)) throw new UsageError(`execution id ${JSON.stringify(id)} is not a UUID`);
  return id;
}

function required(value: string | undefined, message: string): string {
  if (value === undefined || value === "") throw new UsageError(message);
  return value;
}

function parseJson(text: string, option: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${option} must be JSON: ${(error as Error).message}`);
  }
}
