import { encodeAbiParameters, getAddress, keccak256, stringToHex } from "viem";
import { describe, expect, it } from "vitest";
import {
  ClaimBatchInput,
  claimsHash,
  MAX_WRITE_SIZE,
  normaliseClaims,
} from "../../../flows/identity-claims/schemas.js";

const SUBJECT = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
const OTHER = "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc";
const base = { chainId: 31337, registry: OTHER, signerId: "issuer" };

function issues(input: unknown): Record<string, string> {
  const parsed = ClaimBatchInput.safeParse(input);
  if (parsed.success) return {};
  return Object.fromEntries(parsed.error.issues.map((i) => [i.path.join("."), i.message]));
}

describe("identity.claim-batch input", () => {
  it("names the index, the value and the rule of every invalid claim field", () => {
    expect(
      issues({
        ...base,
        claims: [
          { subject: "0xABC", topic: 1, data: "a" },
          { subject: "0x70997970C51812dc3A010C7d01b50e0d17dc79c8".replace("C8", "c8"), topic: 1, data: "a" },
          { subject: "0x0000000000000000000000000000000000000000", topic: 1, data: "a" },
          { subject: SUBJECT, topic: 1.5, data: "a" },
          { subject: SUBJECT, topic: (1n << 256n).toString(), data: "a" },
          { subject: SUBJECT, topic: "07", data: "" },
        ],
      }),
    ).toEqual({
      "claims.0.subject": expect.stringMatching(/^subject "0xABC" must be a 0x-prefixed 20-byte hex address/),
      "claims.1.subject": expect.stringMatching(/valid EIP-55 checksum/),
      "claims.2.subject": "subject must not be the zero address",
      "claims.3.topic": expect.stringMatching(/^topic 1.5 must be an integer from 0 to 2\^256-1/),
      "claims.4.topic": expect.stringMatching(
        /^topic "1157920892373161954235709850086879078532699846656405640394575840079131296399\d+" must be/,
      ),
      "claims.5.topic": expect.stringMatching(/^topic "07" must be/),
      "claims.5.data": "data must not be empty",
    });
  });

  it("refuses a second claim for one subject and topic, naming both indexes (case and number form do not hide it)", () => {
    expect(
      issues({
        ...base,
        claims: [
          { subject: SUBJECT, topic: 5, data: "a" },
          { subject: OTHER, topic: 5, data: "b" },
          { subject: getAddress(SUBJECT), topic: "5", data: "c" },
        ],
      }),
    ).toEqual({
      "claims.2": `claims[2] repeats claims[0] (subject ${getAddress(SUBJECT)}, topic 5): one claim per subject and topic`,
    });
  });

  it("checks the batch's own settings", () => {
    expect(issues({ ...base, claims: [] })).toEqual({ claims: "claims must hold at least one claim" });
    const one = [{ subject: SUBJECT, topic: 1, data: "a" }];
    expect(
      issues({
        ...base,
        registry: "registry",
        claims: one,
        batchSize: MAX_WRITE_SIZE + 1,
        quorum: 0,
        approvalTimeout: "soon",
      }),
    ).toEqual({
      registry: expect.stringMatching(/^registry "registry" must be a 0x-prefixed/),
      batchSize: `batchSize must be at most ${MAX_WRITE_SIZE}`,
      quorum: "quorum must be at least 1",
      approvalTimeout: expect.stringMatching(/^approvalTimeout must be a positive whole number/),
    });
    expect(ClaimBatchInput.parse({ ...base, claims: one })).toMatchObject({
      batchSize: 50,
      quorum: 2,
      approvalTimeout: "24h",
    });
  });

  it("normalises claims and hashes them as addClaims' ABI arguments", () => {
    const claims = normaliseClaims([
      { subject: SUBJECT, topic: 7, data: "kyc:1" },
      {
        subject: OTHER,
        topic: "115792089237316195423570985008687907853269984665640564039457584007913129639935",
        data: "é",
      },
    ]);
    expect(claims[0]).toEqual({
      index: 0,
      subject: getAddress(SUBJECT),
      topic: "7",
      dataHash: keccak256(stringToHex("kyc:1")),
    });
    expect(claims[1]?.dataHash).toBe(keccak256(new Uint8Array([0xc3, 0xa9])));
    expect(claimsHash(claims)).toBe(
      keccak256(
        encodeAbiParameters(
          [{ type: "address[]" }, { type: "uint256[]" }, { type: "bytes32[]" }],
          [
            [getAddress(SUBJECT), getAddress(OTHER)],
            [7n, (1n << 256n) - 1n],
            [keccak256(stringToHex("kyc:1")), keccak256(stringToHex("é"))],
          ],
        ),
      ),
    );
  });
});
