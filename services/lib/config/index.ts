export { loadConfig, ConfigError } from './load-config.js';
export { envBoolean, envHttpUrl, envPort, envList } from './env-types.js';
export { platformEnvSchema, platformSettings, toPlatformConfig } from './platform.js';
export type { SettingsScope } from './settings-scope.js';
export { ConfigErrors, loadConfigs } from './load-configs.js';
export type { ConfigPart } from './load-configs.js';
export type { PlatformConfig, PlatformEnv } from './platform.js';
