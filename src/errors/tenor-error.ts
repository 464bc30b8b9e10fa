import type { TenorErrorCode } from "./error-code-registry.js";

/** Codes of the errors layer itself. */
export const TENOR_ERRORS = {
  /** Anything thrown that is not a TenorError, once converted (`toTenorError`). */
  INTERNAL: "INTERNAL",
} as const;

declare module "./error-code-registry.js" {
  interface ErrorCodeRegistry {
    errors: (typeof TENOR_ERRORS)[keyof typeof TENOR_ERRORS];
  }
}

/**
 * Base class of every error Tenor raises on purpose. Each carries a stable string `code`
 * (never a number, never reworded once shipped) and its behaviour: `retryable` says whether the
 * same call may succeed later without a change of input.
 *
 * The code is one a layer registered (src/errors/error-code-registry.ts). `C` is widened only by
 * errors whose codes are not Tenor's own: a workflow's business codes, an API answer read back.
 */
export class TenorError<C extends string = TenorErrorCode> extends Error {
  readonly code: C;
  readonly retryable: boolean;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(
    code: NoInfer<C>,
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
  toJSON(): { code: C; message: string; retryable: boolean; details: Record<string, unknown> } {
    return {
      code: this.code,
      message: this.message,
      retryable: this.retryable,
      details: { ...this.details },
    };
  }
}

/** Converts anything thrown into a TenorError so no boundary branches on `unknown`. */
export function toTenorError(
  thrown: unknown,
  fallbackCode: TenorErrorCode = TENOR_ERRORS.INTERNAL,
): TenorError<string> {
  if (thrown instanceof TenorError) return thrown;
  if (thrown instanceof Error) {
    return new TenorError(fallbackCode, thrown.message, { retryable: true, cause: thrown });
  }
  return new TenorError(fallbackCode, String(thrown), { retryable: true });
}
