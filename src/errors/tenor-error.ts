/**
 * Base class of every error Tenor raises on purpose. Each carries a stable string `code`
 * (never a number, never reworded once shipped) and its behaviour: `retryable` says whether the
 * same call may succeed later without a change of input.
 */
export class TenorError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(
    code: string,
    message: string,
    options: { retryable?: boolean; details?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.details = Object.freeze({ ...(options.details ?? {}) });
  }

  /** A JSON-safe view for logs, problem+json bodies and journal records. */
  toJSON(): { code: string; message: string; retryable: boolean; details: Record<string, unknown> } {
    return {
      code: this.code,
      message: this.message,
      retryable: this.retryable,
      details: { ...this.details },
    };
  }
}

/** Converts anything thrown into a TenorError so no boundary branches on `unknown`. */
export function toTenorError(thrown: unknown, fallbackCode = "INTERNAL"): TenorError {
  if (thrown instanceof TenorError) return thrown;
  if (thrown instanceof Error) {
    return new TenorError(fallbackCode, thrown.message, { retryable: true, cause: thrown });
  }
  return new TenorError(fallbackCode, String(thrown), { retryable: true });
}
