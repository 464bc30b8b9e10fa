import { type Address, getAddress, type PublicClient } from "viem";
import { TenorError } from "../errors/tenor-error.js";
import { type ChainAddress, fromChecksummed } from "../values/address.js";
import { CHAIN_ERRORS } from "./chain-error-codes.js";
import { EntryPointReference } from "./contracts/artifacts.js";

/**
 * Turns the configured EntryPoint address into the real one (docs/chains.md, "Account
 * abstraction"): a reference contract (it answers `target()`) → its target; a plain EntryPoint or
 * any address without that function → unchanged. A network failure is ENTRYPOINT_UNRESOLVED,
 * retryable: never a pass-through of the configured address, which may be a reference.
 */
export async function resolveEntryPoint(client: PublicClient, configured: Address): Promise<ChainAddress> {
  let code: string | undefined;
  try {
    code = await client.getCode({ address: configured });
  } catch (error) {
    throw unresolved(configured, error);
  }
  if (!code || code === "0x") return fromChecksummed(getAddress(configured));
  try {
    const target = await client.readContract({
      address: configured,
      abi: EntryPointReference.abi,
      functionName: "target",
    });
    return fromChecksummed(getAddress(target));
  } catch (error) {
    // The contract has no `target()`: it is the EntryPoint itself. A transport failure is not that.
    if (isExecutionRevert(error)) return fromChecksummed(getAddress(configured));
    throw unresolved(configured, error);
  }
}

/**
 * Refuses a submission that names the configured (reference) address when it differs from the
 * resolved one: the operation must be rebuilt and re-signed against the real EntryPoint.
 */
export function assertResolvedEntryPoint(named: Address, resolved: Address, configured: Address): void {
  if (getAddress(named) !== getAddress(resolved)) {
    throw new TenorError(
      CHAIN_ERRORS.ENTRYPOINT_NOT_RESOLVED_ADDRESS,
      `the operation names EntryPoint ${named}, not the resolved ${resolved} (configured ${configured}); rebuild and re-sign it`,
      { details: { named, resolved, configured } },
    );
  }
}

function unresolved(configured: Address, error: unknown): TenorError {
  return new TenorError(
    CHAIN_ERRORS.ENTRYPOINT_UNRESOLVED,
    `EntryPoint ${configured} could not be resolved (${(error as Error).message.split("\n")[0]})`,
    { retryable: true, details: { configured }, cause: error },
  );
}

function isExecutionRevert(error: unknown): boolean {
  let current: unknown = error;
  while (current instanceof Error) {
    const name = current.name;
    if (name === "ContractFunctionRevertedError" || name === "ContractFunctionZeroDataError") return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
