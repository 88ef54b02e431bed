import client from 'prom-client';
import { ServerStoppingError } from '../../lib/http/index.js';

/** Why an upload stopped before its answer: the client went away, or the service began to shut down. */
export type UploadAbortReason = 'client_gone' | 'shutdown';

/** `dataprep_uploads_aborted_total{reason}`, unregistered: createApp adds it to the service's registry. */
export function createUploadAbortCounter(): client.Counter<'reason'> {
  return new client.Counter({
    name: 'dataprep_uploads_aborted_total',
    help: 'Uploads stopped before their answer (client gone, shutdown), counted once their clean-up has finished',
    labelNames: ['reason'],
    registers: [],
  });
}

/** The counter label for an aborted request signal's reason. */
export function uploadAbortReason(reason: unknown): UploadAbortReason {
  return reason instanceof ServerStoppingError ? 'shutdown' : 'client_gone';
}
