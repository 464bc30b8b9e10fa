import { encodeAbiParameters, type Hex, keccak256 } from "viem";
import { z } from "zod";
import {
  type Allocation,
  type AllocationRounding,
  type Asset,
  allocateProRata,
  type TokenAmount,
  tokenAmountUint256,
  tokenBaseUnitsApi,
} from "../../src/values/index.js";

/** One holder's entitlement: what the snapshot held and what the action pays it. */
export interface Entitlement<P extends string> {
  holder: string;
  amount: TokenAmount<P>;
}

export interface Entitlements<P extends string> {
  /** Holders with a positive entitlement, in address order (the snapshot's order). */
  entitled: Entitlement<P>[];
  /** Holders of the snapshot whose share rounded to zero: nothing is sent to them. */
  roundedToZero: number;
  total: TokenAmount<P>;
  residue: TokenAmount<P>;
  /** keccak256 of the ABI-encoded (holders, amounts): what the approvers approve, what is paid. */
  hash: Hex;
}

/**
 * Entitlements from the record-height snapshot (docs/corporate-actions.md, "Entitlements"):
 * `declared` split pro rata to the balances with the named rounding (toward zero), the residue
 * kept beside them. Pure: a replay computes the same from the journaled snapshot.
 */
export function computeEntitlements<P extends string, A extends string>(
  declared: TokenAmount<P>,
  asset: Asset<A>,
  holders: readonly { holder: string; balance: string }[],
  rounding: AllocationRounding,
): Entitlements<P> {
  const units = tokenBaseUnitsApi(asset);
  const weights = holders.map((h) => units.parse(h.balance));
  const allocation: Allocation<P> = allocateProRata(declared, weights, rounding);
  const entitled: Entitlement<P>[] = [];
  let roundedToZero = 0;
  holders.forEach((h, i) => {
    const amount = allocation.shares[i] as TokenAmount<P>;
    if (amount.isZero()) roundedToZero++;
    else entitled.push({ holder: h.holder, amount });
  });
  const codec = tokenAmountUint256(declared.asset);
  const hash = keccak256(
    encodeAbiParameters(
      [{ type: "address[]" }, { type: "uint256[]" }],
      [entitled.map((e) => e.holder as Hex), entitled.map((e) => z.encode(codec, e.amount))],
    ),
  );
  return {
    entitled,
    roundedToZero,
    total: declared.minus(allocation.residue),
    residue: allocation.residue,
    hash,
  };
}

/** The entitlements cut into batches of `size`, in order: batch i pays entitled[i·size, (i+1)·size). */
export function batchesOf<T>(items: readonly T[], size: number): T[][] {
  const batches: T[][] = [];
  for (let i = 0; i < items.length; i += size) batches.push(items.slice(i, i + size));
  return batches;
}
