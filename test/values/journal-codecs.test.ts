import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { decimalCoefficient, decimalFromCoefficient } from "../../src/values/decimal.js";
import { gasPriceFromWei, gasPriceWeiPerGas } from "../../src/values/gas-price.js";
import {
  decimalJournal,
  defineAsset,
  gasPriceJournal,
  JOURNAL_SHAPES,
  type JournalKind,
  nativeValueJournal,
  TokenAmount,
  tokenAmountJournal,
  ValueErrorCode,
} from "../../src/values/index.js";
import { readJournalRecord } from "../../src/values/journal-shapes.js";
import { nativeValueFromWei, nativeWei } from "../../src/values/native-value.js";
import { tokenAmountFromUnits, tokenUnits } from "../../src/values/token-amount.js";
import recorded from "./fixtures/journal-shapes.json" with { type: "json" };
import { assetArb, dai, issueCode, mainnet, polygon, signed, unsigned, usdc, wbtc } from "./support.js";

const contexts = {
  usdc,
  wbtc,
  dai: defineAsset({ id: "dai", decimals: 18, symbol: "DAI" }),
  mainnet,
  polygon,
};

type Fixture = (typeof recorded.records)[number];

/** Decodes a fixture with the codec for its kind and context, then re-encodes it. */
function upgrade(fixture: Fixture): unknown {
  const context = fixture.context === null ? null : contexts[fixture.context as keyof typeof contexts];
  switch (fixture.kind as JournalKind) {
    case "token": {
      const codec = tokenAmountJournal(context as typeof usdc);
      return z.encode(codec, codec.parse(fixture.recorded));
    }
    case "native": {
      const codec = nativeValueJournal(context as typeof mainnet);
      return z.encode(codec, codec.parse(fixture.recorded));
    }
    case "gas-price": {
      const codec = gasPriceJournal(context as typeof mainnet);
      return z.encode(codec, codec.parse(fixture.recorded));
    }
    case "decimal": {
      const codec = decimalJournal();
      return z.encode(codec, codec.parse(fixture.recorded));
    }
  }
}

describe("recorded journal fixtures", () => {
  it("cover every shape in the versioned table", () => {
    const covered = new Set(recorded.records.map((fixture) => `${fixture.kind}@${fixture.version}`));
    for (const shape of JOURNAL_SHAPES) expect(covered).toContain(`${shape.kind}@${shape.version}`);
  });

  for (const fixture of recorded.records) {
    it(`${fixture.kind} v${fixture.version} ${JSON.stringify(fixture.recorded).slice(0, 50)} reads as that version and is rewritten canonically`, () => {
      expect(readJournalRecord(fixture.kind as JournalKind, fixture.recorded).version).toBe(fixture.version);
      expect(upgrade(fixture)).toBe(fixture.canonical);
    });
  }
});

describe("journal round trips", () => {
  it("token amounts of any asset, sign included", () => {
    fc.assert(
      fc.property(assetArb, signed, (asset, units) => {
        const codec = tokenAmountJournal(asset);
        const record = z.encode(codec, tokenAmountFromUnits(asset, units, { allowNegative: true }));
        expect(record).toBe(`tok:v2:${asset.id}:${asset.decimals}:${units}`);
        expect(tokenUnits(codec.parse(record))).toBe(units);
        expect(codec.parse(JSON.parse(JSON.stringify(record))).asset.id).toBe(asset.id);
      }),
    );
  });

  it("native values, gas prices and decimals", () => {
    fc.assert(
      fc.property(unsigned, signed, fc.integer({ min: 0, max: 36 }), (wei, coefficient, scale) => {
        const native = nativeValueJournal(polygon);
        expect(nativeWei(native.parse(z.encode(native, nativeValueFromWei(polygon, wei))))).toBe(wei);
        const gas = gasPriceJournal(mainnet);
        expect(gasPriceWeiPerGas(gas.parse(z.encode(gas, gasPriceFromWei(mainnet, wei))))).toBe(wei);
        const decimal = decimalJournal();
        const back = decimal.parse(z.encode(decimal, decimalFromCoefficient(coefficient, scale)));
        expect([decimalCoefficient(back), back.scale]).toEqual([coefficient, scale]);
      }),
    );
  });

  it("older shapes of random values upgrade to the canonical one", () => {
    fc.assert(
      fc.property(signed, (units) => {
        const codec = tokenAmountJournal(usdc);
        const canonical = `tok:v2:${usdc.id}:6:${units}`;
        expect(z.encode(codec, codec.parse(units.toString()))).toBe(canonical);
        expect(z.encode(codec, codec.parse({ value: units.toString(), decimals: 6 }))).toBe(canonical);
      }),
    );
  });
});

