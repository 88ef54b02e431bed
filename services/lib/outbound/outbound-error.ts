/** Why an outbound request failed before an HTTP answer arrived. */
export type OutboundFailure = 'refused' | 'dns' | 'connect' | 'timeout' | 'too-large' | 'redirects' | 'invalid-url';

/** An outbound request that did not get an answer; `message` says why in words a client may read. */
export class OutboundError extends Error {
  constructor(
    readonly failure: OutboundFailure,
    message: string,
  ) {
    super(message);
    this.name = 'OutboundError';
  }
}
