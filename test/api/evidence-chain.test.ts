import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  chainRecords,
  EVIDENCE_FORMAT,
  type EvidenceDocument,
  GENESIS_HASH,
  publicKeyId,
  signEvidence,
  verifyEvidence,
} from "../../src/api/evidence/evidence-chain.js";
import { loadEvidenceSigningKey } from "../../src/api/evidence/signing-key.js";
import { ConfigError } from "../../src/config/config-error.js";

/** The evidence export's hash chain and signature, and what `tenor verify` catches. */

const { privateKey, publicKey } = generateKeyPairSync("ed25519");

function exportOf(facts: { type: string; at: string; data: unknown }[]): EvidenceDocument {
  const records = chainRecords(facts);
  return signEvidence(
    {
      format: EVIDENCE_FORMAT,
      executionId: "00000000-0000-4000-8000-000000000001",
      orgId: "acme",
      exportedAt: "2026-11-30T00:00:00.000Z",
      records,
      head: records.at(-1)?.hash ?? GENESIS_HASH,
    },
    privateKey,
  );
}

const FACTS = [
  { type: "execution", at: "2026-11-30T00:00:00.000Z", data: { input: { amount: "10" } } },
  {
    type: "journal",
    at: "2026-11-30T00:00:01.000Z",
    data: { position: 0, name: "feed.deploy", result: "0xfeed" },
  },
  {
    type: "approval",
    at: "2026-11-30T00:00:02.000Z",
    data: { subject: "alice", paramsHash: "ab".repeat(32) },
  },
];

const copy = (doc: EvidenceDocument): EvidenceDocument => JSON.parse(JSON.stringify(doc));

describe("evidence chain", () => {
  it("links each record to the one before and verifies a signed export", () => {
    const doc = exportOf(FACTS);
    expect(doc.records[0]?.prev).toBe(GENESIS_HASH);
    expect(doc.records[1]?.prev).toBe(doc.records[0]?.hash);
    expect(doc.head).toBe(doc.records[2]?.hash);
    expect(verifyEvidence(copy(doc), publicKeyId(publicKey))).toEqual({
      ok: true,
      problems: [],
      records: 3,
      keyId: publicKeyId(publicKey),
    });
  });

  it("names the record whose content changed", () => {
    const doc = copy(exportOf(FACTS));
    (doc.records[1]?.data as { result: string }).result = "0xbad";
    expect(verifyEvidence(doc).problems).toContain("record 1 (journal): hash does not match its content");
  });

  it("catches a rewritten chain by its signature, a removed record by its link, and a foreign key by its id", () => {
    const rewritten = copy(exportOf(FACTS));
    const facts = rewritten.records.map(({ type, at, data }) => ({ type, at, data }));
    (facts[2]?.data as { subject: string }).subject = "mallory";
    rewritten.records = chainRecords(facts);
    rewritten.head = rewritten.records.at(-1)?.hash ?? "";
    expect(verifyEvidence(rewritten).problems).toEqual(["signature does not match the document"]);

    const removed = copy(exportOf(FACTS));
    removed.records.splice(1, 1);
    expect(verifyEvidence(removed).problems).toEqual(
      expect.arrayContaining([
        "record 1 (approval): seq is 2, expected 1",
        "record 1 (approval): prev does not name record 0",
      ]),
    );

    const other = generateKeyPairSync("ed25519");
    const { signature: _, ...unsigned } = copy(exportOf(FACTS));
    const resigned = signEvidence(unsigned, other.privateKey);
    const verdict = verifyEvidence(copy(resigned), publicKeyId(publicKey));
    expect(
      verdict.problems.some((p) =>
        p.startsWith(`signed by key ${publicKeyId(other.publicKey)}, not the trusted key`),
      ),
    ).toBe(true);
  });

  it("refuses anything that is not an export", () => {
    expect(verifyEvidence({ format: "other" }).problems).toEqual([
      `format must be tenor.evidence/1 or ${EVIDENCE_FORMAT}`,
    ]);
  });

  it("still verifies an export of format 1, made before approvals were named as declared", () => {
    const records = chainRecords(FACTS);
    const older = signEvidence(
      {
        format: "tenor.evidence/1",
        executionId: "00000000-0000-4000-8000-000000000001",
        orgId: "acme",
        exportedAt: "2026-11-30T00:00:00.000Z",
        records,
        head: records.at(-1)?.hash ?? GENESIS_HASH,
      },
      privateKey,
    );
    expect(EVIDENCE_FORMAT).toBe("tenor.evidence/2");
    expect(verifyEvidence(older)).toMatchObject({ ok: true, problems: [] });
  });
});

describe("evidence.signingKey", () => {
  const config = (env: string) => ({ evidence: { signingKey: { env } } });

  it("reads an Ed25519 PKCS#8 key, and none when unset", () => {
    const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    const key = loadEvidenceSigningKey(config("EVIDENCE_KEY"), { env: { EVIDENCE_KEY: pem } });
    expect(key?.asymmetricKeyType).toBe("ed25519");
    expect(loadEvidenceSigningKey({ evidence: {} }, { env: {} })).toBeUndefined();
  });

  it("refuses another kind of key or text, naming the key and source but never the value", () => {
    const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({
      type: "pkcs8",
      format: "pem",
    });
    for (const value of [rsa.toString(), "not a key at all"]) {
      let error: unknown;
      try {
        loadEvidenceSigningKey(config("EVIDENCE_KEY"), { env: { EVIDENCE_KEY: value } });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).issues[0]).toMatchObject({
        key: "evidence.signingKey",
        value: "env:EVIDENCE_KEY",
      });
      expect((error as Error).message).toContain("must be an Ed25519 private key in PKCS#8 PEM");
      expect((error as Error).message).not.toContain(value.split("\n")[1] ?? value);
    }
    expect(() => loadEvidenceSigningKey(config("MISSING_KEY"), { env: {} })).toThrow(/evidence\.signingKey/);
  });
});