describe("journal refusals", () => {
  const usdcJournal = tokenAmountJournal(usdc);

  it("refuses a record of another asset, scale or chain", () => {
    expect(issueCode(usdcJournal.safeParse(`tok:v2:${dai.id}:18:1`))).toBe(ValueErrorCode.ASSET_MISMATCH);
    expect(issueCode(usdcJournal.safeParse(`tok:v2:${usdc.id}:18:1`))).toBe(ValueErrorCode.SCALE_MISMATCH);
    expect(issueCode(usdcJournal.safeParse({ value: "1", decimals: 18 }))).toBe(
      ValueErrorCode.SCALE_MISMATCH,
    );
    expect(issueCode(nativeValueJournal(mainnet).safeParse("nat:v2:137:1"))).toBe(
      ValueErrorCode.CHAIN_MISMATCH,
    );
    expect(issueCode(gasPriceJournal(polygon).safeParse("gas:v2:1:1"))).toBe(ValueErrorCode.CHAIN_MISMATCH);
    expect(issueCode(nativeValueJournal(mainnet).safeParse({ value: "1", decimals: 9 }))).toBe(
      ValueErrorCode.SCALE_MISMATCH,
    );
  });

  it("refuses shapes outside the table, including newer versions", () => {
    for (const record of [5, null, [], { amount: "1" }, "tok:v3:usdc:6:1", "tok:", "nat:v2:1:1", true]) {
      expect(issueCode(usdcJournal.safeParse(record))).toBe(ValueErrorCode.UNKNOWN_JOURNAL_SHAPE);
    }
    expect(issueCode(usdcJournal.safeParse({ value: "1", decimals: 6, extra: 1 }))).toBe(
      ValueErrorCode.UNKNOWN_JOURNAL_SHAPE,
    );
    expect(issueCode(usdcJournal.safeParse(`tok:v2:${usdc.id}:06:1`))).toBe(
      ValueErrorCode.UNKNOWN_JOURNAL_SHAPE,
    );
  });

  it("refuses malformed fields inside a recognised shape with their own code", () => {
    expect(issueCode(usdcJournal.safeParse("1.5"))).toBe(ValueErrorCode.INVALID_INTEGER);
    expect(issueCode(usdcJournal.safeParse({ value: 1, decimals: 6 }))).toBe(ValueErrorCode.WRONG_TYPE);
    expect(issueCode(usdcJournal.safeParse({ value: "1", decimals: "6" }))).toBe(
      ValueErrorCode.INVALID_SCALE,
    );
    expect(issueCode(usdcJournal.safeParse(`tok:v2:${usdc.id}:6:01`))).toBe(ValueErrorCode.INVALID_INTEGER);
    expect(issueCode(nativeValueJournal(mainnet).safeParse("-1"))).toBe(ValueErrorCode.NEGATIVE);
  });

  it("refuses to write an amount of another asset", () => {
    const daiAmount = TokenAmount.parse(dai, "1") as never;
    expect(issueCode(z.safeEncode(usdcJournal, daiAmount))).toBe(ValueErrorCode.ASSET_MISMATCH);
  });

  it("keeps asset ids that contain colons unambiguous", () => {
    const tricky = defineAsset({ id: "a:6:7", decimals: 6, symbol: "T" });
    const codec = tokenAmountJournal(tricky);
    const record = z.encode(codec, tokenAmountFromUnits(tricky, 8n));
    expect(record).toBe("tok:v2:a:6:7:6:8");
    expect(tokenUnits(codec.parse(record))).toBe(8n);
  });
});
