/**
 * What PostgreSQL can store, decided once, before a row is written (docs/engine.md, "What
 * PostgreSQL can store"). Every value Tenor keeps goes into a `text` or `jsonb` column as UTF-8:
 *
 * - U+0000 cannot be stored in either (SQLSTATE 22P05);
 * - a lone UTF-16 surrogate has no UTF-8 form: jsonb refuses its escape (22P02) and a text column
 *   would silently receive U+FFFD in its place;
 * - a number JSON cannot hold (NaN, Infinity), a bigint or a function is not a JSON value;
 * - a value past the configured size would be refused by the server or make the row unreadable.
 *
 * The engine refuses such a value with one typed outcome the body sees, the API answers 400 naming
 * the field, and a failure record is stored with the offending characters escaped (`escapeUnstorable`).
 */

export type UnstorableRule = "nul-character" | "lone-surrogate" | "not-json" | "too-large";

/** Where a value breaks the rule, and which rule it breaks. */
export interface Unstorable {
  /** Dotted path from the value's root (`""` for the value itself; `items.0.name`). */
  path: string;
  rule: UnstorableRule;
  /** The rule in words, for error messages: "contains U+0000, which PostgreSQL cannot store". */
  reason: string;
}

/** Default bound of one stored value, in bytes of its JSON (`durable.maxStoredValueBytes`). */
export const DEFAULT_MAX_STORED_VALUE_BYTES = 8 * 1024 * 1024;

declare global {
  interface String {
    /** ES2024, present in Node ≥ 20: false when the string holds a lone surrogate. */
    isWellFormed(): boolean;
  }
}

const REASONS: Record<UnstorableRule, string> = {
  "nul-character": "contains the character U+0000, which PostgreSQL cannot store",
  "lone-surrogate": "contains a lone UTF-16 surrogate, which has no UTF-8 form PostgreSQL can store",
  "not-json": "is not a JSON value",
  "too-large": "is larger than the stored value limit",
};

function stringRule(text: string): UnstorableRule | null {
  if (text.includes("\u0000")) return "nul-character";
  if (!text.isWellFormed()) return "lone-surrogate";
  return null;
}

/** True when PostgreSQL can store `text` as it is (no U+0000, no lone surrogate). */
export function isStorableText(text: string): boolean {
  return stringRule(text) === null;
}

function joinPath(base: string, key: string | number): string {
  return base === "" ? String(key) : `${base}.${key}`;
}

/**
 * The first place `value` breaks what PostgreSQL can store, or null. Checks every string and
 * object key; with `maxBytes`, also the size of the value's JSON (measured exactly only when a
 * cheap upper bound exceeds it, so ordinary values cost one walk).
 */
export function findUnstorable(value: unknown, options: { maxBytes?: number } = {}): Unstorable | null {
  const budget = { bound: 0 };
  const found = walk(value, "", budget, new Set());
  if (found) return found;
  const { maxBytes } = options;
  // A UTF-16 unit is at most 3 UTF-8 bytes, or 6 when JSON escapes it (control characters).
  if (maxBytes !== undefined && budget.bound * 6 > maxBytes) {
    const bytes = Buffer.byteLength(JSON.stringify(value) ?? "null", "utf8");
    if (bytes > maxBytes) {
      return {
        path: "",
        rule: "too-large",
        reason: `is ${bytes} bytes as JSON, larger than the stored value limit of ${maxBytes} bytes`,
      };
    }
  }
  return null;
}

function walk(value: unknown, path: string, budget: { bound: number }, seen: Set<object>): Unstorable | null {
  switch (typeof value) {
    case "string": {
      budget.bound += value.length + 2;
      const rule = stringRule(value);
      return rule ? { path, rule, reason: REASONS[rule] } : null;
    }
    case "number":
      budget.bound += 24;
      return Number.isFinite(value)
        ? null
        : { path, rule: "not-json", reason: `is ${value}, not a JSON number` };
    case "boolean":
    case "undefined":
      budget.bound += 5;
      return null;
    case "bigint":
    case "symbol":
    case "function":
      return { path, rule: "not-json", reason: `is a ${typeof value}, not a JSON value` };
    default:
      break;
  }
  if (value === null) {
    budget.bound += 4;
    return null;
  }
  const object = value as object & { toJSON?: () => unknown };
  if (typeof object.toJSON === "function") return walk(object.toJSON(), path, budget, seen);
  if (seen.has(object)) return { path, rule: "not-json", reason: "refers to itself, which JSON cannot hold" };
  seen.add(object);
  try {
    if (Array.isArray(object)) {
      for (let i = 0; i < object.length; i++) {
        budget.bound += 1;
        const found = walk(object[i], joinPath(path, i), budget, seen);
        if (found) return found;
      }
      return null;
    }
    for (const [key, item] of Object.entries(object)) {
      budget.bound += key.length + 4;
      const keyRule = stringRule(key);
      if (keyRule) {
        return {
          path: joinPath(path, key),
          rule: keyRule,
          reason: `has a field name that ${REASONS[keyRule]}`,
        };
      }
      const found = walk(item, joinPath(path, key), budget, seen);
      if (found) return found;
    }
    return null;
  } finally {
    seen.delete(object);
  }
}

/** `text` with U+0000 and lone surrogates written out as visible `\u0000` / `\udc00` escapes. */
export function escapeText(text: string): string {
  if (stringRule(text) === null) return text;
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit === 0) {
      out += "\\u0000";
    } else if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        out += text.slice(i, i + 2);
        i++;
      } else {
        out += `\\u${unit.toString(16)}`;
      }
    } else if (unit >= 0xdc00 && unit <= 0xdfff) {
      out += `\\u${unit.toString(16)}`;
    } else {
      out += text[i];
    }
  }
  return out;
}

/**
 * A copy of a JSON value that PostgreSQL can store: offending characters in strings and keys
 * escaped as visible text, non-JSON values replaced by a description. `escaped` lists the paths
 * that changed, so a record can say that it was stored so.
 */
export function escapeUnstorable(value: unknown): { value: unknown; escaped: string[] } {
  const escaped: string[] = [];
  const copy = (item: unknown, path: string, seen: Set<object>): unknown => {
    if (typeof item === "string") {
      const text = escapeText(item);
      if (text !== item) escaped.push(path);
      return text;
    }
    if (typeof item === "number" && !Number.isFinite(item)) {
      escaped.push(path);
      return String(item);
    }
    if (typeof item === "bigint") {
      escaped.push(path);
      return item.toString();
    }
    if (typeof item === "symbol" || typeof item === "function") {
      escaped.push(path);
      return `[${typeof item}]`;
    }
    if (item === null || typeof item !== "object") return item;
    const object = item as object & { toJSON?: () => unknown };
    if (typeof object.toJSON === "function") return copy(object.toJSON(), path, seen);
    if (seen.has(object)) {
      escaped.push(path);
      return "[circular]";
    }
    seen.add(object);
    try {
      if (Array.isArray(object)) return object.map((entry, i) => copy(entry, joinPath(path, i), seen));
      const out: Record<string, unknown> = {};
      for (const [key, entry] of Object.entries(object)) {
        const safeKey = escapeText(key);
        if (safeKey !== key) escaped.push(joinPath(path, key));
        out[safeKey] = copy(entry, joinPath(path, safeKey), seen);
      }
      return out;
    } finally {
      seen.delete(object);
    }
  };
  return { value: copy(value, "", new Set()), escaped };
}

/** `path` as shown in messages: `$` for the root, `$.items.0.name` below it. */
export function describePath(path: string): string {
  return path === "" ? "$" : `$.${path}`;
}
