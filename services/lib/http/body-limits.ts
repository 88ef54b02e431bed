/** The deepest nesting of objects and arrays a JSON body may have (the body itself is level 1). */
export const DEFAULT_JSON_MAX_DEPTH = 32;

const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/** Bytes of a size given as a number or as text such as `'1mb'`, `'512kb'`, `'2048b'` (1 kb = 1024 b). */
export function byteSize(size: number | string): number {
  if (typeof size === 'number') return size;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?\s*$/i.exec(size);
  if (!match) throw new Error(`Invalid byte size "${size}"`);
  return Math.floor(Number(match[1]) * UNITS[(match[2] ?? 'b').toLowerCase()]);
}
