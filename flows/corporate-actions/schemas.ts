import { z } from "zod";
import { ALLOCATION_ROUNDING_MODES, addressTextSchema } from "../../src/values/index.js";

const address = (what: string) => addressTextSchema(`${what} must be a 0x-prefixed 20-byte address`);
const duration = z.string().regex(/^\d+(ms|s|m|h|d)$/, 'must be a duration like "30s", "24h", "7d"');

/** Most holders one distribution batch pays (one transaction; about 35,000 gas per holder). */
export const MAX_BATCH_SIZE = 500;

/**
 * A coupon or dividend: `amount` of `paymentToken` declared for the holders of `asset` at the
 * record date, split pro rata to their balances (docs/corporate-actions.md). The organisation is
 * the execution's (its API key); nothing here names one.
 */
export const CorporateActionInput = z
  .object({
    actionId: z
      .string()
      .regex(/^[A-Za-z0-9._:-]{1,64}$/, "must be 1–64 letters, digits or . _ : -")
      .describe(
        "The organisation's reference for this action; batch ids derive from it, so reuse re-pays nothing.",
      ),
    kind: z.enum(["coupon", "dividend"]),
    chainId: z.number().int().min(1),
    asset: address("asset").describe(
      "The ERC-20 whose holders are entitled (tracked by the organisation in the Ledger Index).",
    ),
    paymentToken: address("paymentToken").describe("The ERC-20 paid out, from the payer's wallet."),
    amount: z
      .string()
      .regex(/^(0|[1-9][0-9]*)(\.[0-9]+)?$/, "must be a decimal string like 10000.25")
      .describe('The declared total in whole payment tokens, a decimal string ("10000.25").'),
    rounding: z
      .enum(ALLOCATION_ROUNDING_MODES)
      .describe("The named rounding policy: each entitlement rounded toward zero; the residue is recorded."),
    recordDate: z.iso
      .datetime({ offset: true })
      .describe("Holders are those at the last block whose timestamp is at or before this instant."),
    payerSignerId: z
      .string()
      .regex(/^[a-z0-9-]+$/, "must match [a-z0-9-]+")
      .describe("The organisation's signer that pays (gas and the payment token) and owns the Distributor."),
    excluded: z
      .array(address("excluded[]"))
      .max(100)
      .default([])
      .describe("Wallets never entitled besides the payer and the Distributor (treasury, issuer wallets)."),
    batchSize: z.number().int().min(1).max(MAX_BATCH_SIZE).default(100),
    quorum: z
      .number()
      .int()
      .min(2, "at least two people approve a payout")
      .max(10)
      .default(2)
      .describe("Distinct approvers of the payout parameters (M of N)."),
    approvalTimeout: duration.default("7d"),
    fundingTimeout: duration
      .default("24h")
      .describe("How long a write waits for gas funding of the payer before the action fails GAS_REQUIRED."),
  })
  .strict();
export type CorporateActionInput = z.infer<typeof CorporateActionInput>;

export const CorporateActionOutput = z.object({
  actionId: z.string(),
  recordHeight: z.string(),
  distributor: z.string(),
  holders: z.number().int(),
  /** Whole payment tokens, decimal strings. */
  declared: z.string(),
  distributed: z.string(),
  residue: z.string(),
  entitlementsHash: z.string(),
  batches: z.number().int(),
  /** Batches found already paid on chain (a re-run of the action) and not paid again. */
  batchesSkipped: z.number().int(),
});
export type CorporateActionOutput = z.infer<typeof CorporateActionOutput>;
