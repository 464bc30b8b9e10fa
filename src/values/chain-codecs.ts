import { decodeAbiParameters, encodeAbiParameters, type Hex, hexToBigInt, numberToHex } from "viem";
import { z } from "zod";
import { type Asset, type ChainRef, defineAsset, defineChain } from "./asset.js";
import { attempt } from "./codec-support.js";
import { ValueError, ValueErrorCode } from "./errors.js";
import { gasPriceFromWei, gasPriceWeiPerGas } from "./gas-price.js";
import { nativeValueFromWei, nativeWei } from "./native-value.js";
import { tokenAmountFromUnits, tokenUnits } from "./token-amount.js";
import { gasPriceSchema, nativeValueSchema, tokenAmountSchema } from "./value-schemas.js";

/**
 * Chain codecs: the only place hex quantities and ABI words are read or written. Decoders turn
 * what viem and JSON-RPC hand over into values bound to one asset or chain; encoders produce the
 * hex, ABI or bigint fields viem expects. All chain values are uint256: a negative value or one
 * above 2^256-1 fails (`VALUE_NEGATIVE`, `VALUE_OUT_OF_RANGE`).
 */

const UINT256 = [{ type: "uint256" }] as const;

const hexInput = (what: string) =>
  z.custom<Hex>((value) => typeof value === "string", {
    message: `${what} must be a hex string`,
    params: { code: ValueErrorCode.WRONG_TYPE },
  });

const uint256Input = (what: string) =>
  z.custom<bigint>((value) => typeof value === "bigint", {
    message: `${what} must be a bigint (as viem decodes uint256)`,
    params: { code: ValueErrorCode.WRONG_TYPE },
  });

/**
 * Reads a JSON-RPC hex quantity ("0x1bc16d674ec80000"). Leading zeros, which some providers emit,
 * are accepted; "0x" without digits and non-hex characters fail with `VALUE_INVALID_HEX`.
 */
function readQuantity(text: Hex, what: string): bigint {
  if (!/^0x[0-9a-fA-F]+$/.test(text)) {
    throw new ValueError(
      ValueErrorCode.INVALID_HEX,
      `${what} "${text.slice(0, 80)}" is not a hex quantity (0x + hex digits)`,
      {
        what,
        value: text.slice(0, 80),
      },
    );
  }
  // Range (uint256) is enforced by the value factories the decoders hand this to.
  return hexToBigInt(text);
}

/** Reads one 32-byte ABI word as uint256; any other length fails with `VALUE_INVALID_HEX`. */
function readAbiWord(text: Hex, what: string): bigint {
  if (!/^0x[0-9a-fA-F]{64}$/.test(text)) {
    throw new ValueError(
      ValueErrorCode.INVALID_HEX,
      `${what} "${text.slice(0, 80)}" is not one 32-byte ABI word`,
      {
        what,
        value: text.slice(0, 80),
      },
    );
  }
  const [value] = decodeAbiParameters(UINT256, text);
  return value;
}

/** Native value from / to a JSON-RPC hex quantity (`eth_getBalance`, a transaction's `value`). */
export function nativeValueRpc<C extends number>(chain: ChainRef<C>) {
  const checked = defineChain(chain);
  const what = `chain ${checked.id} native value`;
  return z.codec(hexInput(what), nativeValueSchema(checked), {
    decode: (hex, payload) =>
      attempt(payload, hex, () => nativeValueFromWei(checked, readQuantity(hex, what))),
    encode: (value) => numberToHex(nativeWei(value)),
  });
}

/** Native value from / to the bigint viem uses for uint256 (`getBalance`, `sendTransaction({ value })`). */
export function nativeValueUint256<C extends number>(chain: ChainRef<C>) {
  const checked = defineChain(chain);
  const what = `chain ${checked.id} native value`;
  return z.codec(uint256Input(what), nativeValueSchema(checked), {
    decode: (wei, payload) => attempt(payload, wei, () => nativeValueFromWei(checked, wei)),
    encode: (value) => nativeWei(value),
  });
}

/** Gas price from / to a JSON-RPC hex quantity (`eth_gasPrice`, `baseFeePerGas`). */
export function gasPriceRpc<C extends number>(chain: ChainRef<C>) {
  const checked = defineChain(chain);
  const what = `chain ${checked.id} gas price`;
  return z.codec(hexInput(what), gasPriceSchema(checked), {
    decode: (hex, payload) => attempt(payload, hex, () => gasPriceFromWei(checked, readQuantity(hex, what))),
    encode: (price) => numberToHex(gasPriceWeiPerGas(price)),
  });
}

/** Gas price from / to viem's bigint (`getGasPrice`, `maxFeePerGas`). */
export function gasPriceUint256<C extends number>(chain: ChainRef<C>) {
  const checked = defineChain(chain);
  const what = `chain ${checked.id} gas price`;
  return z.codec(uint256Input(what), gasPriceSchema(checked), {
    decode: (wei, payload) => attempt(payload, wei, () => gasPriceFromWei(checked, wei)),
    encode: (price) => gasPriceWeiPerGas(price),
  });
}

/**
 * Token amount from / to a uint256 viem has already ABI-decoded (`readContract` of `balanceOf`,
 * a `Transfer` event's `value`). Encoding a negative amount fails with `VALUE_NEGATIVE`.
 */
export function tokenAmountUint256<A extends string>(asset: Asset<A>) {
  const checked = defineAsset(asset);
  const what = `${checked.symbol} uint256 amount`;
  return z.codec(uint256Input(what), tokenAmountSchema(checked), {
    decode: (units, payload) => attempt(payload, units, () => tokenAmountFromUnits(checked, units)),
    encode: (amount) => tokenUnits(amount),
  });
}

/** Token amount from / to one 32-byte ABI word (raw log data, `eth_call` results). */
export function tokenAmountAbiWord<A extends string>(asset: Asset<A>) {
  const checked = defineAsset(asset);
  const what = `${checked.symbol} ABI amount`;
  return z.codec(hexInput(what), tokenAmountSchema(checked), {
    decode: (hex, payload) =>
      attempt(payload, hex, () => tokenAmountFromUnits(checked, readAbiWord(hex, what))),
    encode: (amount) => encodeAbiParameters(UINT256, [tokenUnits(amount)]),
  });
}
