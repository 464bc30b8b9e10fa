import { z } from "zod";
import { addressKey, addressTextSchema } from "../../src/values/address.js";
import { parseDecimalText } from "../../src/values/decimal-text.js";

/**
 * The holders of one mint (docs/assets.md, "Minting"): who receives how much, as the caller wrote
 * it. The same rules hold at the API (a 400 naming the field) and in `asset.mint` itself.
 */

/**
 * Most holders one mint may name: one `mintBatch` transaction credits them all, and about 50 000
 * gas per new holder keeps 200 near 10 M gas, a third of a 30 M-gas block, so the batch still fits
 * a block when the chain is busy. Larger distributions are several mints.
 */
export const MAX_MINT_HOLDERS = 200;

const AMOUNT = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;

/** One holder's credit: an address and a positive decimal amount in whole tokens ("1250.5"). */
export const MintHolder = z
  .object({
    address: addressTextSchema().meta({ description: "The holder, a 0x-prefixed 20-byte address." }),
    amount: z
      .string()
      .regex(AMOUNT, "must be a decimal string such as 1250.5 (whole tokens, no exponent)")
      .refine((v) => !AMOUNT.test(v) || /[1-9]/.test(v), "must be greater than 0")
      .meta({
        description: "Whole tokens as a decimal string, at most the token's decimals after the point.",
      }),
  })
  .strict();

/** The holders of one mint: 1 to {@link MAX_MINT_HOLDERS}, each address at most once. */
export const MintHolders = z
  .array(MintHolder)
  .min(1, "must name at least one holder")
  .max(MAX_MINT_HOLDERS, `must name at most ${MAX_MINT_HOLDERS} holders (one mintBatch transaction)`)
  .superRefine((holders, ctx) => {
    const first = new Map<string, number>();
    holders.forEach((holder, i) => {
      const key = addressKey(holder.address);
      const seen = first.get(key);
      if (seen === undefined) first.set(key, i);
      else
        ctx.addIssue({
          code: "custom",
          path: [i, "address"],
          input: holder.address,
          message: `is already holders[${seen}].address: name each holder once`,
        });
    });
  });
export type MintHolders = z.infer<typeof MintHolders>;

/** One refused amount: its dotted path (`holders.3.amount`) and the rule it breaks. */
export interface MintIssue {
  path: string;
  message: string;
}

/** 2^256 − 1: the most a uint256 balance or total supply holds. */
const UINT256_MAX = 2n ** 256n - 1n;

/**
 * Each holder's amount in the token's base units at `decimals`, or the issues of the amounts
 * with more decimals than the token, and of a list whose sum no uint256 holds.
 */
export function mintUnits(holders: MintHolders, decimals: number): { units: bigint[]; issues: MintIssue[] } {
  const units: bigint[] = [];
  const issues: MintIssue[] = [];
  holders.forEach((holder, index) => {
    try {
      units.push(parseDecimalText(holder.amount, decimals, { what: "amount", allowNegative: false }));
    } catch (error) {
      issues.push({
        path: `holders.${index}.amount`,
        message: `${(error as Error).message} (the token has ${decimals} decimals)`,
      });
    }
  });
  const total = units.reduce((sum, u) => sum + u, 0n);
  if (issues.length === 0 && total > UINT256_MAX)
    issues.push({
      path: "holders",
      message: "the amounts together exceed a uint256, the token's total supply",
    });
  return { units, issues };
}
