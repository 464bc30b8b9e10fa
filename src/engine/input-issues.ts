import type { z } from "zod";

/** One invalid field of a validated value: its dotted path ("" for the value itself) and the rule it breaks. */
export interface InputIssue {
  path: string;
  message: string;
}

/** The rule an unknown field breaks, as every API refusal states it. */
export const UNKNOWN_FIELD_RULE = "is not a known field: unknown fields are refused, never ignored";

/**
 * The issues of a failed parse, one per field. An object that refuses unknown keys reports them
 * all in one issue at the object's own path; here each unknown key becomes an issue at its own
 * path, so a refusal names the field (`orgId`) rather than its parent.
 */
export function inputIssues(error: z.ZodError): InputIssue[] {
  return error.issues.flatMap((issue) => {
    const base = issue.path.map(String);
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({ path: [...base, key].join("."), message: UNKNOWN_FIELD_RULE }));
    }
    return [{ path: base.join("."), message: issue.message }];
  });
}
