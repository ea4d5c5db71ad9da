// The daemon's two request guards, shared by the hono app and the hook lane (hook-lane.ts): the Host
// header must name a loopback address (or the host the user explicitly chose), so a web page cannot
// reach the daemon through DNS rebinding; and the bearer token.
import { timingSafeEqual } from 'node:crypto';
import { CkptError } from '../index.js';

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]', '::1'];

export interface RequestGuard {
  /**
   * FORBIDDEN unless the Host header names an allowed host (not checked on a unix socket: browsers
   * cannot reach one). `localAddress` is the address the connection arrived at: when it is not a
   * loopback address (a daemon started with --host … --allow-remote), a loopback name in Host is
   * refused — only the chosen host or that address itself (issue 27 item 9).
   */
  checkHost(header: string | undefined, localAddress?: string): void;
  /** Whether an Authorization header carries the daemon's bearer token. */
  hasToken(header: string | undefined): boolean;
}

export function createRequestGuard(options: { token: string; host?: string; socket?: boolean }): RequestGuard {
  const allowed = new Set(LOOPBACK_NAMES);
  const { host } = options;
  if (host) allowed.add(host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);
  const token = Buffer.from(options.token);
  return {
    checkHost(header, localAddress) {
      if (options.socket) return;
      const name = hostName(header);
      const remote = localAddress !== undefined && !isLoopbackAddress(localAddress);
      const ok = name !== undefined && (remote ? name === bracketed(host ?? '') || name === bracketed(unmapped(localAddress)) : allowed.has(name));
      if (!ok) {
        throw new CkptError('FORBIDDEN', `Host ${JSON.stringify(header ?? '')} is not a loopback name: refused (DNS rebinding protection)`, { host: header ?? null });
      }
    },
    hasToken(header) {
      const m = /^Bearer\s+(\S+)$/i.exec(header ?? '');
      const given = m ? Buffer.from(m[1]!) : undefined;
      return given !== undefined && given.length === token.length && timingSafeEqual(given, token);
    },
  };
}

/**
 * Whether an IP address (as a socket reports it) is a loopback one: 127.0.0.0/8, ::1, ::ffff:127.x —
 * literals only (and `localhost`): a name such as `127.example.net` resolves to whatever its DNS says
 * (a probe bound 0.0.0.0 through one).
 */
export function isLoopbackAddress(address: string): boolean {
  const a = unmapped(address.toLowerCase());
  return a === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a) || a === 'localhost';
}

const unmapped = (a: string): string => (a.startsWith('::ffff:') && a.includes('.') ? a.slice(7) : a);
const bracketed = (h: string): string => (h.includes(':') && !h.startsWith('[') ? `[${h}]` : h).toLowerCase();

export const unauthorized = (): CkptError => new CkptError('UNAUTHORIZED', 'missing or wrong bearer token (ckpt serve --print-token shows it)', {});

/** The host part of a Host header (`name`, `name:port`, `[v6]:port`), lower-cased. */
function hostName(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const h = header.trim().toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end < 0 ? undefined : h.slice(0, end + 1);
  }
  const colon = h.indexOf(':');
  return colon < 0 ? h : h.slice(0, colon);
}
