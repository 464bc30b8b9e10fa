import type { TenorConfig } from "../config/schema.js";
import type { SecretReadOptions } from "../config/secret.js";
import type { HealthState, ReadinessCheck } from "../observability/health-server.js";
import type { Logger } from "../observability/logger.js";
import type { TenorMetrics } from "../observability/metrics.js";
import type { Dependencies } from "./dependencies.js";

/** What a role's start function gets. */
export interface RoleContext {
  config: TenorConfig;
  logger: Logger;
  deps: Dependencies;
  health: HealthState;
  readiness: Record<string, ReadinessCheck>;
  /** The process's Prometheus registry, served at /metrics on the role's health port. */
  metrics: TenorMetrics;
  /** Where configured secrets (signer keys) are read from: the process environment and files. */
  secrets: SecretReadOptions;
}

/** A started role: `stop` releases everything it holds; persisted work stays for another replica. */
export interface RoleHandle {
  stop(): Promise<void>;
  /**
   * Called once, when the process turns ready (/readyz stops answering `starting`): what the role
   * measured while it started (the api's event-loop lag) is startup's, not serving's.
   */
  ready?(): void;
}
