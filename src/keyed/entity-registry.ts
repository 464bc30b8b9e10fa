import { DefinitionRegistry } from "../engine/definitions.js";
import { type AnyEntity, declaredEntities } from "./entity.js";
import { KEYED_ERRORS } from "./error-codes.js";

/** The entities this process can send to or handle. Built once, before any startup work. */
export class EntityRegistry extends DefinitionRegistry<AnyEntity> {
  constructor(entities: readonly AnyEntity[]) {
    super(
      {
        noun: "entity",
        plural: "entities",
        codes: {
          duplicate: KEYED_ERRORS.ENTITY_DEFINITION_INVALID,
          unknown: KEYED_ERRORS.ENTITY_UNKNOWN,
          notRegistered: KEYED_ERRORS.ENTITY_NOT_REGISTERED,
        },
      },
      declaredEntities,
      entities,
    );
  }
}
