import { BusinessError } from "../../src/engine/errors.js";
import { parseDecimalText } from "../../src/values/decimal-text.js";
import { ASSET_ERRORS } from "./errors.js";

/**
 * `initialPrice` as the feed's integer answer at the template's price decimals ("100.25" at 8 is
 * 10025000000n). More decimals than the feed has is refused, never rounded.
 */
export function scaledPrice(text: string, decimals: number): bigint {
  try {
    return parseDecimalText(text, decimals, { what: "initialPrice", allowNegative: false });
  } catch (error) {
    throw new BusinessError(ASSET_ERRORS.PRICE_INVALID, (error as Error).message, {
      field: "initialPrice",
      value: text,
      rule: `a positive decimal with at most ${decimals} decimals (the template's priceDecimals)`,
    });
  }
}
