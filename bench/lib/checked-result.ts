import { isDeepStrictEqual } from "node:util";

/**
 * Checks what a client read back against what the workload asked for. A sample ends only when the
 * client holds the right result: a failed run or a wrong value is an error of the workload, never
 * a completion, so the system's figures are replaced by the error.
 * @throws Error naming `what`, the value read and the value expected.
 */
export function expectResult(what: string, actual: unknown, expected: unknown): void {
  if (!isDeepStrictEqual(actual, expected))
    throw new Error(`${what} ended with ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
}
