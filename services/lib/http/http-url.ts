/** Raised for a value that is not an absolute http(s) URL; the message names the field and says what is wrong. */
export class InvalidHttpUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidHttpUrlError';
  }
}

/**
 * `value` as a URL when it is an absolute http or https URL (what every outgoing request of a service may target);
 * otherwise throws InvalidHttpUrlError: `<what> is not a valid URL` or `<what> must use http or https`.
 */
export function parseHttpUrl(value: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidHttpUrlError(`${what} is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidHttpUrlError(`${what} must use http or https`);
  }
  return url;
}
