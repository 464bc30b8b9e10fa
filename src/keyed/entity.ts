import type { QueryResult, QueryResultRow } from "pg";
import type { z } from "zod";
import { DEFINITION_NAME_PATTERN, DeclaredDefinitions } from "../engine/definitions.js";
import { TenorError } from "../errors/tenor-error.js";
import { KEYED_ERRORS } from "./error-codes.js";

/**
 * What a command handler sees. It runs inside the PostgreSQL transaction that records its reply
 * (and the key's new state), so a reply is never recorded without its effects or the reverse.
 */
export interface EntityContext<S> {
  readonly entity: string;
  readonly command: string;
  readonly key: string;
  /** The caller's idempotency id: a redelivered command carries the same one. */
  readonly commandId: string;
  /** The key's state after every earlier command of that key (the entity's `state.initial()` at first). */
  readonly state: S;
  /** Replaces the key's state; written with the reply, discarded when the handler throws. */
  setState(next: S): void;
  /**
   * Runs SQL in the command's transaction (under a savepoint: a handler that throws rolls back
   * its own writes only). For domain tables whose constraints fence the command (nonces).
   */
  query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]): Promise<QueryResult<R>>;
}

/** One command of an entity: its input and output schemas (codecs) and its handler. */
export interface EntityCommand<S, I extends z.ZodType, O extends z.ZodType> {
  input: I;
  output: O;
  /**
   * Handles one command; commands of one key never overlap (beyond the entity's limit). Throwing
   * a BusinessError (or a non-retryable TenorError) refuses the command: the caller gets that
   * error. Anything else is transient: the command is retried, up to `maxAttempts`.
   */
  handle(ctx: EntityContext<S>, input: z.output<I>): Promise<z.output<O>>;
}

// biome-ignore lint/suspicious/noExplicitAny: a record of handlers must erase their schemas to constrain them.
type AnyCommand<S> = EntityCommand<S, any, any>;

export interface EntitySpec<S, H extends Record<string, AnyCommand<S>>> {
  /** Stable name, like a workflow's: lowercase, dot-separated (`chain.nonce`). */
  name: string;
  /** The key a command belongs to; commands of one key run in arrival order, `limit` at a time. */
  key: (input: z.output<H[keyof H]["input"]>, command: keyof H & string) => string;
  /** Most commands of one key in flight at once. Default 1; an entity with `state` must keep 1. */
  limit?: number;
  /** Per-key state, loaded and saved in the transaction of each command. */
  state?: { schema: z.ZodType<S>; initial: () => S };
  /** Transient failures of one command before it fails with COMMAND_ATTEMPTS_EXHAUSTED. Default 5. */
  maxAttempts?: number;
  handlers: { [K in keyof H]: H[K] & EntityCommand<S, H[K]["input"], H[K]["output"]> };
}

export interface EntityDefinition<
  S = unknown,
  H extends Record<string, AnyCommand<S>> = Record<string, AnyCommand<S>>,
> {
  readonly kind: "entity";
  readonly name: string;
  readonly key: EntitySpec<S, H>["key"];
  readonly limit: number;
  readonly state: { schema: z.ZodType<S>; initial: () => S } | null;
  readonly maxAttempts: number;
  readonly handlers: H;
}

// biome-ignore lint/suspicious/noExplicitAny: registries and clients hold entities of any state and handlers.
export type AnyEntity = EntityDefinition<any, any>;

/** The decoded input type of command `C` of entity `E`. */
export type CommandInput<E extends AnyEntity, C extends keyof E["handlers"]> = z.output<
  E["handlers"][C]["input"]
>;
/** The decoded reply type of command `C` of entity `E`. */
export type CommandOutput<E extends AnyEntity, C extends keyof E["handlers"]> = z.output<
  E["handlers"][C]["output"]
>;

/** The entity name keyed workflow admissions use; not a valid entity name, so it never collides. */
export const WORKFLOW_ADMISSIONS = "@workflow";

/** Every entity defined in this process (see DeclaredDefinitions). */
export const declaredEntities = new DeclaredDefinitions<AnyEntity>();

/** Defines a keyed entity (docs/keyed.md). Validates at once; the result is frozen. */
export function defineEntity<S, H extends Record<string, AnyCommand<S>>>(
  spec: EntitySpec<S, H>,
): EntityDefinition<S, H> {
  const invalid = (field: string, message: string): never => {
    throw new TenorError(KEYED_ERRORS.ENTITY_DEFINITION_INVALID, `entity ${spec.name}: ${message}`, {
      details: { entity: spec.name, field },
    });
  };
  if (!DEFINITION_NAME_PATTERN.test(spec.name))
    invalid("name", `name must match ${DEFINITION_NAME_PATTERN} (for example "chain.nonce")`);
  const limit = spec.limit ?? 1;
  if (!Number.isInteger(limit) || limit < 1)
    invalid("limit", `limit ${String(limit)} must be an integer ≥ 1`);
  if (spec.state && limit !== 1) invalid("limit", "an entity with state must have limit 1");
  const maxAttempts = spec.maxAttempts ?? 5;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) invalid("maxAttempts", "maxAttempts must be ≥ 1");
  const commands = Object.keys(spec.handlers);
  if (commands.length === 0) invalid("handlers", "needs at least one handler");
  for (const command of commands) {
    if (!/^[a-zA-Z][a-zA-Z0-9_-]*$/.test(command)) invalid("handlers", `command name ${command} is invalid`);
  }
  const definition: EntityDefinition<S, H> = Object.freeze({
    kind: "entity" as const,
    name: spec.name,
    key: spec.key,
    limit,
    state: spec.state ?? null,
    maxAttempts,
    handlers: Object.freeze({ ...spec.handlers }) as H,
  });
  declaredEntities.add(definition);
  return definition;
}
