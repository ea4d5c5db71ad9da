// Two-step confirmation of destructive MCP tools (DESIGN §10 "MCP"). A preview returns a token that
// binds the exact request (operation, session, tag, paths, force, fork) to what the preview saw: the
// session's last seq and a digest of the plan and of the present state of every path it concerns.
// The destructive call must pass the token; its check runs under the session lock, after the real
// plan is made and before anything is recorded, and refuses (nothing changed) when anything moved.
// Tokens are HMAC-SHA256 signed with the store's confirmation key (confirm-key.ts; a fresh random key
// when none is given), so a token cannot be forged, edited, or carried to a server of another store;
// it expires after 15 minutes, and a confirmed run spends it (the session moves).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { CkptError, planDigest, type CheckPlan, type PlanSnapshot } from '../index.js';

export type ConfirmOperation = 'restore' | 'undo' | 'rewind';

/** The request a token is issued for; the destructive call must repeat it exactly. */
export interface ConfirmRequest {
  op: ConfirmOperation;
  workspace: string;
  session: string;
  tag: string;
  /** Path filter as given (restore: any number, undo: one, rewind: none). */
  paths: string[];
  force: boolean;
  fork: boolean;
}

interface TokenPayload extends ConfirmRequest {
  v: 1;
  lastSeq: number;
  digest: string;
  /** Expiry, ms since the epoch. */
  exp: number;
}

export interface Confirmer {
  /** Signs a token for `request` bound to what the preview's plan check saw. */
  issue(request: ConfirmRequest, snapshot: PlanSnapshot): { token: string; expiresAt: string };
  /**
   * Verifies `token` against the request of the destructive call (TOKEN_INVALID when it is not this
   * store's token for exactly this request, TOKEN_STALE when it expired) and returns the plan check
   * that refuses with TOKEN_STALE when the session or the workspace moved since the preview.
   */
  check(token: string, request: ConfirmRequest): CheckPlan;
}

export interface ConfirmerOptions {
  /** Signing key (default: 32 random bytes, for this confirmer only; `ckpt mcp` passes the store's key). */
  key?: Buffer;
  /** How long a preview stays valid (default 15 minutes). */
  ttlMs?: number;
  now?: () => number;
}

const PREFIX = 'ckpt1';
const REDO = 'nothing was changed; call restore_preview again, show the new plan to the user and confirm it';

export function createConfirmer(options: ConfirmerOptions = {}): Confirmer {
  const key = options.key ?? randomBytes(32);
  const ttlMs = options.ttlMs ?? 15 * 60_000;
  const now = options.now ?? Date.now;
  const sign = (body: string) => createHmac('sha256', key).update(`${PREFIX}.${body}`).digest('base64url');

  return {
    issue(request, snapshot) {
      const exp = now() + ttlMs;
      const payload: TokenPayload = { v: 1, ...normalize(request), lastSeq: snapshot.lastSeq, digest: planDigest(snapshot), exp };
      const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
      return { token: `${PREFIX}.${body}.${sign(body)}`, expiresAt: new Date(exp).toISOString() };
    },

    check(token, request) {
      const payload = verify(token, sign);
      const wanted = normalize(request);
      const mismatch = (Object.keys(wanted) as (keyof ConfirmRequest)[]).filter((k) => JSON.stringify(payload[k]) !== JSON.stringify(wanted[k]));
      if (mismatch.length > 0) {
        throw new CkptError(
          'TOKEN_INVALID',
          `the confirmation token was issued for ${describe(payload)}, not for ${describe(wanted)} (${mismatch.join(', ')} differ): preview exactly what you mean to run`,
          { mismatch },
        );
      }
      if (now() > payload.exp) {
        throw new CkptError('TOKEN_STALE', `the preview expired at ${new Date(payload.exp).toISOString()}: ${REDO}`, { expiredAt: new Date(payload.exp).toISOString() });
      }
      return (snapshot) => {
        if (snapshot.lastSeq !== payload.lastSeq) {
          throw new CkptError(
            'TOKEN_STALE',
            `session ${payload.session} moved since the preview (it was at @${payload.lastSeq}, it is now at @${snapshot.lastSeq}): ${REDO}`,
            { previewSeq: payload.lastSeq, lastSeq: snapshot.lastSeq },
          );
        }
        if (planDigest(snapshot) !== payload.digest) {
          throw new CkptError('TOKEN_STALE', `the workspace changed since the preview (the plan or the files it touches differ): ${REDO}`, { workspaceMoved: true });
        }
      };
    },
  };
}

function verify(token: string, sign: (body: string) => string): TokenPayload {
  const invalid = (why: string) =>
    new CkptError('TOKEN_INVALID', `${why}: pass the token that restore_preview returned for this request (tokens from a server of another store are not accepted)`);
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== PREFIX) throw invalid('not a ckpt confirmation token');
  const [, body, mac] = parts as [string, string, string];
  const expected = Buffer.from(sign(body));
  const given = Buffer.from(mac);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid('the confirmation token was not issued for this store');
  try {
    return JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as TokenPayload;
  } catch {
    throw invalid('the confirmation token is malformed');
  }
}

function normalize(r: ConfirmRequest): ConfirmRequest {
  return { op: r.op, workspace: r.workspace, session: r.session, tag: r.tag, paths: [...new Set(r.paths)].sort(), force: r.force, fork: r.fork };
}

function describe(r: ConfirmRequest): string {
  const what = `${r.op} to ${r.tag} in session ${r.session}`;
  return `${what}${r.paths.length ? ` of ${r.paths.join(', ')}` : ''}${r.force ? ' with force' : ''}${r.fork ? ' into a fork' : ''}`;
}

export { planDigest };
