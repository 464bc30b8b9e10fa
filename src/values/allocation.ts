import type { Asset } from "./asset.js";
import { ValueError, ValueErrorCode } from "./errors.js";
import { divideRounded, type RoundingMode } from "./rounding.js";
import { type TokenAmount, tokenAmountFromUnits, tokenUnits } from "./token-amount.js";

/**
 * Rounding modes an allocation accepts: both round every share toward zero, so the shares never
 * add up to more than the total and the residue is never negative.
 */
export const ALLOCATION_ROUNDING_MODES = ["floor", "down"] as const satisfies readonly RoundingMode[];

/** One of {@link ALLOCATION_ROUNDING_MODES}. */
export type AllocationRounding = (typeof ALLOCATION_ROUNDING_MODES)[number];

/** The outcome of splitting a total: one share per weight, and what rounding left over. */
export interface Allocation<P extends string> {
  /** In the order of the weights; share i = total × weight i / Σ weights, rounded with the mode. */
  readonly shares: readonly TokenAmount<P>[];
  /** total − Σ shares: never negative, and below one base unit per share. */
  readonly residue: TokenAmount<P>;
}

/**
 * Splits `total` pro rata to `weights` (amounts of another asset, e.g. holdings of the asset a
 * dividend is paid on), each share rounded to a base unit of the total's asset with `rounding`.
 * Nothing is lost: Σ shares + residue = total, exactly.
 *
 * Fails with `VALUE_INVALID_ROUNDING_MODE` for a mode that could round a share up (the shares
 * could then exceed the total), `VALUE_NEGATIVE` for a negative weight or total,
 * `VALUE_ASSET_MISMATCH` for weights of different assets and `VALUE_DIVISION_BY_ZERO` when the
 * weights sum to zero.
 */
export function allocateProRata<P extends string, A extends string>(
  total: TokenAmount<P>,
  weights: readonly TokenAmount<A>[],
  rounding: AllocationRounding,
): Allocation<P> {
  if (!(ALLOCATION_ROUNDING_MODES as readonly string[]).includes(rounding)) {
    throw new ValueError(
      ValueErrorCode.INVALID_ROUNDING_MODE,
      `allocation rounding ${JSON.stringify(String(rounding))} must be one of ${ALLOCATION_ROUNDING_MODES.join(", ")}: any other mode can round a share up and pay out more than the total`,
      { field: "rounding", mode: String(rounding), allowed: [...ALLOCATION_ROUNDING_MODES] },
    );
  }
  const totalUnits = tokenUnits(total);
  if (totalUnits < 0n) throw negative("total", total.describe());
  const weightAsset: Asset | undefined = weights[0]?.asset;
  let weightSum = 0n;
  const weightUnits = weights.map((weight, index) => {
    const units = tokenUnits(weight);
    if (units < 0n) throw negative(`weights[${index}]`, weight.describe());
    if (
      weightAsset &&
      (weight.asset.id !== weightAsset.id || weight.asset.decimals !== weightAsset.decimals)
    ) {
      throw new ValueError(
        ValueErrorCode.ASSET_MISMATCH,
        `weights[${index}] is ${weight.asset.id}, weights[0] is ${weightAsset.id}: weights must share one asset`,
        { operation: "allocate", expected: weightAsset.id, actual: weight.asset.id },
      );
    }
    weightSum += units;
    return units;
  });
  if (weightSum === 0n) {
    throw new ValueError(ValueErrorCode.DIVISION_BY_ZERO, "allocate: the weights sum to zero", {
      operation: "allocate",
      weights: weights.length,
    });
  }
  const context = `allocate ${total.describe()} over ${weights.length} weights`;
  let allocated = 0n;
  const shares = weightUnits.map((units) => {
    const share = divideRounded(totalUnits * units, weightSum, rounding, context);
    allocated += share;
    return tokenAmountFromUnits(total.asset, share);
  });
  return { shares, residue: tokenAmountFromUnits(total.asset, totalUnits - allocated) };
}

function negative(field: string, value: string): ValueError {
  return new ValueError(ValueErrorCode.NEGATIVE, `allocate: ${field} ${value} must not be negative`, {
    field,
    value,
  });
}
