import type { z } from "zod";
import { type Asset, assertSameAsset, assertSameChain, type ChainRef } from "./asset.js";
import { opaqueSchema } from "./codec-support.js";
import { Decimal, decimalCoefficient } from "./decimal.js";
import { GasPrice } from "./gas-price.js";
import { NativeValue } from "./native-value.js";
import { assertInRange } from "./opaque.js";
import { TokenAmount, tokenUnits } from "./token-amount.js";

/**
 * Schemas for the decoded side of every codec: they accept only an instance of the kind, of the
 * expected asset or chain, with an allowed sign. Encoders run them first, so handing a codec a
 * value of another asset fails with `VALUE_ASSET_MISMATCH` before anything is written.
 */

/** A `TokenAmount<A>` of `asset`; negative only with `allowNegative`. */
export function tokenAmountSchema<A extends string>(
  asset: Asset<A>,
  options: { allowNegative?: boolean } = {},
): z.ZodType<TokenAmount<A>, TokenAmount<A>> {
  const isKind = (value: unknown): value is TokenAmount<A> => value instanceof TokenAmount;
  return opaqueSchema(isKind, `a ${asset.symbol} TokenAmount`, (amount) => {
    assertSameAsset(asset, amount.asset, "encode");
    assertInRange(tokenUnits(amount), `${asset.symbol} amount`, options.allowNegative ?? false);
  });
}

/** A `NativeValue<C>` of `chain`. */
export function nativeValueSchema<C extends number>(
  chain: ChainRef<C>,
): z.ZodType<NativeValue<C>, NativeValue<C>> {
  const isKind = (value: unknown): value is NativeValue<C> => value instanceof NativeValue;
  return opaqueSchema(isKind, `a NativeValue of chain ${chain.id}`, (value) =>
    assertSameChain(chain, value.chain, "encode", "native value"),
  );
}

/** A `GasPrice<C>` of `chain`. */
export function gasPriceSchema<C extends number>(chain: ChainRef<C>): z.ZodType<GasPrice<C>, GasPrice<C>> {
  const isKind = (value: unknown): value is GasPrice<C> => value instanceof GasPrice;
  return opaqueSchema(isKind, `a GasPrice of chain ${chain.id}`, (price) =>
    assertSameChain(chain, price.chain, "encode", "gas price"),
  );
}

/** A `Decimal`; negative only with `allowNegative`. */
export function decimalSchema(options: { allowNegative?: boolean } = {}): z.ZodType<Decimal, Decimal> {
  const isKind = (value: unknown): value is Decimal => value instanceof Decimal;
  return opaqueSchema(isKind, "a Decimal", (value) =>
    assertInRange(decimalCoefficient(value), "decimal", options.allowNegative ?? false),
  );
}
