/**
 * Chain addresses are one type, `ChainAddress` (src/values/address.ts): built at the API, config,
 * RPC and journal boundary by its constructor, never cast from a string, and lower-cased only where
 * the database keys on lowercase text (store folders call `addressKey`). Two textual rules enforce
 * that in `src/`, `flows/` and `workers/`:
 *  - no `as Address` and no `` as `0x${string}` `` outside the address module;
 *  - no `.toLowerCase()` on a name that reads as an address (`…address`, `sender`, `to`, `token`,
 *    …) outside store folders and the address module.
 */

/** The one module that may cast and lower-case: it is where addresses are made. */
export const ADDRESS_MODULE = "src/values/address.ts";

/** Files whose address-named `.toLowerCase()` is about something else, each with its reason. */
export const NOT_CHAIN_ADDRESSES: Readonly<Record<string, string>> = {
  "src/webhooks/address-policy.ts":
    "network addresses (hosts and IPs) of webhook targets, not chain addresses",
};

const CAST = /\bas\s+(?:Address\b|`0x\$\{string\}`)/;

/** The identifier right before `.toLowerCase()`, when that names an address. */
const LOWERED = /([A-Za-z_$][\w$]*)\s*\??\.toLowerCase\(\)/g;
const ADDRESS_NAME =
  /(?:address|sender|from|to|contract|account|holder|token|feed|asset|resolver|payer|subject|owner|spender|recipient|emitter|distributor)$/i;

const inStoreFolder = (file: string) => file.split("/").includes("store");

/** The rule violations in one file's text, as `file:line: what`. */
export function addressViolations(file: string, text: string): string[] {
  if (file === ADDRESS_MODULE) return [];
  const found: string[] = [];
  const mayLowerCase = inStoreFolder(file) || file in NOT_CHAIN_ADDRESSES;
  text.split("\n").forEach((line, index) => {
    if (CAST.test(line)) found.push(`${file}:${index + 1}: casts to an address type (build a ChainAddress)`);
    if (mayLowerCase) return;
    for (const match of line.matchAll(LOWERED)) {
      const name = match[1] as string;
      if (ADDRESS_NAME.test(name))
        found.push(`${file}:${index + 1}: ${name}.toLowerCase() (use addressText, or addressKey in a store)`);
    }
  });
  return found;
}
