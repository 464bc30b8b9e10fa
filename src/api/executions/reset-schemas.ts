import { z } from "zod";
import { pgText } from "../query-params.js";
import { CANCEL_REASON_MAX, ResetSchema } from "./schemas.js";

/** `POST /v1/executions/{id}/reset`: where to continue from, and why (docs/engine.md, "Reset"). */
export const ResetBodySchema = z
  .object({
    position: z
      .int()
      .min(0)
      .meta({
        description:
          "The first journal position to set aside: positions below it are kept and replayed by the newest version; " +
          "0 to the journal's length (its length sets nothing aside and only moves the run to the newest version).",
      }),
    reason: pgText(CANCEL_REASON_MAX).meta({
      description: `Why, 1–${CANCEL_REASON_MAX} characters; kept with the reset and shown with it.`,
    }),
  })
  .strict()
  .meta({ id: "ResetRequest" });

export const ResetAcceptedSchema = z
  .object({
    executionId: z.uuid(),
    status: z
      .literal("running")
      .meta({ description: "The run is woken and takes its next turn on the new version." }),
    duplicate: z.boolean().meta({
      description:
        "True when the Idempotency-Key named an earlier reset: that reset is answered, nothing is done again.",
    }),
    reset: ResetSchema,
  })
  .meta({ id: "ResetAccepted" });
