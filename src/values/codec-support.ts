import { z } from "zod";
import { ValueError, ValueErrorCode } from "./errors.js";

/**
 * Glue between the throwing parsers of this folder and zod codecs. A `ValueError` raised while
 * decoding or encoding becomes a zod issue whose `params.code` is the stable value error code and
 * whose `params` also carry the error's details, so the API layer can report
 * `VALUE_TOO_MANY_DECIMALS` at path `["amount"]` rather than a generic "invalid input".
 */

type Payload = z.core.ParsePayload<unknown>;

/** Runs `work`; a `ValueError` becomes an issue on `payload` and the result is `z.NEVER`. */
export function attempt<T>(payload: Payload, input: unknown, work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (!(error instanceof ValueError)) throw error;
    payload.issues.push({
      code: "custom",
      message: error.message,
      input,
      params: { ...error.details, code: error.code },
    });
    return z.NEVER;
  }
}

/**
 * The output side of a codec: accepts instances that `isKind` recognises and that `verify`
 * accepts (`verify` throws a `ValueError`, for example `VALUE_ASSET_MISMATCH`, to refuse).
 * Anything else fails with `VALUE_WRONG_TYPE` naming `expected`.
 */
export function opaqueSchema<T>(
  isKind: (value: unknown) => value is T,
  expected: string,
  verify: (value: T) => void,
): z.ZodType<T, T> {
  return z
    .custom<T>(isKind, { message: `expected ${expected}`, params: { code: ValueErrorCode.WRONG_TYPE } })
    .check((payload) => {
      if (isKind(payload.value)) attempt(payload, payload.value, () => verify(payload.value as T));
    });
}

/** The stable value error code carried by a zod issue, when the issue came from this folder. */
export function valueErrorCodeOf(issue: z.core.$ZodIssue): ValueErrorCode | undefined {
  if (issue.code !== "custom") return undefined;
  const code: unknown = issue.params?.code;
  const known = Object.values(ValueErrorCode) as string[];
  return typeof code === "string" && known.includes(code) ? (code as ValueErrorCode) : undefined;
}

/**
 * Decodes `input` with `schema` or throws the first problem as a `ValueError` (its own code when
 * the issue came from this folder, `VALUE_WRONG_TYPE` for zod's structural issues). `field` is
 * named in the message. For code that wants an exception rather than a zod result.
 */
export function decodeOrThrow<S extends z.ZodType>(schema: S, input: unknown, field: string): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue && issue.path.length > 0 ? `${field}.${issue.path.join(".")}` : field;
  const code = (issue && valueErrorCodeOf(issue)) ?? ValueErrorCode.WRONG_TYPE;
  const details = issue?.code === "custom" ? { ...issue.params } : {};
  throw new ValueError(code, `${path}: ${issue?.message ?? "invalid value"}`, { ...details, field: path });
}
