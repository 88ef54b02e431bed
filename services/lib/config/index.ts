export { loadConfig, ConfigError } from './load-config.js';
export { envBoolean, envPort, envList } from './env-types.js';
