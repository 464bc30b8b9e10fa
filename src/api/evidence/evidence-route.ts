import type { KeyObject } from "node:crypto";
import type { Request, Response } from "express";
import { z } from "zod";
import type { ExecutionRecord } from "../../store/pg-execution-reads.js";
import type { ApiDeps } from "../api-deps.js";
import { API_ERRORS } from "../api-error-codes.js";
import { principalOf } from "../auth/authenticate.js";
import { notFound, requireExecution } from "../executions/read-routes.js";
import { ExecutionIdParams } from "../executions/schemas.js";
import { problem, rolesNote } from "../openapi/common.js";
import { apiError } from "../problem.js";
import { defineRoute, type RouteDeclaration } from "../route.js";
import {
  chainRecords,
  EVIDENCE_FORMAT,
  type EvidenceDocument,
  GENESIS_HASH,
  signEvidence,
} from "./evidence-chain.js";
import { evidenceFacts } from "./evidence-facts.js";

/**
 * The signed export of one execution of the caller's organisation (docs/console.md, "Evidence
 * export"), for the API's route and the console's download alike. Throws
 * EVIDENCE_SIGNING_DISABLED without a signing key, EXECUTION_NOT_FOUND when it is gone.
 */
export async function buildEvidence(
  deps: ApiDeps,
  orgId: string,
  execution: ExecutionRecord,
): Promise<EvidenceDocument> {
  const key = signingKey(deps);
  const [journal, votes, extras] = await Promise.all([
    deps.client.journal(execution.id, orgId),
    deps.approvals.list(orgId, execution.id),
    deps.evidence.extras(orgId, execution.id),
  ]);
  if (votes === null || extras === null) throw notFound(execution.id);
  const records = chainRecords(
    evidenceFacts({
      execution,
      input: extras.input,
      journal,
      votes,
      signals: extras.signals,
      audit: extras.audit,
      resets: extras.resets,
    }),
  );
  return signEvidence(
    {
      format: EVIDENCE_FORMAT,
      executionId: execution.id,
      orgId,
      exportedAt: new Date().toISOString(),
      records,
      head: records.at(-1)?.hash ?? GENESIS_HASH,
    },
    key,
  );
}

/** The api's evidence signing key; EVIDENCE_SIGNING_DISABLED when none is configured. */
function signingKey(deps: ApiDeps): KeyObject {
  if (deps.evidenceKey) return deps.evidenceKey;
  throw apiError(
    API_ERRORS.EVIDENCE_SIGNING_DISABLED,
    "evidence export needs a signing key: set evidence.signingKey in the api's configuration",
  );
}

/** Answers the export as a download named after the execution. */
export function sendEvidence(res: Response, document: EvidenceDocument): void {
  res.setHeader("Content-Disposition", `attachment; filename="evidence-${document.executionId}.json"`);
  res.json(document);
}

function exportEvidence(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const orgId = principalOf(res).orgId;
    signingKey(deps);
    const execution = await requireExecution(deps, req, res);
    sendEvidence(res, await buildEvidence(deps, orgId, execution));
  };
}

const EvidenceRecordSchema = z
  .object({
    seq: z.number().int(),
    type: z.enum([
      "execution",
      "journal",
      "approval",
      "signal",
      "audit",
      "transition",
      "transaction",
      "reset",
    ]),
    at: z.string().nullable(),
    data: z.unknown(),
    prev: z.string().meta({ description: "Hash of the record before (64 zeros for the first)." }),
    hash: z.string().meta({ description: "Hex SHA-256 of the canonical JSON of seq, type, at, data, prev." }),
  })
  .meta({ id: "EvidenceRecord" });

export const EvidenceSchema = z
  .object({
    format: z.literal(EVIDENCE_FORMAT),
    executionId: z.uuid(),
    orgId: z.string(),
    exportedAt: z.string(),
    records: z.array(EvidenceRecordSchema),
    head: z.string().meta({ description: "The last record's hash." }),
    signature: z.object({
      algorithm: z.literal("Ed25519"),
      publicKey: z.string().meta({ description: "SPKI DER, base64." }),
      keyId: z.string().meta({ description: "Hex SHA-256 of the SPKI DER." }),
      value: z.string().meta({ description: "Base64 signature over the canonical JSON of everything else." }),
    }),
  })
  .meta({ id: "Evidence" });

/** `GET /v1/executions/{id}/evidence`: the signed, hash-chained export of one execution. */
export const EVIDENCE_ROUTES: readonly RouteDeclaration[] = [
  defineRoute({
    method: "get",
    path: "/v1/executions/{id}/evidence",
    permission: "evidence",
    audit: { action: "execution.evidence", target: (req) => String(req.params.id) },
    openapi: {
      operationId: "getExecutionEvidence",
      tags: ["executions"],
      summary: "Signed evidence export of an execution",
      description:
        "The execution's input, journal (with payloads), approval votes (who, when, which parameters hash), signals " +
        "with their senders, " +
        "audit rows, status transitions and transaction hashes, in time order, each record hash-chained to the one " +
        "before and the whole signed with the api's Ed25519 key. Approvals appear under their declared name " +
        "(format 2). Check it offline with `npm run tenor -- verify <file>`. " +
        rolesNote("evidence"),
      request: { params: ExecutionIdParams },
      responses: {
        200: { description: "The export.", content: { "application/json": { schema: EvidenceSchema } } },
        404: problem("EXECUTION_NOT_FOUND."),
        503: problem("EVIDENCE_SIGNING_DISABLED: no evidence.signingKey is configured."),
      },
    },
    handler: exportEvidence,
  }),
];
