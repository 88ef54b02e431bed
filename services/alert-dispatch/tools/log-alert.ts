import { alertSummary, NO_PARAMETERS, type DispatchTool } from './tool.js';

/** `log_alert`: one structured log line per alert. Always enabled. */
export function logAlertTool(): DispatchTool {
  return {
    name: 'log_alert',
    description: 'Write the alert to the application log as one structured line.',
    requiresEnv: [],
    source: 'builtin',
    parameters: NO_PARAMETERS,
    enabled: () => true,
    runnable: () => true,
    async run({ request, snapshotPath, logger }) {
      // winston builds the whole line even when `info` is filtered out: skip that work on the dispatch path.
      if (!logger.isLevelEnabled('info')) return { logged: false };
      // The alert's own time goes in alert_timestamp: `timestamp` is the log record's time on every line.
      const { timestamp, ...summary } = alertSummary(request, snapshotPath);
      logger.info('alert', { tool: 'log_alert', ...summary, alert_timestamp: timestamp });
      return { logged: true };
    },
  };
}
