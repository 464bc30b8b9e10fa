import { formatGwei } from "viem";
import { BUMP_STEP, FeeBumpRecord } from "../../chain/lifecycle/fee-bump-record.js";
import type { JournalView } from "../../engine/execution-client.js";
import { type Html, html } from "./html.js";

/** The workflow whose bump steps this section reads (docs/chains.md, "The lifecycle"). */
const LIFECYCLE_WORKFLOW = "chain.transaction";

const RULES = {
  bumpPercent: "fees.bumpPercent",
  nodeSuggestion: "node's suggestion",
  priorityFee: "new priority fee",
} as const;

/**
 * The execution page's "Fee bumps" section (docs/console.md): for a `chain.transaction` run, each
 * stuck attempt the lifecycle replaced (or could not), from the reasons its `bump:<round>` steps
 * journal (version 4 on): what fired, the old and new fees in gwei and the rule behind each. Bump
 * steps of earlier versions journaled no reason and are named as such. Shown to the roles that
 * read journal payloads, as the step results it is drawn from are.
 */
export function feeBumpsSection(workflow: string, journal: readonly JournalView[]): Html | null {
  if (workflow !== LIFECYCLE_WORKFLOW) return null;
  const bumps = journal.filter((e) => BUMP_STEP.test(e.name) && e.state === "ok");
  if (bumps.length === 0) return null;
  return html`<section aria-label="Fee bumps"><h2>Fee bumps</h2><table>
<thead><tr><th>Step</th><th>Why</th><th>maxFeePerGas</th><th>maxPriorityFeePerGas</th><th>Outcome</th></tr></thead>
<tbody>${bumps.map(bumpRow)}</tbody></table></section>`;
}

function bumpRow(entry: JournalView): Html {
  const parsed = FeeBumpRecord.safeParse(entry.result);
  if (!parsed.success)
    return html`<tr><td>${entry.name}</td><td colspan="4">No reason journaled (a version before 4).</td></tr>`;
  const { why, ...decision } = parsed.data;
  const stuck = html`attempt ${why.attempt} (<code>${why.hash}</code>) had no receipt ${why.stuckAfterMs} ms after its broadcast (<code>${why.trigger}</code>)`;
  if (!decision.replace) {
    return html`<tr data-bump="${entry.name}"><td>${entry.name}</td><td>${stuck}</td>
<td>${gwei(why.previous.maxFeePerGas)}</td><td>${gwei(why.previous.maxPriorityFeePerGas)}</td>
<td>Not replaced: ${decision.reason}</td></tr>`;
  }
  const field = (name: "maxFeePerGas" | "maxPriorityFeePerGas") => {
    const rule = why.raisedBy?.[name];
    return html`${gwei(why.previous[name])} → ${gwei(decision[name])}${rule ? html` <small>(${RULES[rule]}${rule === "bumpPercent" ? ` ${Math.max(why.bumpPercent, 12.5)} %` : ""})</small>` : null}`;
  };
  return html`<tr data-bump="${entry.name}"><td>${entry.name}</td><td>${stuck}</td>
<td>${field("maxFeePerGas")}</td><td>${field("maxPriorityFeePerGas")}</td><td>Replaced by attempt ${why.attempt + 1}</td></tr>`;
}

function gwei(wei: string): string {
  return `${formatGwei(BigInt(wei))} gwei`;
}
