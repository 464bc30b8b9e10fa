import { describe, expect, it } from "vitest";
import {
  addressKey,
  addressTextSchema,
  chainAddress,
  chainAddressSchema,
  hexData,
  optionalChainAddress,
  sameAddress,
} from "../../src/values/address.js";
import { isValueError, ValueErrorCode } from "../../src/values/errors.js";

const LOWER = "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed";
const CHECKSUMMED = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";

function refusal(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a refusal");
}

describe("addresses at the boundary (src/values/address.ts)", () => {
  it("checksums what it accepts, whatever the case it came in", () => {
    expect(chainAddress(LOWER, "to")).toBe(CHECKSUMMED);
    expect(chainAddress(CHECKSUMMED.toUpperCase().replace("0X", "0x"), "to")).toBe(CHECKSUMMED);
    expect(optionalChainAddress(undefined, "paymaster")).toBeUndefined();
    expect(optionalChainAddress(null, "paymaster")).toBeUndefined();
    expect(optionalChainAddress(LOWER, "paymaster")).toBe(CHECKSUMMED);
  });

  it("refuses a malformed address naming the field, the value and the rule", () => {
    for (const bad of ["0x123", "5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", `${LOWER}00`, 42, null]) {
      const error = refusal(() => chainAddress(bad, "body.to"));
      expect(isValueError(error, ValueErrorCode.INVALID_ADDRESS)).toBe(true);
      expect((error as Error).message).toContain("body.to");
      expect((error as { details: Record<string, unknown> }).details).toMatchObject({
        field: "body.to",
        value: String(bad),
        rule: "0x followed by 40 hex digits",
      });
    }
  });

  it("compares across case, and stores the lowercase text", () => {
    expect(sameAddress(LOWER, CHECKSUMMED)).toBe(true);
    expect(sameAddress(LOWER, "0x0000000000000000000000000000000000000001")).toBe(false);
    expect(addressKey(CHECKSUMMED)).toBe(LOWER);
  });

  it("decodes to the checksummed brand through the codec, and keeps a verbatim field's text", () => {
    expect(chainAddressSchema().parse(LOWER)).toBe(CHECKSUMMED);
    expect(chainAddressSchema("must be the entry point").safeParse("0x12").error?.issues[0]?.message).toBe(
      "must be the entry point",
    );
    expect(addressTextSchema().parse(LOWER)).toBe(LOWER);
    expect(addressTextSchema().safeParse("nope").success).toBe(false);
  });

  it("checks hex data read back, naming the field", () => {
    expect(hexData("0x", "data")).toBe("0x");
    expect(hexData("0xabCD", "data")).toBe("0xabCD");
    const error = refusal(() => hexData("0xabc", "record.signed"));
    expect(isValueError(error)).toBe(true);
    expect((error as Error).message).toContain("record.signed");
  });
});
