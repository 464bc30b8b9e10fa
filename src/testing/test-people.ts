import { issueApiKey } from "../api/auth/api-key.js";
import type { OrgRole } from "../auth/api-roles.js";
import type { PgApiKeys } from "../store/pg-api-keys.js";

/** A person (or system) the test acts as: the API key issued to them, as the Platform API knows it. */
export interface TestPerson {
  keyId: string;
  subject: string;
  role: OrgRole;
}

/**
 * The people of a test, each with a real API key of their own (issued once per organisation,
 * subject and role), so identity-bound rules hold as in production: whoever started a run may
 * not approve it, and a quorum counts subjects, not keys.
 */
export class TestPeople {
  private readonly issued = new Map<string, Promise<TestPerson>>();

  constructor(private readonly keys: PgApiKeys) {}

  key(orgId: string, subject: string, role: OrgRole): Promise<TestPerson> {
    const id = `${orgId}\0${subject}\0${role}`;
    let person = this.issued.get(id);
    if (!person) {
      person = issueApiKey(this.keys, { orgId, role, subject, name: subject }).then(({ record }) => ({
        keyId: record.id,
        subject,
        role,
      }));
      this.issued.set(id, person);
    }
    return person;
  }
}
