import { bytesToHex, concatHex, type Hex, stringToBytes } from "viem";
import { TenorError } from "../errors/tenor-error.js";
import { CHAIN_ERRORS } from "./chain-error-codes.js";

/** The ERC-8021 marker: 0x8021 repeated 8 times, the last 16 bytes of an attributed calldata. */
export const ERC8021_MARKER: Hex = "0x80218021802180218021802180218021";

/** Schema 0: codes are ASCII, joined with commas. */
const SCHEMA_ID_0: Hex = "0x00";

/**
 * The ERC-8021 schema-0 data suffix for `codes`: `codes ‖ codesLength (1 byte) ‖ 0x00 ‖ marker`.
 * Computed once where a transaction is constructed and appended to the calldata byte for byte
 * on every attempt (a replacement carries the same suffix). Refuses codes that would not decode:
 * none, an empty or non-printable-ASCII code, a comma inside a code, or more than 255 bytes.
 */
export function attributionSuffix(codes: readonly string[]): Hex {
  const invalid = (rule: string) =>
    new TenorError(CHAIN_ERRORS.ATTRIBUTION_INVALID, `ERC-8021 codes ${JSON.stringify(codes)} ${rule}`, {
      details: { codes: [...codes] },
    });
  if (codes.length === 0) throw invalid("must name at least one code");
  for (const code of codes) {
    if (!/^[\x21-\x7e]+$/.test(code) || code.includes(","))
      throw invalid("must each be non-empty printable ASCII without commas");
  }
  const bytes = stringToBytes(codes.join(","));
  if (bytes.length > 255) throw invalid("must be at most 255 bytes joined");
  const length = bytesToHex(new Uint8Array([bytes.length]));
  return concatHex([bytesToHex(bytes), length, SCHEMA_ID_0, ERC8021_MARKER]);
}

/**
 * Appends `suffix` to `data` unless it already ends with it: a retried construction never
 * attributes twice.
 */
export function withAttribution(data: Hex | undefined, suffix: Hex): Hex {
  const body = (data ?? "0x").toLowerCase() as Hex;
  const tail = suffix.toLowerCase().slice(2);
  if (body.endsWith(tail)) return body;
  return `${body}${tail}` as Hex;
}
