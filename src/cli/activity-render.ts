/**
 * `tenor runs get`'s part from the activity resource (`GET /v1/executions/{id}/activity`): input
 * and output (their size and hash when the key may not read payloads), parent, children, signals,
 * votes and, for keys that may read the audit trail (operator, admin), the audit entries of the run.
 */

interface Payload {
  bytes: number;
  sha256: string;
  value?: unknown;
}
interface RunLink {
  id: string;
  workflow: string;
  status: string;
}
export interface ActivityBody {
  payloadsIncluded: boolean;
  input: Payload;
  output: Payload | null;
  parent: RunLink | null;
  children: { items: RunLink[]; more: string | null };
  signals: {
    kind: string;
    name: string;
    sentBy: { name: string; subject: string; role: string } | null;
    at: string;
    consumedPosition: number | null;
    payload: Payload;
  }[];
  votes: { approval: string; decision: string; approver: { name: string; subject: string }; at: string }[];
  auditIncluded: boolean;
  audit: { at: string; action: string; subject: string; role: string; target: string; outcome: string }[];
}

/** The JSON itself when this key may read it, else `(N bytes, sha256 abc…; payloads for operator and admin)`. */
export function payloadText(p: Payload): string {
  if ("value" in p) return JSON.stringify(p.value);
  return `(${p.bytes} bytes, sha256 ${p.sha256.slice(0, 12)}…; payloads for operator and admin)`;
}

const link = (r: RunLink) => `${r.id} ${r.workflow} ${r.status}`;

export function renderActivity(a: ActivityBody): string {
  let text = `input: ${payloadText(a.input)}\n`;
  if (a.output) text += `output: ${payloadText(a.output)}\n`;
  if (a.parent) text += `parent run: ${link(a.parent)}\n`;
  if (a.children.items.length > 0) {
    text += "children:\n";
    for (const c of a.children.items) text += `  - ${link(c)}\n`;
    if (a.children.more) text += `  more: GET ${a.children.more}\n`;
  }
  if (a.signals.length > 0) {
    text += "signals:\n";
    for (const s of a.signals) {
      const who = s.sentBy
        ? `${s.sentBy.subject} (key ${s.sentBy.name}, ${s.sentBy.role})`
        : s.kind === "approval"
          ? "its votes"
          : "sender not recorded";
      const taken = s.consumedPosition === null ? "not taken yet" : `taken at position ${s.consumedPosition}`;
      text += `  - ${s.kind === "approval" ? `approval ${s.name}` : s.name} at ${s.at} by ${who}, ${taken}: ${payloadText(s.payload)}\n`;
    }
  }
  if (a.votes.length > 0) {
    text += "votes:\n";
    for (const v of a.votes)
      text += `  - ${v.approval}: ${v.decision} by ${v.approver.subject} (key ${v.approver.name}) at ${v.at}\n`;
  }
  return text + renderAudit(a);
}

/** Each entry: when, action, who, target and outcome (`accepted` or the refusal's code). */
function renderAudit(a: ActivityBody): string {
  if (!a.auditIncluded) return "audit: (for operator and admin)\n";
  if (a.audit.length === 0) return "audit: none\n";
  let text = "audit:\n";
  for (const e of a.audit)
    text += `  - ${e.at} ${e.action} by ${e.subject} (${e.role}) on ${e.target}: ${e.outcome}\n`;
  return text;
}
