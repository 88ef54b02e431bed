/** `ms` rounded to 0.1 ms: the precision of every `duration_ms` a service reports or logs. */
export function roundMs(ms: number): number {
  return Math.round(ms * 10) / 10;
}
