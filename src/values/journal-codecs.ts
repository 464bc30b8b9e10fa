import { z } from "zod";
import { type Asset, type ChainRef, defineAsset, defineChain } from "./asset.js";
import { attempt } from "./codec-support.js";
import { decimalCoefficient, decimalFromCoefficient } from "./decimal.js";
import { ValueError, ValueErrorCode } from "./errors.js";
import { gasPriceFromWei, gasPriceWeiPerGas } from "./gas-price.js";
import {
  type JournalKind,
  type JournalParts,
  readJournalRecord,
  writeJournalRecord,
} from "./journal-shapes.js";
import { nativeValueFromWei, nativeWei } from "./native-value.js";
import { tokenAmountFromUnits, tokenUnits } from "./token-amount.js";
import { decimalSchema, gasPriceSchema, nativeValueSchema, tokenAmountSchema } from "./value-schemas.js";

/**
 * Journal codecs: zod codecs between journal records and the opaque values. Decoding accepts
 * every shape in `JOURNAL_SHAPES` (older records keep replaying); encoding always writes the
 * current canonical string, so `z.encode(codec, codec.parse(old))` upgrades a record. Each codec
 * is bound to a context (the asset or chain the record is for): older shapes take their missing
 * fields from it, and fields a record does carry must match it (`VALUE_ASSET_MISMATCH`,
 * `VALUE_CHAIN_MISMATCH`, `VALUE_SCALE_MISMATCH`). Signed token amounts and decimals are accepted:
 * the journal restores what the domain recorded, including deltas.
 */

/** Any shape a journal may hold; decoders classify it against the versioned table. */
export type JournalRecord = string | { readonly value: string; readonly decimals: number };

const record = () =>
  z.custom<JournalRecord>(() => true).meta({ description: "journal value record (see JOURNAL_SHAPES)" });

function checkScale(kind: JournalKind, parts: JournalParts, expected: number, owner: string): void {
  if (parts.scale === undefined || parts.scale === expected) return;
  throw new ValueError(
    ValueErrorCode.SCALE_MISMATCH,
    `journal ${kind} record has ${parts.scale} decimals but ${owner} has ${expected}`,
    { kind, recorded: parts.scale, expected, owner },
  );
}

function checkChain(kind: JournalKind, parts: JournalParts, chain: ChainRef): void {
  if (parts.chainId === undefined || parts.chainId === chain.id) return;
  throw new ValueError(
    ValueErrorCode.CHAIN_MISMATCH,
    `journal ${kind} record is for chain ${parts.chainId}, decoded for chain ${chain.id}`,
    { kind, recorded: parts.chainId, expected: chain.id },
  );
}

/** Token amount of `asset`. Canonical: `"tok:v2:<assetId>:<decimals>:<units>"`. */
export function tokenAmountJournal<A extends string>(asset: Asset<A>) {
  const checked = defineAsset(asset);
  return z.codec(record(), tokenAmountSchema(checked, { allowNegative: true }), {
    decode: (input, payload) =>
      attempt(payload, input, () => {
        const parts = readJournalRecord("token", input);
        if (parts.assetId !== undefined && parts.assetId !== checked.id) {
          throw new ValueError(
            ValueErrorCode.ASSET_MISMATCH,
            `journal token record is for asset ${parts.assetId}, decoded for ${checked.id}`,
            { recorded: parts.assetId, expected: checked.id },
          );
        }
        checkScale("token", parts, checked.decimals, `asset ${checked.id}`);
        return tokenAmountFromUnits(checked, parts.units, { allowNegative: true });
      }),
    encode: (amount): JournalRecord =>
      writeJournalRecord("token", [checked.id, checked.decimals, tokenUnits(amount)]),
  });
}

/** Native value on `chain`. Canonical: `"nat:v2:<chainId>:<wei>"`. */
export function nativeValueJournal<C extends number>(chain: ChainRef<C>) {
  const checked = defineChain(chain);
  return z.codec(record(), nativeValueSchema(checked), {
    decode: (input, payload) =>
      attempt(payload, input, () => {
        const parts = readJournalRecord("native", input);
        checkChain("native", parts, checked);
        checkScale("native", parts, checked.nativeCurrency.decimals, `chain ${checked.id}'s native currency`);
        return nativeValueFromWei(checked, parts.units);
      }),
    encode: (value): JournalRecord => writeJournalRecord("native", [checked.id, nativeWei(value)]),
  });
}

/** Gas price on `chain`. Canonical: `"gas:v2:<chainId>:<weiPerGas>"`. */
export function gasPriceJournal<C extends number>(chain: ChainRef<C>) {
  const checked = defineChain(chain);
  return z.codec(record(), gasPriceSchema(checked), {
    decode: (input, payload) =>
      attempt(payload, input, () => {
        const parts = readJournalRecord("gas-price", input);
        checkChain("gas-price", parts, checked);
        return gasPriceFromWei(checked, parts.units);
      }),
    encode: (price): JournalRecord => writeJournalRecord("gas-price", [checked.id, gasPriceWeiPerGas(price)]),
  });
}

/**
 * Decimal with its scale. Canonical: `"dec:v2:<scale>:<coefficient>"`; the scale is kept, so
 * "1.50" decodes to scale 2 and is written back with scale 2.
 */
export function decimalJournal() {
  return z.codec(record(), decimalSchema({ allowNegative: true }), {
    decode: (input, payload) =>
      attempt(payload, input, () => {
        const parts = readJournalRecord("decimal", input);
        return decimalFromCoefficient(parts.units, parts.scale ?? 0);
      }),
    encode: (value): JournalRecord => writeJournalRecord("decimal", [value.scale, decimalCoefficient(value)]),
  });
}
