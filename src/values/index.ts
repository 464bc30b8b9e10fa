/**
 * The typed value boundary: the only module domain code imports for amounts, prices and rates.
 * Raw scalars are not reachable from here; the `@internal` accessors in the kind files are for
 * the codecs and formatters of this folder only.
 */
export {
  ADDRESS_MESSAGE,
  addressKey,
  addressText,
  addressTextSchema,
  type ChainAddress,
  chainAddress,
  chainAddressSchema,
  fromChecksummed,
  hexData,
  isAddressText,
  optionalChainAddress,
  sameAddress,
} from "./address.js";
export {
  ALLOCATION_ROUNDING_MODES,
  type Allocation,
  type AllocationRounding,
  allocateProRata,
} from "./allocation.js";
export {
  decimalApi,
  gasPriceApi,
  nativeValueApi,
  nativeWeiApi,
  tokenAmountApi,
  tokenBaseUnitsApi,
} from "./api-codecs.js";
export { type Asset, type ChainRef, defineAsset, defineChain, sameAsset } from "./asset.js";
export {
  gasPriceRpc,
  gasPriceUint256,
  nativeValueRpc,
  nativeValueUint256,
  tokenAmountAbiWord,
  tokenAmountUint256,
} from "./chain-codecs.js";
export { decodeOrThrow, valueErrorCodeOf } from "./codec-support.js";
export { Decimal } from "./decimal.js";
export { isValueError, ValueError, ValueErrorCode } from "./errors.js";
export {
  formatDecimal,
  formatGasPrice,
  formatNativeValue,
  formatTokenAmount,
  type HumanFormatOptions,
} from "./format.js";
export { GasPrice, type GasPriceUnit, GWEI_DECIMALS } from "./gas-price.js";
export {
  decimalJournal,
  gasPriceJournal,
  type JournalRecord,
  nativeValueJournal,
  tokenAmountJournal,
} from "./journal-codecs.js";
export {
  JOURNAL_SHAPES,
  JOURNAL_VALUE_VERSION,
  type JournalKind,
  type JournalShape,
} from "./journal-shapes.js";
export { NativeValue } from "./native-value.js";
export { UINT256_MAX } from "./opaque.js";
export { Rational } from "./rational.js";
export { MAX_SCALE, ROUNDING_MODES, type RoundingMode } from "./rounding.js";
export { type SignOptions, TokenAmount } from "./token-amount.js";
export { decimalSchema, gasPriceSchema, nativeValueSchema, tokenAmountSchema } from "./value-schemas.js";
