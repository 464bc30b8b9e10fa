import { describe, expect, it } from "vitest";
import { ABANDONED_DEPLOYMENT_SERVICES } from "../../../flows/organisations/abandoned-deployments.js";
import { ORGANISATION_DEPLOYMENTS_SCHEDULE } from "../../../flows/organisations/schedules/deployments-schedule.js";
import { ConfigError, loadConfig } from "../../../src/config/index.js";
import { type AnyServiceKey, provide, ServiceSet } from "../../../src/engine/services.js";
import { application } from "../../../workers/application.js";

const base = {
  DATABASE_URL: "postgresql://postgres@127.0.0.1:5432/tenor",
  REDIS_URL: "redis://127.0.0.1:6379",
};

function withFile(yaml: string) {
  return loadConfig({ env: { ...base, TENOR_CONFIG: "/etc/tenor.yaml" }, readFile: () => yaml });
}

describe("organisations.abandonedDeploymentsIntervalMs", () => {
  it("defaults to one minute and is the failed-deployment schedule's cadence", () => {
    const config = loadConfig({ env: base });
    expect(config.organisations.abandonedDeploymentsIntervalMs).toBe(60_000);
    // The schedule is built over the services it reaches; placeholders do, it runs nothing here.
    const services = new ServiceSet(
      ABANDONED_DEPLOYMENT_SERVICES.map((key: AnyServiceKey) => provide(key, {})),
    );
    const schedules = application.schedules({ config, services } as Parameters<
      typeof application.schedules
    >[0]);
    expect(schedules.map((s) => [s.name, s.cadence])).toEqual([
      [ORGANISATION_DEPLOYMENTS_SCHEDULE, { kind: "every", everyMs: 60_000 }],
    ]);
  });

  it("enforces 1000 ≤ v ≤ 3600000, naming key, value and rule", () => {
    for (const bad of [999, 3_600_001]) {
      let issues: readonly { key: string; value: unknown; rule: string }[] = [];
      try {
        withFile(`organisations:\n  abandonedDeploymentsIntervalMs: ${bad}\n`);
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        issues = (error as ConfigError).issues;
      }
      expect(issues[0]).toMatchObject({
        key: "organisations.abandonedDeploymentsIntervalMs",
        value: bad,
        rule: "1000 ≤ v ≤ 3600000",
      });
    }
    expect(withFile("organisations:\n  abandonedDeploymentsIntervalMs: 5000\n").organisations).toEqual({
      abandonedDeploymentsIntervalMs: 5_000,
    });
  });
});
