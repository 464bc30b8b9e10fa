import type { TenorErrorCode } from "../errors/error-code-registry.js";
import { TenorError } from "../errors/tenor-error.js";

/**
 * Workflows, activities and keyed entities share one shape: a module *declares* a definition
 * (defineWorkflow, defineActivity, defineEntity) and a runner *registers* the ones it serves.
 * This module holds that shape once: the names a definition may have, the record of what this
 * process declared, and the registry a role builds before any startup work.
 */

/** Workflow, activity and entity names: lowercase, dot-separated words (for example "asset.create"). */
export const DEFINITION_NAME_PATTERN = /^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)*$/;

/** What every definition has; workflows also carry a version (the others are version 1). */
export interface Definition {
  readonly name: string;
  readonly version?: number;
}

/** How one kind of definition is named in messages and which codes its refusals carry. */
export interface DefinitionKind {
  /** Singular and plural, for messages: "workflow" / "workflows". */
  noun: string;
  plural: string;
  codes: { duplicate: TenorErrorCode; unknown: TenorErrorCode; notRegistered: TenorErrorCode };
}

function versionOf(definition: Definition): number {
  return definition.version ?? 1;
}

/**
 * The definitions of one kind declared in this process (their modules were imported), so a
 * runner can refuse to start when one was declared but not registered: work addressed to it
 * (a child call, an activity job, an entity command) would otherwise wait forever.
 */
export class DeclaredDefinitions<D extends Definition> {
  private readonly byKey = new Map<string, D>();

  add(definition: D): void {
    this.byKey.set(`${definition.name}@${versionOf(definition)}`, definition);
  }

  all(): D[] {
    return [...this.byKey.values()];
  }
}

/**
 * The definitions of one kind a process serves, every registered version of each. `get` answers
 * the newest version; `version` exactly one (an execution runs on the version it started with).
 */
export class DefinitionRegistry<D extends Definition> {
  /** Name → version → definition. */
  private readonly byName = new Map<string, Map<number, D>>();

  constructor(
    private readonly kind: DefinitionKind,
    private readonly declared: DeclaredDefinitions<D>,
    definitions: readonly D[],
  ) {
    for (const definition of definitions) {
      const versions = this.byName.get(definition.name) ?? new Map<number, D>();
      const version = versionOf(definition);
      if (versions.has(version)) {
        const what =
          definition.version === undefined ? definition.name : `${definition.name} version ${version}`;
        throw new TenorError(kind.codes.duplicate, `${kind.noun} ${what} is registered twice`, {
          details: { [kind.noun]: definition.name, version },
        });
      }
      versions.set(version, definition);
      this.byName.set(definition.name, versions);
    }
  }

  /** The newest registered version, or a refusal naming what is registered. */
  get(name: string): D {
    const versions = this.byName.get(name);
    if (versions) return versions.get(Math.max(...versions.keys())) as D;
    throw new TenorError(
      this.kind.codes.unknown,
      `${this.kind.noun} ${JSON.stringify(name)} is not registered; registered: ${this.names().join(", ") || "(none)"}`,
      { details: { [this.kind.noun]: name, registered: this.names() } },
    );
  }

  /** Exactly `version` of the definition, or undefined when this process does not have it. */
  version(name: string, version: number): D | undefined {
    return this.byName.get(name)?.get(version);
  }

  /** The registered versions of a name, ascending (empty when unknown). */
  versions(name: string): number[] {
    return [...(this.byName.get(name)?.keys() ?? [])].sort((a, b) => a - b);
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  /** Every registered definition, all versions. */
  all(): D[] {
    return [...this.byName.values()].flatMap((versions) => [...versions.values()]);
  }

  /**
   * Refuses when a definition was declared in this process but not registered. A missing name
   * is reported by name; a missing version of a registered name as `name@version`.
   */
  assertAllDeclaredRegistered(): void {
    const missing = this.declared
      .all()
      .filter((d) => !this.version(d.name, versionOf(d)))
      .map((d) => (this.has(d.name) ? `${d.name}@${versionOf(d)}` : d.name));
    if (missing.length === 0) return;
    throw new TenorError(
      this.kind.codes.notRegistered,
      `${this.kind.plural} declared but not registered with this runner: ${[...new Set(missing)].join(", ")}; add them to the registry`,
      { details: { missing } },
    );
  }
}
