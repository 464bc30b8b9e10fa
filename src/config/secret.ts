import { readFileSync } from "node:fs";
import { inspect } from "node:util";
import type { SecretSource } from "./chains-schema.js";
import { ConfigError } from "./config-error.js";

/**
 * A secret value (a private key, an API key) that never reaches a log line: `String()`,
 * `JSON.stringify` and `util.inspect` all print `[secret <source>]`. Only `reveal()` returns it.
 */
export class Secret {
  readonly #value: string;
  /** Where it came from, e.g. `env:TENOR_SIGNER_KEY`; safe to log. */
  readonly source: string;

  constructor(value: string, source: string) {
    this.#value = value;
    this.source = source;
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return `[secret ${this.source}]`;
  }

  toJSON(): string {
    return this.toString();
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

export interface SecretReadOptions {
  env: Readonly<Record<string, string | undefined>>;
  readFile?: (path: string) => string;
}

/**
 * Reads a configured secret at the composition root. A missing variable, an unreadable file or an
 * empty value is a ConfigError naming the key and the source (never the value): a secret is never
 * defaulted. Surrounding whitespace (a file's final newline) is trimmed.
 */
export function readSecret(key: string, source: SecretSource, options: SecretReadOptions): Secret {
  let raw: string | undefined;
  let described: string;
  if ("env" in source) {
    described = `env:${source.env}`;
    raw = options.env[source.env];
  } else {
    described = `file:${source.file}`;
    try {
      raw = (options.readFile ?? ((p: string) => readFileSync(p, "utf8")))(source.file);
    } catch (error) {
      throw new ConfigError([
        { key, value: described, rule: `must name a readable file (${(error as Error).message})` },
      ]);
    }
  }
  const value = raw?.trim() ?? "";
  if (value === "") {
    // The value of a secret-named key is redacted in every config error; the rule names the source.
    throw new ConfigError([
      { key, value: described, rule: `must be set and non-empty (read from ${described})` },
    ]);
  }
  return new Secret(value, described);
}
