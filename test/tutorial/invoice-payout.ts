import { z } from "zod";
import { BusinessError } from "../../src/engine/errors.js";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { defineAsset, tokenAmountApi } from "../../src/values/index.js";

// docs/writing-workflows.md quotes this file: keep the two in step.

// [typed-values]
/** Euro, in cents: amounts cross the API as decimal strings and are TokenAmounts inside. */
export const EUR = defineAsset({ id: "iso4217:EUR", decimals: 2, symbol: "EUR" });
const EurAmount = tokenAmountApi(EUR);

export const InvoicePayoutInput = z.object({
  invoiceId: z.string().regex(/^[A-Z0-9-]{3,32}$/),
  supplier: z.string().min(1),
  amount: EurAmount,
});
export const InvoicePayoutOutput = z.object({
  invoiceId: z.string(),
  paid: EurAmount,
  approvedBy: z.string(),
  remittance: z.string(),
  settlementRef: z.string(),
  paidAt: z.string(),
});
// [/typed-values]

// [child]
/** The remittance advice, a child workflow of its own (it could be started alone, too). */
export const remittanceAdvice = defineWorkflow({
  name: "tutorial.remittance-advice",
  version: 1,
  input: z.object({ invoiceId: z.string(), supplier: z.string() }),
  output: z.object({ reference: z.string() }),
  async run(ctx, input) {
    const id = await ctx.uuid(); // journaled: the same id on every replay
    return ctx.step("advice.send", () => ({ reference: `RA-${input.invoiceId}-${id.slice(0, 8)}` }));
  },
});
// [/child]

// [workflow]
export const invoicePayout = defineWorkflow({
  name: "tutorial.invoice-payout",
  version: 1,
  input: InvoicePayoutInput,
  output: InvoicePayoutOutput,
  // Keyed: one payout per supplier at a time, in arrival order.
  key: (input) => `supplier:${input.supplier}`,
  async run(ctx, input) {
    // A step: runs once, its result journaled before the body goes on.
    const check = await ctx.step("invoice.check", () => ({ payable: input.amount.isPositive() }));
    if (!check.payable) throw new BusinessError("INVOICE_NOT_PAYABLE", `${input.invoiceId} pays nothing`);

    // An approval bound to exactly these parameters: an approver votes on their hash.
    const decision = await ctx.waitForApproval("payout", {
      params: {
        invoiceId: input.invoiceId,
        supplier: input.supplier,
        amount: z.encode(EurAmount, input.amount),
      },
      timeout: "2d",
    });
    if (decision.timedOut)
      throw new BusinessError("APPROVAL_EXPIRED", `no approval of ${input.invoiceId} in 2 days`);
    if (!decision.approved)
      throw new BusinessError("APPROVAL_REJECTED", `${decision.rejectedBy.name} rejected it`);

    // A durable timer: payment terms of 30 days, survived across restarts and deployments.
    await ctx.sleep("payment.terms", "30d");

    const advice = await ctx.child(remittanceAdvice, {
      invoiceId: input.invoiceId,
      supplier: input.supplier,
    });

    // A signal from outside (the bank's confirmation), with a schema and a deadline.
    const settled = await ctx.waitForSignal("bank.settled", {
      schema: z.object({ reference: z.string() }),
      timeout: "7d",
    });
    if (settled.timedOut) throw new BusinessError("SETTLEMENT_MISSING", "the bank did not confirm in 7 days");

    const paidAt = await ctx.now(); // not Date.now(): the determinism rule
    return {
      invoiceId: input.invoiceId,
      paid: input.amount,
      approvedBy: decision.approvers.map((a) => a.name).join(", "),
      remittance: advice.reference,
      settlementRef: settled.payload.reference,
      paidAt: paidAt.toISOString(),
    };
  },
});
// [/workflow]

/** Every workflow of the tutorial, for the runner (test kit) and for replay. */
export const TUTORIAL_WORKFLOWS = [invoicePayout, remittanceAdvice];
