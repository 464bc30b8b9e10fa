import { UsageError } from "./cli-io.js";

/**
 * The execution filter flags `tenor runs list` and `tenor ops create` share: one spelling, one
 * parser, so a run list and a bulk operation select runs alike (docs/console.md, "Filters").
 * The API validates the values and names what is wrong; the parser only shapes them.
 */
export const EXECUTION_FILTER_OPTIONS = {
  workflow: { type: "string" },
  status: { type: "string" },
  code: { type: "string" },
  key: { type: "string" },
  "created-after": { type: "string" },
  "created-before": { type: "string" },
} as const;

/** The filter in the API's field names, as `OperationFilter` and `GET /v1/executions` name them. */
export interface ExecutionFilter {
  workflow?: string;
  status?: string[];
  code?: string;
  key?: string;
  createdAfter?: string;
  createdBefore?: string;
}

type FilterFlags = { [flag in keyof typeof EXECUTION_FILTER_OPTIONS]?: string | boolean | undefined };

/** The filter the flags name; `--status a,b` becomes a list, an empty flag is a usage error. */
export function parseExecutionFilterFlags(values: FilterFlags): ExecutionFilter {
  const text = (flag: keyof typeof EXECUTION_FILTER_OPTIONS): string | undefined => {
    const value = values[flag];
    if (typeof value !== "string") return undefined;
    if (value.trim() === "") throw new UsageError(`--${flag} needs a value, got an empty one`);
    return value;
  };
  const filter: ExecutionFilter = {};
  const set = <K extends keyof ExecutionFilter>(field: K, value: ExecutionFilter[K] | undefined) => {
    if (value !== undefined) filter[field] = value;
  };
  set("workflow", text("workflow"));
  set(
    "status",
    text("status")
      ?.split(",")
      .map((s) => s.trim()),
  );
  set("code", text("code"));
  set("key", text("key"));
  set("createdAfter", text("created-after"));
  set("createdBefore", text("created-before"));
  return filter;
}

/** The filter as `GET /v1/executions` reads it: `status` comma-separated. */
export function executionFilterQuery(filter: ExecutionFilter): URLSearchParams {
  const query = new URLSearchParams();
  for (const [field, value] of Object.entries(filter))
    query.set(field, Array.isArray(value) ? value.join(",") : String(value));
  return query;
}
