/**
 * Every error code Tenor raises, registered by the layer that owns it. This bottom layer cannot
 * import the layers above it, so each code module adds its union to this interface itself:
 *
 * ```ts
 * declare module "../errors/error-code-registry.js" {
 *   interface ErrorCodeRegistry { engine: EngineErrorCode }
 * }
 * ```
 *
 * `TenorError` takes only a registered code, so a code without a home in some layer's `*_ERRORS`
 * does not compile (test/architecture/error-codes.test.ts keeps the literals in those homes).
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging, one member per layer
export interface ErrorCodeRegistry {}

/** One code of any layer: the union of every registered layer's codes. */
export type TenorErrorCode = ErrorCodeRegistry[keyof ErrorCodeRegistry];
