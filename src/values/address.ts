import { type Address, getAddress, type Hex } from "viem";
import { z } from "zod";
import { ValueError, ValueErrorCode } from "./errors.js";

/**
 * An EVM account or contract address that has passed the boundary: 20 bytes, EIP-55 checksummed.
 * It is a viem `Address`, so viem calls take it as is; plain strings are not a `ChainAddress`, so
 * domain code cannot pass unchecked text where an address is expected. Build one with
 * {@link chainAddress} (text from the API, config, the database or a journal record) or
 * {@link fromChecksummed} (values viem has already checksummed).
 */
export type ChainAddress = Address & { readonly __chainAddress: unique symbol };

/** The address grammar: 0x and 40 hex digits in any case (a wrong checksum is re-checksummed, not refused). */
const ADDRESS_TEXT = /^0x[0-9a-fA-F]{40}$/;

/** The message the API answers for an address that is not 0x and 40 hex digits. */
export const ADDRESS_MESSAGE = "must be a 0x-prefixed 20-byte address";

/** True when `value` is text of the address grammar. */
export function isAddressText(value: unknown): value is string {
  return typeof value === "string" && ADDRESS_TEXT.test(value);
}

/**
 * Validates `value` and returns it checksummed. Fails with `VALUE_INVALID_ADDRESS` naming `field`,
 * the value and the rule.
 */
export function chainAddress(value: unknown, field: string): ChainAddress {
  if (!isAddressText(value)) {
    throw new ValueError(
      ValueErrorCode.INVALID_ADDRESS,
      `${field} ${JSON.stringify(value)} ${ADDRESS_MESSAGE}`,
      {
        field,
        value: String(value),
        rule: "0x followed by 40 hex digits",
      },
    );
  }
  return getAddress(value) as ChainAddress;
}

/**
 * For an address viem has produced (receipt and log fields, `getAddress`, `getContractAddress`,
 * account addresses): viem checksums these already, so only the brand is added. Anything else goes
 * through {@link chainAddress}.
 */
export function fromChecksummed(value: Address): ChainAddress {
  return value as ChainAddress;
}

/** `chainAddress` for optional fields: `undefined` and `null` stay absent. */
export function optionalChainAddress(
  value: string | null | undefined,
  field: string,
): ChainAddress | undefined {
  return value === undefined || value === null ? undefined : chainAddress(value, field);
}

/** Equality across sources: addresses compare case-insensitively (a checksum is not part of the value). */
export function sameAddress(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/**
 * The lowercase text the database stores and indexes for an address. Only store folders call it;
 * everywhere else an address is a {@link ChainAddress}.
 */
export function addressKey(address: string): string {
  return address.toLowerCase();
}

/**
 * The lowercase text form of an address in journal records, entity and dedupe keys, and the API
 * bodies that answer lowercase: the same text as {@link addressKey}, named for where it crosses out
 * of the domain rather than into a store.
 */
export function addressText(address: string): string {
  return address.toLowerCase();
}

/**
 * A zod codec for an address field that yields a {@link ChainAddress}: decoding (API bodies,
 * config, journal records) checksums, encoding writes the checksummed text. `message` is the text
 * the API answers for a bad value (defaults to {@link ADDRESS_MESSAGE}), kept per field where the
 * existing answers say more. Fields whose caller-given text is recorded verbatim use
 * {@link addressTextSchema} instead.
 */
export function chainAddressSchema(message: string = ADDRESS_MESSAGE) {
  return z.codec(
    z.string().regex(ADDRESS_TEXT, message),
    z.custom<ChainAddress>(isAddressText, { message }),
    {
      decode: (text) => getAddress(text) as ChainAddress,
      encode: (address) => address,
    },
  );
}

/**
 * A zod schema for an address recorded verbatim (workflow inputs, whose journalled text must not
 * change): validates the grammar and keeps the caller's text; steps turn it into a
 * {@link ChainAddress} with {@link chainAddress}.
 */
export function addressTextSchema(message: string = ADDRESS_MESSAGE) {
  return z.string().regex(ADDRESS_TEXT, message);
}

/** The hex data grammar: 0x and whole bytes. */
const HEX_DATA = /^0x([0-9a-fA-F]{2})*$/;

/**
 * Validates hex data (calldata, a signed transaction, a hash) read back from the database or a
 * journal record. Fails with `VALUE_INVALID_HEX` naming `field`.
 */
export function hexData(value: unknown, field: string): Hex {
  if (typeof value !== "string" || !HEX_DATA.test(value)) {
    throw new ValueError(
      ValueErrorCode.INVALID_HEX,
      `${field} ${JSON.stringify(value)} must be 0x-prefixed hex bytes`,
      {
        field,
        value: String(value),
        rule: "0x followed by whole bytes of hex digits",
      },
    );
  }
  return value as Hex;
}
