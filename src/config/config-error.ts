import { REDACTED, redactText, redactValue, SECRET_FIELD } from "../errors/redact.js";
import { TenorError } from "../errors/tenor-error.js";
import { CONFIG_ERRORS } from "./config-error-codes.js";

/** One violated rule: which key, what value it had, and the rule it broke. */
export interface ConfigIssue {
  key: string;
  value: unknown;
  rule: string;
}

/** Raised once with every violation found, so an operator fixes them all in one pass. */
export class ConfigError extends TenorError {
  readonly issues: readonly ConfigIssue[];

  constructor(raw: ConfigIssue[]) {
    // A rejected value may be a connection string: its password never reaches the message or details.
    const issues = raw.map(redactIssue);
    super(CONFIG_ERRORS.CONFIG_INVALID, ConfigError.describe(issues), { details: { issues } });
    this.issues = Object.freeze([...issues]);
  }

  static describe(issues: ConfigIssue[]): string {
    const lines = issues.map((i) => `  - ${i.key} = ${formatValue(i.value)}: ${i.rule}`);
    return `Invalid configuration (${issues.length} problem${issues.length === 1 ? "" : "s"}):\n${lines.join("\n")}`;
  }
}

function formatValue(value: unknown): string {
  if (value === undefined) return "(missing)";
  if (typeof value === "string") return JSON.stringify(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function redactIssue(issue: ConfigIssue): ConfigIssue {
  return {
    key: issue.key,
    value: SECRET_FIELD.test(issue.key) && issue.value !== undefined ? REDACTED : redactValue(issue.value),
    rule: redactText(issue.rule),
  };
}
