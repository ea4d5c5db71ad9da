// Which local user made a loopback TCP connection (Linux): the uid the kernel lists for the client's
// end of the connection in /proc/net/tcp or /proc/net/tcp6. `/login` answers only the daemon's own
// user with it (DESIGN §10 "Security"): `ckpt open` hands the one-time code to the browser on
// xdg-open's command line, which every local user can read in /proc/PID/cmdline, and another user who
// redeemed it first held the web page's session (found by a probe, 2026-12-06).
import { readFileSync } from 'node:fs';
import { endianness } from 'node:os';
import { isLoopbackAddress } from './request-guard.js';

/** The two ends of a connection as node's socket reports them (the server's view). */
export interface PeerSocket {
  remoteAddress?: string;
  remotePort?: number;
  localAddress?: string;
  localPort?: number;
}

const TABLES = ['/proc/net/tcp', '/proc/net/tcp6'];

/** The client's end was found without an owner: a connection its process closed (TIME_WAIT lists uid 0 for it). */
export const UNKNOWN_PEER = -1;

/**
 * The uid owning the client's end of a loopback `socket`; UNKNOWN_PEER when its entry has no owner
 * any more (a closed socket's TIME_WAIT entry says uid 0, which must not pass for root); undefined
 * when it cannot be told: not Linux, no /proc, a connection from another machine, or a client the
 * tables do not list (a live local socket always is: WSL's mirrored networking brings the Windows
 * browser's connections without one).
 */
export function peerUid(socket: PeerSocket, tables: readonly string[] = TABLES): number | undefined {
  const { remoteAddress, remotePort, localAddress, localPort } = socket;
  if (process.platform !== 'linux' || !remoteAddress || !localAddress || remotePort === undefined || localPort === undefined) return undefined;
  if (!isLoopbackAddress(remoteAddress)) return undefined;
  // In the table the client's end is the `local_address` of its line, the server's the `rem_address`.
  const client = endpoint(remoteAddress, remotePort);
  const server = endpoint(localAddress, localPort);
  for (const table of tables) {
    let text: string;
    try {
      text = readFileSync(table, 'latin1');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode …
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || !f[0]!.endsWith(':')) continue;
      if (decodeEndpoint(f[1]!) === client && decodeEndpoint(f[2]!) === server) {
        const uid = Number(f[7]);
        return Number.isInteger(uid) && f[9] !== '0' ? uid : UNKNOWN_PEER;
      }
    }
  }
  return undefined;
}

/** `host port` with the host in one normal form (an IPv4-mapped IPv6 address as its IPv4 address). */
function endpoint(address: string, port: number): string {
  return `${normalHost(address)} ${port}`;
}

function normalHost(address: string): string {
  const a = address.toLowerCase();
  if (a.startsWith('::ffff:') && a.includes('.')) return a.slice(7);
  if (!a.includes(':')) return a;
  try {
    const host = new URL(`http://[${a}]/`).hostname;
    const mapped = /^\[::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})\]$/.exec(host);
    if (mapped) {
      const hi = parseInt(mapped[1]!, 16);
      const lo = parseInt(mapped[2]!, 16);
      return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
    }
    return host.slice(1, -1);
  } catch {
    return a;
  }
}

/** An `ADDR:PORT` field of /proc/net/tcp{,6}: each 32-bit word of the address printed in host byte order. */
function decodeEndpoint(field: string): string | undefined {
  const colon = field.indexOf(':');
  if (colon !== 8 && colon !== 32) return undefined;
  const port = parseInt(field.slice(colon + 1), 16);
  const bytes: number[] = [];
  for (let w = 0; w < colon; w += 8) {
    const word = [0, 2, 4, 6].map((i) => parseInt(field.slice(w + i, w + i + 2), 16));
    bytes.push(...(endianness() === 'LE' ? word.reverse() : word));
  }
  if (bytes.some((b) => Number.isNaN(b)) || Number.isNaN(port)) return undefined;
  if (bytes.length === 4) return `${bytes.join('.')} ${port}`;
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  return endpoint(groups.join(':'), port);
}
