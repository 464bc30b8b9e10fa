import { describe, expect, it } from "vitest";
import { withDevChain } from "../../scripts/dev-chain/dev-chain.js";
import { DEV_EVIDENCE_KEY_FILE } from "../../scripts/dev-defaults.js";
import { loadEvidenceSigningKey } from "../../src/api/evidence/signing-key.js";
import { loadConfig } from "../../src/config/index.js";

/**
 * The quick start's configuration (`npm run local` with no chain configured writes withDevChain's
 * document) turns evidence signing on with the development key, unless the operator names a key.
 */

const RESOLVER = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const env = {
  DATABASE_URL: "postgresql://x@127.0.0.1/db",
  REDIS_URL: "redis://127.0.0.1",
  TENOR_CONFIG: "dev.json",
};
const configOf = (document: Record<string, unknown>) =>
  loadConfig({
    env,
    readFile: () => JSON.stringify(withDevChain(document, "http://127.0.0.1:8545", RESOLVER)),
  });

describe("the quick start's development keys", () => {
  it("turn evidence signing on with the development Ed25519 key", () => {
    const config = configOf({});
    expect(config.evidence.signingKey).toEqual({ file: DEV_EVIDENCE_KEY_FILE });
    expect(loadEvidenceSigningKey(config, { env })?.asymmetricKeyType).toBe("ed25519");
  });

  it("leave an operator's own evidence key alone", () => {
    const config = configOf({ evidence: { signingKey: { env: "MY_EVIDENCE_KEY" } } });
    expect(config.evidence.signingKey).toEqual({ env: "MY_EVIDENCE_KEY" });
  });
});
