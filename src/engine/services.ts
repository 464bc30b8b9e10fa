import { TenorError } from "../errors/tenor-error.js";
import { ENGINE_ERRORS } from "./error-codes.js";

/**
 * What workflow and activity code reaches outside the journal (chain clients, read models,
 * stores) is a *service*: a typed key, declared by the definitions that use it and provided once
 * per runner, from its connections, in a ServiceSet. The runner refuses to start when a registered
 * definition declares a service the set does not provide, so a step never meets a missing one.
 */
export interface ServiceKey<T> {
  readonly kind: "service";
  /** Stable name, for messages: lowercase, dot-separated (for example "chain.access"). */
  readonly name: string;
  /** Carries T for the type checker only; never set. */
  readonly __type?: (value: T) => T;
}

// biome-ignore lint/suspicious/noExplicitAny: a list of keys of different service types must erase them.
export type AnyServiceKey = ServiceKey<any>;

/** Defines a service key. Keys are compared by name: one name, one service. */
export function defineService<T>(name: string): ServiceKey<T> {
  return Object.freeze({ kind: "service" as const, name });
}

/** One service and the value a runner provides for it. */
export interface ServiceProvision {
  readonly key: AnyServiceKey;
  readonly value: unknown;
}

export function provide<T>(key: ServiceKey<T>, value: T): ServiceProvision {
  return { key, value };
}

/** What a definition may declare: the services its code uses. */
export interface ServiceUser {
  /** "workflow", "activity", "schedule": how messages name the definition. */
  readonly kind?: string;
  readonly name: string;
  readonly version?: number;
  readonly services?: readonly AnyServiceKey[];
}

/** The services one runner provides, built once from its connections. */
export class ServiceSet {
  static readonly empty = new ServiceSet([]);
  private readonly byName = new Map<string, unknown>();

  constructor(provisions: readonly ServiceProvision[]) {
    for (const { key, value } of provisions) {
      if (this.byName.has(key.name)) {
        throw new TenorError(ENGINE_ERRORS.SERVICE_PROVIDED_TWICE, `service ${key.name} is provided twice`, {
          details: { service: key.name },
        });
      }
      this.byName.set(key.name, value);
    }
  }

  has(key: AnyServiceKey): boolean {
    return this.byName.has(key.name);
  }

  get<T>(key: ServiceKey<T>): T | undefined {
    return this.byName.get(key.name) as T | undefined;
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  /**
   * Refuses (SERVICE_MISSING) when a definition declares a service this set does not provide,
   * naming every such definition and service: the runner must not start without them.
   */
  assertProvides(definitions: readonly ServiceUser[]): void {
    const missing = definitions.flatMap((definition) =>
      (definition.services ?? [])
        .filter((key) => !this.has(key))
        .map((key) => ({
          kind: definition.kind ?? "definition",
          name: label(definition),
          service: key.name,
        })),
    );
    if (missing.length === 0) return;
    const listed = missing.map((m) => `${m.kind} ${m.name} needs ${m.service}`).join("; ");
    throw new TenorError(
      ENGINE_ERRORS.SERVICE_MISSING,
      `services declared but not provided by this runner: ${listed}; provided: ${this.names().join(", ") || "(none)"}`,
      { details: { missing, provided: this.names() } },
    );
  }
}

function label(definition: ServiceUser): string {
  return definition.version === undefined ? definition.name : `${definition.name}@${definition.version}`;
}

/** What a context offers its code: the services its definition declared, typed by their keys. */
export interface ServiceLookup {
  service<T>(key: ServiceKey<T>): T;
}

/**
 * The lookup of one definition's context. An undeclared key is a programming error
 * (SERVICE_NOT_DECLARED, never retried), so a declaration cannot be forgotten silently; a declared
 * key the set lacks (a dry replay, a process that skipped the startup check) is retryable
 * (SERVICE_UNAVAILABLE): the execution suspends and resumes on a runner that provides it.
 */
export function serviceLookup(noun: string, definition: ServiceUser, services: ServiceSet): ServiceLookup {
  const declared = declaredNames(definition);
  return {
    service<T>(key: ServiceKey<T>): T {
      if (!declared.has(key.name)) {
        throw new TenorError(
          ENGINE_ERRORS.SERVICE_NOT_DECLARED,
          `${noun} ${label(definition)} uses service ${key.name} without declaring it in its services`,
          { details: { [noun]: definition.name, service: key.name } },
        );
      }
      if (!services.has(key)) {
        throw new TenorError(
          ENGINE_ERRORS.SERVICE_UNAVAILABLE,
          `service ${key.name} is not provided in this process (runner role only)`,
          { retryable: true, details: { [noun]: definition.name, service: key.name } },
        );
      }
      return services.get(key) as T;
    },
  };
}

/** Each definition's declared service names, worked out once: a lookup is made on every turn. */
const DECLARED = new WeakMap<ServiceUser, ReadonlySet<string>>();

function declaredNames(definition: ServiceUser): ReadonlySet<string> {
  let names = DECLARED.get(definition);
  if (!names) {
    names = new Set((definition.services ?? []).map((key) => key.name));
    DECLARED.set(definition, names);
  }
  return names;
}
