import { parseDecimalTextAtOwnScale, parseIntegerText } from "./decimal-text.js";
import { ValueError, ValueErrorCode } from "./errors.js";
import { assertScale } from "./rounding.js";

/**
 * The versioned table of every shape the journal has ever held for a value, newest first. The
 * journal decoders try each entry in order; the first whose `claims` matches reads the record,
 * and the decoder then checks the parts against its context (asset or chain). Encoders only ever
 * write `JOURNAL_VALUE_VERSION`. Never edit or remove an entry: recorded histories depend on it.
 *
 * | kind      | v | shape                                  | context supplies |
 * |-----------|---|----------------------------------------|------------------|
 * | token     | 2 | "tok:v2:<assetId>:<decimals>:<units>"  | nothing (checked) |
 * | token     | 1 | { "value": "<units>", "decimals": n }  | asset id         |
 * | token     | 0 | "<units>"                              | asset            |
 * | native    | 2 | "nat:v2:<chainId>:<wei>"               | nothing (checked) |
 * | native    | 1 | { "value": "<wei>", "decimals": n }    | chain id         |
 * | native    | 0 | "<wei>"                                | chain            |
 * | gas-price | 2 | "gas:v2:<chainId>:<weiPerGas>"         | nothing (checked) |
 * | gas-price | 0 | "<weiPerGas>"                          | chain            |
 * | decimal   | 2 | "dec:v2:<scale>:<coefficient>"         | nothing          |
 * | decimal   | 1 | { "value": "<coefficient>", "decimals": scale } | nothing |
 * | decimal   | 0 | "<decimal string>" (scale = digits written) | nothing     |
 */
export const JOURNAL_VALUE_VERSION = 2;

/** The value kinds the journal records. */
export type JournalKind = "token" | "native" | "gas-price" | "decimal";

/** What a recorded shape holds; absent fields come from the decoder's context. */
export interface JournalParts {
  /** Base units, wei, wei per gas, or the decimal coefficient. */
  readonly units: bigint;
  /** Decimals of the asset or native currency, or the decimal's scale. */
  readonly scale?: number;
  readonly assetId?: string;
  readonly chainId?: number;
}

/** One row of the table. */
export interface JournalShape {
  readonly kind: JournalKind;
  readonly version: number;
  /** The shape as documented above. */
  readonly shape: string;
  /** Cheap structural test: does this record look like this shape at all? */
  readonly claims: (record: unknown) => boolean;
  /** Reads a claimed record; fails with a precise `VALUE_*` error when it is malformed. */
  readonly read: (record: unknown) => JournalParts;
}

const TAG = { token: "tok", native: "nat", "gas-price": "gas", decimal: "dec" } as const;

const isObject = (record: unknown): record is Record<string, unknown> =>
  typeof record === "object" && record !== null && !Array.isArray(record);

const isTagged = (kind: JournalKind) => (record: unknown) =>
  typeof record === "string" && record.startsWith(`${TAG[kind]}:`);

const isBareString = (record: unknown) => typeof record === "string" && !record.includes(":");

const isValueDecimalsObject = (record: unknown) => isObject(record) && "value" in record;

function units(text: unknown, kind: JournalKind): bigint {
  const signed = kind === "token" || kind === "decimal";
  return parseIntegerText(text, { what: `journal ${kind} units`, allowNegative: signed });
}

/** Splits "tag:v2:…" into its fields, refusing any other version. */
function taggedFields(record: unknown, kind: JournalKind, fieldCount: number): string[] {
  const text = String(record);
  const [, version] = text.split(":", 2);
  if (version !== `v${JOURNAL_VALUE_VERSION}`) {
    throw unknownShape(kind, record, `version ${version ?? "(none)"} is not one this reader knows`);
  }
  // Split from the right: an asset id may itself contain ':'.
  const rest = text.slice(TAG[kind].length + 4);
  const parts = rest.split(":");
  const tail = parts.splice(Math.max(1, parts.length - (fieldCount - 1)));
  const head = parts.join(":");
  if (tail.length !== fieldCount - 1 || head === "") {
    throw unknownShape(kind, record, `expected ${fieldCount} fields after "${TAG[kind]}:v2:"`);
  }
  return [head, ...tail];
}

function smallInteger(text: string | undefined, kind: JournalKind, record: unknown, what: string): number {
  if (text === undefined || !/^(0|[1-9][0-9]{0,15})$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw unknownShape(kind, record, `${what} "${text}" is not a canonical non-negative integer`);
  }
  return Number(text);
}

