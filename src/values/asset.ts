import { ValueError, ValueErrorCode } from "./errors.js";
import { assertScale, MAX_SCALE } from "./rounding.js";

/**
 * Asset ids are CAIP-19-like strings, for example `eip155:1/erc20:0xa0b8…` or `usdc`: letters,
 * digits and `. _ % : / -`, 1 to 128 characters. Colons are allowed; the journal shape is parsed
 * from the right so they never make it ambiguous.
 */
const ASSET_ID = /^[A-Za-z0-9._%:/-]{1,128}$/;

/**
 * What a token amount is measured in. `A` is the asset id as a literal type, which is what makes
 * adding a `TokenAmount<"usdc">` to a `TokenAmount<"dai">` a compile-time error.
 */
export interface Asset<A extends string = string> {
  /** Stable identity; part of the journal encoding, so never rename an asset in place. */
  readonly id: A;
  /** Fraction digits of one whole token: base units = whole tokens × 10^decimals. 0..36. */
  readonly decimals: number;
  /** Display symbol for humans ("USDC"); never used for identity. */
  readonly symbol: string;
}

/**
 * The part of a chain a native value or gas price is bound to. Structurally compatible with
 * viem's `Chain`, so `mainnet` from `viem/chains` can be passed directly.
 */
export interface ChainRef<C extends number = number> {
  /** EIP-155 chain id; part of the journal encoding. */
  readonly id: C;
  readonly nativeCurrency: { readonly symbol: string; readonly decimals: number };
}

/**
 * Validates and freezes an asset descriptor. Fails with `VALUE_INVALID_ASSET` for an id outside
 * the grammar, decimals outside 0..36, or an empty symbol.
 */
export function defineAsset<const A extends string>(asset: Asset<A>): Asset<A> {
  if (typeof asset.id !== "string" || !ASSET_ID.test(asset.id)) {
    throw new ValueError(
      ValueErrorCode.INVALID_ASSET,
      `asset id ${JSON.stringify(asset.id)} must be 1-128 of letters, digits and . _ % : / -`,
      { id: String(asset.id) },
    );
  }
  if (typeof asset.decimals !== "number" || !Number.isInteger(asset.decimals)) {
    throw invalidAsset(asset.id, `decimals must be an integer from 0 to ${MAX_SCALE}`);
  }
  if (asset.decimals < 0 || asset.decimals > MAX_SCALE) {
    throw invalidAsset(asset.id, `decimals must be an integer from 0 to ${MAX_SCALE}, got ${asset.decimals}`);
  }
  if (typeof asset.symbol !== "string" || asset.symbol.trim() === "") {
    throw invalidAsset(asset.id, "symbol must be a non-empty string");
  }
  return Object.freeze({ id: asset.id, decimals: asset.decimals, symbol: asset.symbol });
}

/**
 * Validates a chain descriptor: a positive safe-integer id and native decimals in 0..36. Fails
 * with `VALUE_INVALID_CHAIN`. Returns the same object so viem chains keep their other fields.
 */
export function defineChain<const T extends ChainRef>(chain: T): T {
  if (typeof chain.id !== "number" || !Number.isSafeInteger(chain.id) || chain.id <= 0) {
    throw new ValueError(
      ValueErrorCode.INVALID_CHAIN,
      `chain id must be a positive integer, got ${chain.id}`,
      {
        chainId: String(chain.id),
      },
    );
  }
  try {
    assertScale(chain.nativeCurrency?.decimals, `native decimals of chain ${chain.id}`);
  } catch (error) {
    throw new ValueError(ValueErrorCode.INVALID_CHAIN, (error as Error).message, {
      chainId: String(chain.id),
    });
  }
  return chain;
}

/** True when both descriptors name the same asset at the same scale. */
export function sameAsset(a: Asset, b: Asset): boolean {
  return a.id === b.id && a.decimals === b.decimals;
}

/**
 * Fails with `VALUE_ASSET_MISMATCH` unless both descriptors name the same asset at the same scale.
 * `operation` is named in the message ("add", "compare", "encode").
 */
export function assertSameAsset(expected: Asset, actual: Asset, operation: string): void {
  if (sameAsset(expected, actual)) return;
  throw new ValueError(
    ValueErrorCode.ASSET_MISMATCH,
    `cannot ${operation} ${actual.id} (${actual.decimals} decimals) with ${expected.id} (${expected.decimals} decimals)`,
    { operation, expected: expected.id, actual: actual.id },
  );
}

/** Fails with `VALUE_CHAIN_MISMATCH` unless both values are bound to the same chain id. */
export function assertSameChain(expected: ChainRef, actual: ChainRef, operation: string, kind: string): void {
  if (expected.id === actual.id) return;
  throw new ValueError(
    ValueErrorCode.CHAIN_MISMATCH,
    `cannot ${operation} a ${kind} of chain ${actual.id} with one of chain ${expected.id}`,
    { operation, kind, expected: expected.id, actual: actual.id },
  );
}

function invalidAsset(id: string, rule: string): ValueError {
  return new ValueError(ValueErrorCode.INVALID_ASSET, `asset ${id}: ${rule}`, { id, rule });
}
