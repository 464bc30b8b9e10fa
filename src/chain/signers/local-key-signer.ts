import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { Secret } from "../../config/secret.js";
import { TenorError } from "../../errors/tenor-error.js";
import { CHAIN_ERRORS } from "../chain-error-codes.js";
import type { LocalKeySigner } from "./signer.js";

/**
 * A signer holding a private key in memory. The key is read once from its Secret and kept only in
 * viem's account closure: the returned object has no property that holds it, so logging the signer
 * cannot print it. A malformed key is refused naming its source, never its value.
 */
export function createLocalKeySigner(options: {
  id: string;
  orgId: string | undefined;
  privateKey: Secret;
}): LocalKeySigner {
  const raw = options.privateKey.reveal();
  const key = (raw.startsWith("0x") ? raw : `0x${raw}`) as Hex;
  if (!/^0x[0-9a-fA-F]{64}$/.test(key)) {
    throw new TenorError(
      CHAIN_ERRORS.SIGNER_UNKNOWN,
      `signer ${options.id}: the private key from ${options.privateKey.source} is not 32 bytes of hex`,
      { details: { signer: options.id, source: options.privateKey.source } },
    );
  }
  const account = privateKeyToAccount(key);
  return Object.freeze({
    kind: "local" as const,
    id: options.id,
    orgId: options.orgId,
    address: account.address,
    signTransaction: (tx) => account.signTransaction(tx),
    signUserOperationHash: (hash) => account.signMessage({ message: { raw: hash } }),
  } satisfies LocalKeySigner);
}
