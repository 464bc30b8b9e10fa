import type { TenorConfig } from "../../config/schema.js";
import type { SecretReadOptions } from "../../config/secret.js";
import { readSecret } from "../../config/secret.js";
import { TenorError } from "../../errors/tenor-error.js";
import { sameAddress } from "../../values/address.js";
import { CHAIN_ERRORS } from "../chain-error-codes.js";
import { createCustodyHttpSigner } from "./custody-http-signer.js";
import { createLocalKeySigner } from "./local-key-signer.js";
import type { LocalKeySigner, Signer } from "./signer.js";

/**
 * The configured signers, built once at the composition root (secrets are read here). An
 * organisation may use its own signers and the platform's; never another organisation's.
 */
export class SignerRegistry {
  private readonly byId = new Map<string, Signer>();

  constructor(signers: readonly Signer[]) {
    for (const signer of signers) this.byId.set(signer.id, signer);
  }

  static fromConfig(config: Pick<TenorConfig, "signers">, secrets: SecretReadOptions): SignerRegistry {
    return new SignerRegistry(
      config.signers.map((s, index) =>
        s.kind === "local"
          ? createLocalKeySigner({
              id: s.id,
              orgId: s.orgId,
              privateKey: readSecret(`signers.${index}.privateKey`, s.privateKey, secrets),
            })
          : createCustodyHttpSigner({
              id: s.id,
              orgId: s.orgId,
              address: s.address,
              baseUrl: s.baseUrl,
              apiKey: readSecret(`signers.${index}.apiKey`, s.apiKey, secrets),
              requestTimeoutMs: s.requestTimeoutMs,
              pollBudget: s.pollBudget,
              pollIntervalMs: s.pollIntervalMs,
            }),
      ),
    );
  }

  /** The signer `id` as `orgId` may use it, or SIGNER_UNKNOWN (the same answer for "not yours"). */
  forOrg(orgId: string, id: string): Signer {
    const signer = this.byId.get(id);
    if (!signer || (signer.orgId !== undefined && signer.orgId !== orgId)) {
      throw new TenorError(CHAIN_ERRORS.SIGNER_UNKNOWN, `no signer ${id} for organisation ${orgId}`, {
        details: { signer: id },
      });
    }
    return signer;
  }

  /** The local-key signer holding `address` (any organisation's): who can sign a nonce-gap fill. */
  localByAddress(address: string): LocalKeySigner | undefined {
    for (const signer of this.byId.values()) {
      if (signer.kind === "local" && sameAddress(signer.address, address)) return signer;
    }
    return undefined;
  }
}
