export { ConfigError, type ConfigIssue } from "./config-error.js";
export { CONFIG_FILE_ENV, ENV_KEYS, type LoadConfigOptions, loadConfig } from "./load-config.js";
export { parseRole, ROLE_ENV, ROLES, type Role } from "./role.js";
export { configSchema, type TenorConfig } from "./schema.js";
export { reservedSessionUrl } from "./session-url.js";
