import { createHash, createPublicKey, type KeyObject, sign, verify } from "node:crypto";
import { canonicalJson } from "../../engine/canonical-json.js";

/**
 * The hash chain and signature of an evidence export (docs/console.md, "Evidence export"). Pure
 * functions over JSON values, shared by the api (which builds and signs) and `tenor verify`
 * (which checks without trusting the database or the api).
 */

/**
 * The format this build exports. Version 2 names an approval by its declared name (journal records
 * of kind `approval`, signal records of kind `approval`) where version 1 wrote its reserved signal
 * `$approval:<name>`, and gives each signal record its `kind` and `sentBy`. The chain and signature
 * are the same in both.
 */
export const EVIDENCE_FORMAT = "tenor.evidence/2";
/** Every format `verifyEvidence` checks: exports made by earlier builds stay verifiable. */
export const VERIFIABLE_FORMATS: readonly string[] = ["tenor.evidence/1", EVIDENCE_FORMAT];
/** The `prev` of the first record. */
export const GENESIS_HASH = "0".repeat(64);

/** One fact of the export; `hash` covers every other member, `prev` links it to the record before. */
export interface EvidenceRecord {
  seq: number;
  type: string;
  at: string | null;
  data: unknown;
  prev: string;
  hash: string;
}

export interface EvidenceSignature {
  algorithm: "Ed25519";
  /** SPKI DER of the public key, base64. */
  publicKey: string;
  /** Hex SHA-256 of the SPKI DER: what an auditor pins. */
  keyId: string;
  /** Base64 Ed25519 signature over the canonical JSON of the document without `signature`. */
  value: string;
}

export interface EvidenceDocument {
  format: string;
  executionId: string;
  orgId: string;
  exportedAt: string;
  records: EvidenceRecord[];
  /** The last record's hash. */
  head: string;
  signature: EvidenceSignature;
}

function recordHash(record: Omit<EvidenceRecord, "hash">): string {
  return createHash("sha256")
    .update(
      canonicalJson({
        seq: record.seq,
        type: record.type,
        at: record.at,
        data: record.data,
        prev: record.prev,
      }),
    )
    .digest("hex");
}

/** Links facts into a chain, in the order given. */
export function chainRecords(
  facts: readonly { type: string; at: string | null; data: unknown }[],
): EvidenceRecord[] {
  const records: EvidenceRecord[] = [];
  let prev = GENESIS_HASH;
  for (const [seq, fact] of facts.entries()) {
    const unsigned = { seq, type: fact.type, at: fact.at, data: fact.data, prev };
    const record = { ...unsigned, hash: recordHash(unsigned) };
    records.push(record);
    prev = record.hash;
  }
  return records;
}

/** The key id of a public key: hex SHA-256 of its SPKI DER. */
export function publicKeyId(publicKey: KeyObject): string {
  return createHash("sha256")
    .update(publicKey.export({ type: "spki", format: "der" }))
    .digest("hex");
}

/** Signs the document (everything but `signature`) with an Ed25519 private key. */
export function signEvidence(
  unsigned: Omit<EvidenceDocument, "signature">,
  privateKey: KeyObject,
): EvidenceDocument {
  const publicKey = createPublicKey(privateKey);
  const value = sign(null, Buffer.from(canonicalJson(unsigned)), privateKey).toString("base64");
  return {
    ...unsigned,
    signature: {
      algorithm: "Ed25519",
      publicKey: publicKey.export({ type: "spki", format: "der" }).toString("base64"),
      keyId: publicKeyId(publicKey),
      value,
    },
  };
}

export interface EvidenceVerdict {
  ok: boolean;
  /** Each problem found, naming the record or member; empty when ok. */
  problems: string[];
  records: number;
  keyId: string | null;
}

/**
 * Checks an export: every record's hash and link, the head, and the signature over the whole.
 * With `trustedKeyId`, the signing key must be that one (an embedded key alone only proves the
 * document was not changed after signing, not who signed it).
 */
export function verifyEvidence(document: unknown, trustedKeyId?: string): EvidenceVerdict {
  const problems: string[] = [];
  const doc = document as Partial<EvidenceDocument> | null;
  if (!doc || typeof doc !== "object" || !VERIFIABLE_FORMATS.includes(String(doc.format))) {
    const formats = VERIFIABLE_FORMATS.join(" or ");
    return { ok: false, problems: [`format must be ${formats}`], records: 0, keyId: null };
  }
  const records = Array.isArray(doc.records) ? doc.records : [];
  if (!Array.isArray(doc.records)) problems.push("records must be a list");
  let prev = GENESIS_HASH;
  for (const [index, record] of records.entries()) {
    if (record.seq !== index)
      problems.push(`record ${index} (${record.type}): seq is ${String(record.seq)}, expected ${index}`);
    if (record.prev !== prev)
      problems.push(`record ${index} (${record.type}): prev does not name record ${index - 1}`);
    const expected = recordHash({
      seq: record.seq,
      type: record.type,
      at: record.at,
      data: record.data,
      prev: record.prev,
    });
    if (record.hash !== expected)
      problems.push(`record ${index} (${record.type}): hash does not match its content`);
    prev = record.hash;
  }
  if (doc.head !== prev) problems.push("head does not name the last record");
  const keyId = checkSignature(doc, problems);
  if (trustedKeyId !== undefined && keyId !== null && keyId !== trustedKeyId.toLowerCase()) {
    problems.push(`signed by key ${keyId}, not the trusted key ${trustedKeyId}`);
  }
  return { ok: problems.length === 0, problems, records: records.length, keyId };
}

function checkSignature(doc: Partial<EvidenceDocument>, problems: string[]): string | null {
  const { signature, ...unsigned } = doc;
  if (signature?.algorithm !== "Ed25519" || typeof signature.value !== "string") {
    problems.push("signature must be an Ed25519 signature");
    return null;
  }
  let publicKey: KeyObject;
  try {
    publicKey = createPublicKey({
      key: Buffer.from(signature.publicKey, "base64"),
      format: "der",
      type: "spki",
    });
  } catch {
    problems.push("signature.publicKey is not an SPKI public key");
    return null;
  }
  const keyId = publicKeyId(publicKey);
  if (signature.keyId !== keyId) problems.push("signature.keyId does not match signature.publicKey");
  const valid = verify(
    null,
    Buffer.from(canonicalJson(unsigned)),
    publicKey,
    Buffer.from(signature.value, "base64"),
  );
  if (!valid) problems.push("signature does not match the document");
  return keyId;
}
