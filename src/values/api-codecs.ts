import { z } from "zod";
import { type Asset, type ChainRef, defineAsset, defineChain } from "./asset.js";
import { attempt } from "./codec-support.js";
import { decimalCoefficient, decimalFromCoefficient } from "./decimal.js";
import { formatScaled, parseDecimalText, parseIntegerText } from "./decimal-text.js";
import { type GasPriceUnit, GWEI_DECIMALS, gasPriceFromWei, gasPriceWeiPerGas } from "./gas-price.js";
import { nativeValueFromWei, nativeWei } from "./native-value.js";
import { assertScale, rescaleUnits } from "./rounding.js";
import { type SignOptions, tokenAmountFromUnits, tokenUnits } from "./token-amount.js";
import { decimalSchema, gasPriceSchema, nativeValueSchema, tokenAmountSchema } from "./value-schemas.js";

/**
 * API codecs: zod codecs between the documented strings of the HTTP API and the opaque values.
 * `schema.parse(text)` decodes; `z.encode(schema, value)` writes the shortest canonical string.
 * Decimal strings follow `-?(0|[1-9][0-9]*)(\.[0-9]+)?` and integer strings `-?(0|[1-9][0-9]*)`;
 * every refusal is a zod issue whose `params.code` is a `VALUE_*` code (see `decimal-text.ts`).
 * Encoding a value of another asset or chain, or a negative one where the field is >= 0, fails.
 */

/**
 * Token amount as a decimal string of whole tokens ("1250.5"), at most `asset.decimals` fraction
 * digits. Negative values only with `allowNegative` (default false: `VALUE_NEGATIVE`).
 */
export function tokenAmountApi<A extends string>(asset: Asset<A>, options: SignOptions = {}) {
  const checked = defineAsset(asset);
  const allowNegative = options.allowNegative ?? false;
  const rules = { what: `${checked.symbol} amount`, allowNegative };
  const input = z.string().meta({
    description: `${checked.symbol} amount in whole tokens as a decimal string, at most ${checked.decimals} decimals${allowNegative ? "; may be negative" : ""}`,
    examples: ["1250.5"],
  });
  return z.codec(input, tokenAmountSchema(checked, { allowNegative }), {
    decode: (text, payload) =>
      attempt(payload, text, () =>
        tokenAmountFromUnits(checked, parseDecimalText(text, checked.decimals, rules), options),
      ),
    encode: (amount) => formatScaled(tokenUnits(amount), checked.decimals),
  });
}

/** Token amount as an integer string of base units ("1250500000" for 1250.5 USDC). */
export function tokenBaseUnitsApi<A extends string>(asset: Asset<A>, options: SignOptions = {}) {
  const checked = defineAsset(asset);
  const allowNegative = options.allowNegative ?? false;
  const rules = { what: `${checked.symbol} base units`, allowNegative };
  const input = z.string().meta({
    description: `${checked.symbol} amount in base units (10^-${checked.decimals} ${checked.symbol}) as an integer string`,
    examples: ["1250500000"],
  });
  return z.codec(input, tokenAmountSchema(checked, { allowNegative }), {
    decode: (text, payload) =>
      attempt(payload, text, () => tokenAmountFromUnits(checked, parseIntegerText(text, rules), options)),
    encode: (amount) => tokenUnits(amount).toString(),
  });
}

/** Native value as a decimal string of whole coins ("0.05" ETH); never negative. */
export function nativeValueApi<C extends number>(chain: ChainRef<C>) {
  const checked = defineChain(chain);
  const { symbol, decimals } = checked.nativeCurrency;
  const rules = { what: `${symbol} value`, allowNegative: false };
  const input = z.string().meta({
    description: `${symbol} value on chain ${checked.id} as a decimal string, at most ${decimals} decimals`,
    examples: ["0.05"],
  });
  return z.codec(input, nativeValueSchema(checked), {
    decode: (text, payload) =>
      attempt(payload, text, () => nativeValueFromWei(checked, parseDecimalText(text, decimals, rules))),
    encode: (value) => formatScaled(nativeWei(value), decimals),
  });
}

/** Native value as an integer string of wei ("50000000000000000"); never negative. */
export function nativeWeiApi<C extends number>(chain: ChainRef<C>) {
  const checked = defineChain(chain);
  const rules = { what: `${checked.nativeCurrency.symbol} wei`, allowNegative: false };
  const input = z.string().meta({
    description: `${checked.nativeCurrency.symbol} value on chain ${checked.id} in wei as an integer string`,
    examples: ["50000000000000000"],
  });
  return z.codec(input, nativeValueSchema(checked), {
    decode: (text, payload) =>
      attempt(payload, text, () => nativeValueFromWei(checked, parseIntegerText(text, rules))),
    encode: (value) => nativeWei(value).toString(),
  });
}

/**
 * Gas price written in `unit` (no default): "wei" is an integer string, "gwei" a decimal string
 * with at most 9 decimals ("1.5"). Never negative.
 */
export function gasPriceApi<C extends number>(chain: ChainRef<C>, unit: GasPriceUnit) {
  const checked = defineChain(chain);
  const rules = { what: `gas price (${unit})`, allowNegative: false };
  const input = z.string().meta({
    description: `gas price on chain ${checked.id} in ${unit} per gas as ${unit === "gwei" ? "a decimal string, at most 9 decimals" : "an integer string"}`,
    examples: [unit === "gwei" ? "1.5" : "1500000000"],
  });
  const parse = (text: string) =>
    unit === "gwei" ? parseDecimalText(text, GWEI_DECIMALS, rules) : parseIntegerText(text, rules);
  return z.codec(input, gasPriceSchema(checked), {
    decode: (text, payload) => attempt(payload, text, () => gasPriceFromWei(checked, parse(text))),
    encode: (price) =>
      unit === "gwei"
        ? formatScaled(gasPriceWeiPerGas(price), GWEI_DECIMALS)
        : gasPriceWeiPerGas(price).toString(),
  });
}

/**
 * Price or rate as a decimal string with at most `scale` decimals, decoded at exactly `scale`.
 * Encoding a `Decimal` of another scale re-expresses it exactly or fails with
 * `VALUE_PRECISION_LOSS`: rescale it first with a named rounding mode.
 */
export function decimalApi(options: { scale: number; allowNegative?: boolean }) {
  const { scale } = options;
  assertScale(scale, "decimal scale");
  const rules = { what: "decimal", allowNegative: options.allowNegative ?? false };
  const input = z.string().meta({
    description: `decimal string with at most ${scale} decimals${rules.allowNegative ? "; may be negative" : ""}`,
    examples: ["1.0825"],
  });
  return z.codec(input, decimalSchema({ allowNegative: rules.allowNegative }), {
    decode: (text, payload) =>
      attempt(payload, text, () => decimalFromCoefficient(parseDecimalText(text, scale, rules), scale)),
    encode: (value, payload) =>
      attempt(payload, value, () => {
        const context = `encode ${value.describe()} with at most ${scale} decimals`;
        return formatScaled(
          rescaleUnits(decimalCoefficient(value), value.scale, scale, "exact", context),
          scale,
        );
      }),
  });
}
