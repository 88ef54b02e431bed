export { loadConfig, ConfigError } from './load-config.js';
export { envBoolean, envPort, envList } from './env-types.js';
export { platformEnvSchema, toPlatformConfig } from './platform.js';
export type { PlatformConfig } from './platform.js';
