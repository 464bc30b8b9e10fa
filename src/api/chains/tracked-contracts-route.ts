import type { Request, Response } from "express";
import type { z } from "zod";
import { LEDGER_INDEX_ERRORS } from "../../errors/ledger-index-errors.js";
import { TenorError } from "../../errors/tenor-error.js";
import type { ScopeRow } from "../../ledger-index/ledger-scope.js";
import { addressKey } from "../../values/address.js";
import type { ApiDeps } from "../api-deps.js";
import { nameAuditTarget } from "../audit/audit-trail.js";
import { principalOf } from "../auth/authenticate.js";
import { parseRequest } from "../http.js";
import {
  ChainIdParams,
  TrackContractBody,
  type TrackedContractListResource,
  type TrackedContractResource,
} from "./schemas.js";
import { assertChainConfigured } from "./transaction-route.js";

/**
 * `POST /v1/chains/{chainId}/tracked-contracts`: adds a contract already on the chain (one Tenor
 * did not deploy) to the caller's organisation's Ledger Index scope from `fromHeight`
 * (docs/ledger-index.md, "Adding a contract"). Checked before anything is written: the chain is
 * configured, the node's head is at or above `fromHeight`, the address holds code, and the
 * organisation does not track it as that kind already. The indexer then catches up its logs from
 * `fromHeight`. The audit entry names chain, address, kind and height.
 */
export function trackContract(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const principal = principalOf(res);
    const { chainId } = parseRequest(ChainIdParams, req.params, "path");
    assertChainConfigured(chainId, deps.chainIds);
    const body = parseRequest(TrackContractBody, req.body ?? {}, "body");
    const address = addressKey(body.address);
    const fromHeight = BigInt(body.fromHeight);
    nameAuditTarget(res, `chains/${chainId}/tracked-contracts/${address} ${body.kind} from ${fromHeight}`);
    const head = await deps.chainProbe.head(chainId);
    if (fromHeight > head)
      throw invalid("fromHeight", fromHeight.toString(), `must be at most chain ${chainId}'s head, ${head}`, {
        head: head.toString(),
      });
    if (!(await deps.chainProbe.hasCode(chainId, address)))
      throw invalid(
        "address",
        body.address,
        `must hold contract code on chain ${chainId} (none at block ${head})`,
      );
    const { row, added } = await deps.ledgerScope.track({
      chainId,
      orgId: principal.orgId,
      address,
      kind: body.kind,
      fromHeight,
    });
    if (!added)
      throw new TenorError(
        LEDGER_INDEX_ERRORS.LEDGER_SCOPE_DUPLICATE,
        `this organisation already tracks ${address} as ${row.kind} on chain ${chainId}, from height ${row.addedHeight}`,
        { details: { chainId, address, kind: row.kind, fromHeight: row.addedHeight.toString() } },
      );
    res.status(201).json(resourceOf(row));
  };
}

/** `GET /v1/chains/{chainId}/tracked-contracts`: the organisation's live tracked contracts, oldest first. */
export function listTrackedContracts(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const { chainId } = parseRequest(ChainIdParams, req.params, "path");
    const rows = await deps.ledgerScope.liveRows(chainId, principalOf(res).orgId);
    const body: z.infer<typeof TrackedContractListResource> = { chainId, items: rows.map(resourceOf) };
    res.json(body);
  };
}

function resourceOf(row: ScopeRow): z.infer<typeof TrackedContractResource> {
  return {
    chainId: row.chainId,
    address: row.address,
    kind: row.kind,
    fromHeight: row.addedHeight.toString(),
    removedHeight: row.removedHeight === null ? null : row.removedHeight.toString(),
  };
}

function invalid(
  field: string,
  value: string,
  rule: string,
  extra: Record<string, unknown> = {},
): TenorError {
  return new TenorError(LEDGER_INDEX_ERRORS.LEDGER_SCOPE_INVALID, `${field} = ${value}: ${rule}`, {
    details: { field, value, rule, ...extra },
  });
}
