import { createHash } from 'node:crypto';

/**
 * A deterministic UUID (v5-style layout over SHA-256) of the parts naming one embedding. The parts include the run
 * id, so a re-process writes new objects beside the old ones instead of overwriting them (Weaviate upserts by id).
 * UUIDs because Weaviate accepts nothing else as an object id.
 */
export function embeddingRecordId(parts: Array<string | number>): string {
  const hex = createHash('sha256').update(parts.map(String).join('\u0000')).digest('hex');
  const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
