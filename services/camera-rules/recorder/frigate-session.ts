import { OutboundError, outboundRequest, UNRESTRICTED, type OutboundResponse } from '../../lib/outbound/index.js';
import { RecorderUnavailableError } from './recorder.js';

/** A Frigate user (Settings › Users) whose session camera-rules opens on Frigate's authenticated port (8971). */
export interface FrigateCredentials {
  user: string;
  password: string;
}

/** Frigate's `auth.cookie_name` default: the cookie `/api/login` sets and the authenticated port reads. */
const FRIGATE_COOKIE = 'frigate_token';
/** A session this close to its `exp` is opened again before the next request (Frigate refreshes within 30 min). */
const RENEW_BEFORE_S = 60;

interface Session {
  jwt: string;
  /** The JWT's `exp` (Unix seconds); Infinity when it carries none readable. */
  expires: number;
}

/** The value of cookie `name` among Set-Cookie headers, when one sets it. */
function cookieValue(setCookie: string | string[] | undefined, name: string): string | undefined {
  for (const header of [setCookie ?? []].flat()) {
    const [pair] = header.split(';');
    const at = pair.indexOf('=');
    if (at > 0 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim();
  }
  return undefined;
}

/** The `exp` claim of a JWT (its payload is read, not verified: Frigate verifies it), or Infinity. */
function expiryOf(jwt: string): number {
  try {
    const payload = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as {
      exp?: unknown;
    };
    return typeof payload.exp === 'number' && Number.isFinite(payload.exp) ? payload.exp : Infinity;
  } catch {
    return Infinity;
  }
}

/**
 * Frigate's native authentication as its source defines it (`frigate/api/auth.py`): `POST /api/login` with
 * `{"user", "password"}` answers 200 with the session JWT in the `frigate_token` cookie (HttpOnly, `Max-Age` =
 * `auth.session_length`, 24 h by default), 401 `{"message": "Login failed"}` for wrong credentials. Every other
 * `/api/` request on the authenticated port carries the cookie; nginx answers 401 without a valid one, and passes on
 * a refreshed cookie (Set-Cookie) when the session nears its end. The session is opened on first use, shared by
 * concurrent requests, kept up to date from refreshed cookies, opened again shortly before its `exp` or after a 401.
 * The password is sent to Frigate only, never logged or shown.
 */
export class FrigateSession {
  private session?: Session;
  private opening?: Promise<Session>;

  constructor(
    private readonly options: {
      url: string;
      /** The URL as shown in errors (no credentials). */
      shown: string;
      credentials: FrigateCredentials;
      timeoutMs: number;
      cookieName?: string;
      clock?: () => number;
    },
  ) {}

  private get cookieName(): string {
    return this.options.cookieName ?? FRIGATE_COOKIE;
  }

  private now(): number {
    return (this.options.clock ?? Date.now)() / 1000;
  }

  /**
   * The Cookie header of an authenticated request, opening a session when there is none (or it is about to end). The
   * login is shared by every request waiting for it, so no one request's signal ends it (it is bounded by its time-out).
   */
  async headers(): Promise<Record<string, string>> {
    let session = this.session;
    if (!session || session.expires - RENEW_BEFORE_S <= this.now()) session = await this.open();
    return { cookie: `${this.cookieName}=${session.jwt}` };
  }

  /** Frigate answered 401 to `headers`: the session is over (expired, secret rotated, password changed). */
  rejected(headers: Record<string, string>): void {
    if (this.session && headers.cookie === `${this.cookieName}=${this.session.jwt}`) this.session = undefined;
  }

  /** Takes a refreshed session from an answer's Set-Cookie. */
  absorb(response: OutboundResponse): void {
    const jwt = cookieValue(response.headers['set-cookie'], this.cookieName);
    if (jwt) this.session = { jwt, expires: expiryOf(jwt) };
  }

  private open(): Promise<Session> {
    this.opening ??= this.login().finally(() => {
      this.opening = undefined;
    });
    return this.opening;
  }

  private async login(): Promise<Session> {
    const { url, shown, credentials, timeoutMs } = this.options;
    let response: OutboundResponse;
    try {
      response = await outboundRequest(`${url}/api/login`, {
        policy: UNRESTRICTED,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ user: credentials.user, password: credentials.password }),
        timeoutMs,
        maxBytes: 64 * 1024,
      });
    } catch (error) {
      if (error instanceof OutboundError) {
        throw new RecorderUnavailableError(`Frigate at ${shown} does not answer: ${error.message}`);
      }
      throw error;
    }
    response.discard();
    const jwt = response.status === 200 ? cookieValue(response.headers['set-cookie'], this.cookieName) : undefined;
    if (!jwt) {
      const why =
        response.status === 401
          ? `refused the login of user ${credentials.user} (check CAMERA_RULES_FRIGATE_USER and _PASSWORD)`
          : response.status === 404
            ? 'has authentication disabled (use its unauthenticated port, 5000, without credentials)'
            : response.status === 200
              ? `set no ${this.cookieName} cookie at login (is auth.cookie_name changed?)`
              : `answered the login with HTTP ${response.status}`;
      throw new RecorderUnavailableError(`Frigate at ${shown} ${why}`);
    }
    this.session = { jwt, expires: expiryOf(jwt) };
    return this.session;
  }
}
