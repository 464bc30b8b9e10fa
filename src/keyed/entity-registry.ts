import { TenorError } from "../errors/tenor-error.js";
import { type AnyEntity, declaredEntityNames } from "./entity.js";
import { KEYED_ERRORS } from "./error-codes.js";

/** The entities this process can send to or handle. Built once, before any startup work. */
export class EntityRegistry {
  private readonly byName = new Map<string, AnyEntity>();

  constructor(entities: readonly AnyEntity[]) {
    for (const entity of entities) {
      if (this.byName.has(entity.name)) {
        throw new TenorError(
          KEYED_ERRORS.ENTITY_DEFINITION_INVALID,
          `entity ${entity.name} is registered twice`,
          {
            details: { entity: entity.name },
          },
        );
      }
      this.byName.set(entity.name, entity);
    }
  }

  /** Returns the entity or refuses with ENTITY_UNKNOWN, naming what is registered. */
  get(name: string): AnyEntity {
    const entity = this.byName.get(name);
    if (entity) return entity;
    throw new TenorError(
      KEYED_ERRORS.ENTITY_UNKNOWN,
      `entity ${JSON.stringify(name)} is not registered; registered: ${this.names().join(", ") || "(none)"}`,
      { details: { entity: name, registered: this.names() } },
    );
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  /** A runner refuses to start when an entity was declared but not registered: its commands would wait forever. */
  assertAllDeclaredRegistered(): void {
    const missing = declaredEntityNames().filter((name) => !this.byName.has(name));
    if (missing.length === 0) return;
    throw new TenorError(
      KEYED_ERRORS.ENTITY_NOT_REGISTERED,
      `entities declared but not registered with this runner: ${missing.join(", ")}; add them to the registry`,
      { details: { missing } },
    );
  }
}