function readValueDecimals(record: unknown, kind: JournalKind): JournalParts {
  const object = record as Record<string, unknown>;
  const extra = Object.keys(object).filter((key) => key !== "value" && key !== "decimals");
  if (extra.length > 0) throw unknownShape(kind, record, `unexpected keys ${extra.join(", ")}`);
  assertScale(object.decimals, `journal ${kind} decimals`);
  return { units: units(object.value, kind), scale: object.decimals };
}

function unknownShape(kind: JournalKind, record: unknown, reason: string): ValueError {
  const shown = typeof record === "string" ? record : (JSON.stringify(record) ?? String(record));
  return new ValueError(
    ValueErrorCode.UNKNOWN_JOURNAL_SHAPE,
    `journal ${kind} record ${shown.slice(0, 200)} matches no known shape: ${reason}`,
    { kind, reason },
  );
}

/** The full table, newest version first within each kind. */
export const JOURNAL_SHAPES: readonly JournalShape[] = [
  {
    kind: "token",
    version: 2,
    shape: '"tok:v2:<assetId>:<decimals>:<units>"',
    claims: isTagged("token"),
    read: (record) => {
      const [assetId, decimals, value] = taggedFields(record, "token", 3);
      return {
        assetId,
        scale: smallInteger(decimals, "token", record, "decimals"),
        units: units(value, "token"),
      };
    },
  },
  {
    kind: "token",
    version: 1,
    shape: '{ "value": "<units>", "decimals": n }',
    claims: isValueDecimalsObject,
    read: (r) => readValueDecimals(r, "token"),
  },
  {
    kind: "token",
    version: 0,
    shape: '"<units>"',
    claims: isBareString,
    read: (r) => ({ units: units(r, "token") }),
  },
  {
    kind: "native",
    version: 2,
    shape: '"nat:v2:<chainId>:<wei>"',
    claims: isTagged("native"),
    read: (record) => {
      const [chainId, value] = taggedFields(record, "native", 2);
      return { chainId: smallInteger(chainId, "native", record, "chain id"), units: units(value, "native") };
    },
  },
  {
    kind: "native",
    version: 1,
    shape: '{ "value": "<wei>", "decimals": n }',
    claims: isValueDecimalsObject,
    read: (r) => readValueDecimals(r, "native"),
  },
  {
    kind: "native",
    version: 0,
    shape: '"<wei>"',
    claims: isBareString,
    read: (r) => ({ units: units(r, "native") }),
  },
  {
    kind: "gas-price",
    version: 2,
    shape: '"gas:v2:<chainId>:<weiPerGas>"',
    claims: isTagged("gas-price"),
    read: (record) => {
      const [chainId, value] = taggedFields(record, "gas-price", 2);
      return {
        chainId: smallInteger(chainId, "gas-price", record, "chain id"),
        units: units(value, "gas-price"),
      };
    },
  },
  {
    kind: "gas-price",
    version: 0,
    shape: '"<weiPerGas>"',
    claims: isBareString,
    read: (r) => ({ units: units(r, "gas-price") }),
  },
  {
    kind: "decimal",
    version: 2,
    shape: '"dec:v2:<scale>:<coefficient>"',
    claims: isTagged("decimal"),
    read: (record) => {
      const [scale, value] = taggedFields(record, "decimal", 2);
      return { scale: smallInteger(scale, "decimal", record, "scale"), units: units(value, "decimal") };
    },
  },
  {
    kind: "decimal",
    version: 1,
    shape: '{ "value": "<coefficient>", "decimals": scale }',
    claims: isValueDecimalsObject,
    read: (r) => readValueDecimals(r, "decimal"),
  },
  {
    kind: "decimal",
    version: 0,
    shape: '"<decimal string>"',
    claims: isBareString,
    read: (record) => {
      const { coefficient, scale } = parseDecimalTextAtOwnScale(record, {
        what: "journal decimal",
        allowNegative: true,
      });
      return { units: coefficient, scale };
    },
  },
];

/**
 * Reads `record` with the first table row of `kind` that claims it. Fails with
 * `VALUE_UNKNOWN_JOURNAL_SHAPE` when no row does, or with the row's precise error.
 */
export function readJournalRecord(kind: JournalKind, record: unknown): JournalParts & { version: number } {
  const row = JOURNAL_SHAPES.find((candidate) => candidate.kind === kind && candidate.claims(record));
  if (row === undefined) throw unknownShape(kind, record, "expected one of the shapes in JOURNAL_SHAPES");
  return { ...row.read(record), version: row.version };
}

/** Writes the current (v2) tagged string from its fields. */
export function writeJournalRecord(kind: JournalKind, fields: readonly (string | number | bigint)[]): string {
  return [TAG[kind], `v${JOURNAL_VALUE_VERSION}`, ...fields.map(String)].join(":");
}
