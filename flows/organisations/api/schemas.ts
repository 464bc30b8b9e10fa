import { z } from "zod";
import { chainIdParameter } from "../../../src/api/query-params.js";

/** `GET /v1/organisations/systems?chainId=`: the optional chain filter. */
export const SystemsQuery = z
  .object({
    chainId: chainIdParameter.optional(),
  })
  .strict();

/** One system deployment of the key's organisation (docs/organisations.md). */
export const OrganisationSystemResource = z
  .object({
    chainId: z.number().int(),
    address: z.string().meta({ description: "Lower-case SystemSettings address." }),
    status: z.enum(["deploying", "active", "replaced", "failed"]),
    executionId: z.string().meta({ description: "The deployment's execution." }),
    fromHeight: z.string().meta({ description: "Decimal block height the system is tracked from." }),
    removedHeight: z.string().nullable().meta({
      description: "Last block it counted as the organisation's system; null while deploying or active.",
    }),
    failureReason: z.string().nullable(),
  })
  .meta({ id: "OrganisationSystem" });

export const OrganisationSystemList = z.object({ items: z.array(OrganisationSystemResource) });
