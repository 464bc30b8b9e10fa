/**
 * Compile-time checks of the HTTP status map, run by `npm run typecheck` (tsconfig includes
 * test/; vitest collects only *.test.ts, so this file is never run, only type-checked). Each
 * `@ts-expect-error` fails the typecheck if the line it guards ever compiles.
 */
import { type ApiVisibleCode, STATUS_BY_CODE } from "../../src/api/problem.js";
import { ENGINE_ERRORS } from "../../src/engine/error-codes.js";

// The map gives every API-visible code a status.
STATUS_BY_CODE satisfies Record<ApiVisibleCode, number>;

// A code added to a layer's union without a status does not compile.
// @ts-expect-error -- "NEW_CODE" has no entry in STATUS_BY_CODE
STATUS_BY_CODE satisfies Record<ApiVisibleCode | "NEW_CODE", number>;

// A map missing one code does not satisfy the exhaustive type.
const { [ENGINE_ERRORS.INPUT_INVALID]: _inputInvalid, ...missingInputInvalid } = STATUS_BY_CODE;
// @ts-expect-error -- INPUT_INVALID is missing
missingInputInvalid satisfies Record<ApiVisibleCode, number>;

// A status for a string that is no API-visible code is refused too.
// @ts-expect-error -- NOT_A_CODE is not an API-visible code
({ ...STATUS_BY_CODE, NOT_A_CODE: 500 }) satisfies Record<ApiVisibleCode, number>;
