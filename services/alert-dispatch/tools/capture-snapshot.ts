import { randomUUID } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileTypeFromBuffer } from 'file-type';
import type { Payload } from '../dispatch/types.js';
import { NO_PARAMETERS, ToolError, type DispatchTool } from './tool.js';

/** Options of the snapshot tool. */
export interface SnapshotToolOptions {
  /** ALERT_SNAPSHOT_DIR: where snapshots are written (created on demand). */
  directory: string;
  now?: () => number;
}

/** Bytes of an image payload: base64 data, or a `data:` URI (remote URIs are never fetched). */
function payloadBytes(payload: Payload): Buffer {
  if (payload.encoding === 'base64' && payload.data_base64) return Buffer.from(payload.data_base64, 'base64');
  if (payload.encoding === 'uri' && payload.uri) {
    const match = /^data:[^,]*;base64,(.*)$/s.exec(payload.uri);
    if (match) return Buffer.from(match[1], 'base64');
    throw new ToolError('image payload uri is not a base64 data: URI (remote URIs are not fetched)', false);
  }
  throw new ToolError('image payload carries no image bytes', false);
}

/** Decodes an image payload and checks its magic bytes; returns the bytes and the detected extension. */
export async function decodeImagePayload(payload: Payload): Promise<{ bytes: Buffer; ext: string; mime: string }> {
  const bytes = payloadBytes(payload);
  const type = await fileTypeFromBuffer(bytes);
  if (!type || !type.mime.startsWith('image/')) throw new ToolError('image payload is not a recognised image', false);
  return { bytes, ext: type.ext, mime: type.mime };
}

/**
 * `capture_snapshot`: writes the first image payload under the snapshot directory as `<timestamp>-<uuid>.<ext>`
 * (the name never comes from the request) and returns its path for the tools that run after it.
 */
export function captureSnapshotTool(options: SnapshotToolOptions): DispatchTool {
  const now = options.now ?? Date.now;
  return {
    name: 'capture_snapshot',
    description: 'Save the first image payload of the alert to disk; later tools receive its snapshot_path.',
    requiresEnv: [],
    source: 'builtin',
    parameters: NO_PARAMETERS,
    enabled: () => true,
    runnable: () => true,
    async run({ request, signal }) {
      const payload = request.payloads.find((p) => p.kind === 'image');
      if (!payload) throw new ToolError('alert carries no image payload', false);
      const { bytes, ext, mime } = await decodeImagePayload(payload);
      await mkdir(options.directory, { recursive: true });
      const stamp = new Date(now()).toISOString().replace(/[:.]/g, '-');
      const file = path.join(options.directory, `${stamp}-${randomUUID()}.${ext}`);
      // Written beside its final name and renamed when complete: a time-out or shutdown never leaves half an image.
      const partial = `${file}.part`;
      try {
        await writeFile(partial, bytes, { flag: 'wx', signal });
        await rename(partial, file);
      } catch (err) {
        await rm(partial, { force: true });
        throw err;
      }
      return { snapshot_path: file, mime_type: mime, bytes: bytes.length };
    },
  };
}
