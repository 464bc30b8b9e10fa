import { type Decimal, decimalCoefficient } from "./decimal.js";
import { type GasPrice, type GasPriceUnit, GWEI_DECIMALS, gasPriceWeiPerGas } from "./gas-price.js";
import { type NativeValue, nativeWei } from "./native-value.js";
import { assertScale, type RoundingMode, rescaleUnits } from "./rounding.js";
import { type TokenAmount, tokenUnits } from "./token-amount.js";

/**
 * Formatting for people: screens, e-mails, logs read by operators. The output is never a boundary
 * encoding and must never be parsed back; the API, journal and chain codecs do that job.
 */
export interface HumanFormatOptions {
  /** Group the whole part in threes. Default `true`. */
  readonly grouping?: boolean;
  /** Placed between groups. Default `","`. */
  readonly groupSeparator?: string;
  /** Placed between the whole part and the fraction. Default `"."`. */
  readonly decimalSeparator?: string;
  /** Append the asset's or currency's symbol after a space. Default `true`. */
  readonly symbol?: boolean;
  /** Pad the fraction with zeros to at least this many digits ("1,250.50"). Default 0. */
  readonly minFractionDigits?: number;
  /**
   * Show at most `digits` fraction digits, rounding with the named mode. Default: every
   * significant digit (no rounding at all).
   */
  readonly maxFractionDigits?: { readonly digits: number; readonly rounding: RoundingMode };
}

function group(whole: string, separator: string): string {
  return whole.replace(/\B(?=(\d{3})+(?!\d))/g, separator);
}

/** Formats `units` at `scale` for humans; the shared core of the functions below. */
export function formatScaledForHumans(
  units: bigint,
  scale: number,
  symbol: string,
  options: HumanFormatOptions,
): string {
  let shown = units;
  let shownScale = scale;
  if (options.maxFractionDigits !== undefined && options.maxFractionDigits.digits < scale) {
    const { digits, rounding } = options.maxFractionDigits;
    shown = rescaleUnits(units, scale, digits, rounding, `format ${symbol} with ${digits} decimals`);
    shownScale = digits;
  }
  const minDigits = options.minFractionDigits ?? 0;
  assertScale(minDigits, "minFractionDigits");
  const negative = shown < 0n;
  const digits = (negative ? -shown : shown).toString().padStart(shownScale + 1, "0");
  const whole = digits.slice(0, digits.length - shownScale);
  const significant = digits.slice(digits.length - shownScale).replace(/0+$/, "");
  const fraction = significant.padEnd(Math.min(Math.max(minDigits, significant.length), shownScale), "0");
  const grouped = options.grouping === false ? whole : group(whole, options.groupSeparator ?? ",");
  const number = `${negative ? "-" : ""}${grouped}${fraction === "" ? "" : `${options.decimalSeparator ?? "."}${fraction}`}`;
  return options.symbol === false || symbol === "" ? number : `${number} ${symbol}`;
}

/** "1,250.5 USDC". */
export function formatTokenAmount(amount: TokenAmount, options: HumanFormatOptions = {}): string {
  return formatScaledForHumans(tokenUnits(amount), amount.asset.decimals, amount.asset.symbol, options);
}

/** "0.05 ETH". */
export function formatNativeValue(value: NativeValue, options: HumanFormatOptions = {}): string {
  const { symbol, decimals } = value.chain.nativeCurrency;
  return formatScaledForHumans(nativeWei(value), decimals, symbol, options);
}

/** "1.5 gwei" or "1,500,000,000 wei"; `unit` is required, there is no default unit. */
export function formatGasPrice(
  price: GasPrice,
  unit: GasPriceUnit,
  options: HumanFormatOptions = {},
): string {
  const scale = unit === "gwei" ? GWEI_DECIMALS : 0;
  return formatScaledForHumans(gasPriceWeiPerGas(price), scale, unit, options);
}

/** "1.0825" (a decimal has no symbol; `symbol` is ignored). */
export function formatDecimal(value: Decimal, options: HumanFormatOptions = {}): string {
  return formatScaledForHumans(decimalCoefficient(value), value.scale, "", options);
}

/** An elapsed time for people: `850 ms`, `12.3 s`, `4 min 5 s` (the CLI's and the console's timelines). */
export function formatMilliseconds(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}
