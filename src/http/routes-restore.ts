// Restores over HTTP (DESIGN §9 `ckpt restore|undo|rewind`). A restore is two calls: the preview
// returns the plan and a token bound to the session's last seq, the tag, the paths and `force`, and
// to the plan it showed (its digest, as MCP's confirmation binds it: restore/plan-digest.ts); the
// restore runs only with that token and only while the session is still at that seq and its plan is
// the same (else CONFLICT, 409, nothing changed) — what runs is what was shown, even with other
// writers on the session or a hand edit the restore's look finds since the preview.
// Undo and rewind follow the same rule (issue 27 item 4): their `dryRun` answer carries `seq` and a
// token signed for the operation, tag, path or fork, and force; the real call needs that token and
// refuses with CONFLICT when the session moved since (checked under the session lock).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { CkptError, planDigest, type CheckPlan, type PlanSnapshot, type RestoreResult } from '../index.js';
import type { DaemonState } from './daemon-state.js';
import type { Router } from './route.js';
import { sessionRoutes } from './session-route.js';
import { pathField, pathsField, tagField, workspaceBody } from './schemas.js';

const restoreBody = workspaceBody.extend({ tag: tagField, paths: pathsField.optional(), force: z.boolean().optional() });
const tokenField = z.string().regex(/^\d+\.[0-9a-f]{64}$/, 'a token from the preview (dryRun)');
const undoBody = workspaceBody.extend({ tag: tagField, path: pathField, force: z.boolean().optional(), dryRun: z.boolean().optional(), token: tokenField.optional() });
const rewindBody = workspaceBody.extend({ tag: tagField, fork: z.boolean().optional(), force: z.boolean().optional(), dryRun: z.boolean().optional(), token: tokenField.optional() });

export function addRestoreRoutes(r: Router, state: DaemonState, secret: string): void {
  /** Half a token's MAC: over what was asked (the operation, workspace, session, tag, paths or fork, force) at `seq`, and the plan's digest when given. */
  const half = (asked: unknown[], seq: number, digest?: string): string =>
    createHmac('sha256', secret).update(JSON.stringify([...asked, seq, ...(digest !== undefined ? [digest] : [])])).digest('hex').slice(0, 32);
  /** A preview's token: `seq.` + the MAC of the request + the MAC of the request with the plan shown. */
  const tokenFor = (asked: unknown[], snapshot: PlanSnapshot): string => `${snapshot.lastSeq}.${half(asked, snapshot.lastSeq)}${half(asked, snapshot.lastSeq, planDigest(snapshot))}`;
  /**
   * The checkPlan of the real call: INVALID_ARGUMENT (before anything) when the token was not issued for
   * this request; CONFLICT (nothing changed) when the session moved since the preview, or the plan or the
   * files it concerns differ from what the preview showed (a hand edit the restore's look now finds).
   */
  const checkToken = (token: string | undefined, asked: unknown[], what: string): CheckPlan => {
    if (token === undefined) throw new CkptError('INVALID_ARGUMENT', 'this call changes files: preview it first (dryRun: true) and pass the token it returns', { where: 'token' });
    const [seqText, mac] = token.split('.') as [string, string];
    const seq = Number(seqText);
    if (!timingSafeEqual(Buffer.from(half(asked, seq), 'hex'), Buffer.from(mac.slice(0, 32), 'hex'))) {
      throw new CkptError('INVALID_ARGUMENT', `the token was not issued for this ${what} (session, tag, paths or fork, and force must match the preview)`, { where: 'token' });
    }
    return (snapshot) => {
      if (snapshot.lastSeq !== seq) throw new CkptError('CONFLICT', `the session changed since the preview (at @${seq}, now @${snapshot.lastSeq}): preview again`, { expected: seq, actual: snapshot.lastSeq });
      if (!timingSafeEqual(Buffer.from(half(asked, seq, planDigest(snapshot)), 'hex'), Buffer.from(mac.slice(32), 'hex'))) {
        throw new CkptError('CONFLICT', 'the files changed since the preview (its plan would differ now): preview again', { expected: seq, actual: snapshot.lastSeq });
      }
    };
  };
  /** Runs a dry run, keeping the snapshot its plan was made from. */
  const preview = async <T>(run: (checkPlan: CheckPlan) => Promise<T>): Promise<{ result: T; snapshot: PlanSnapshot }> => {
    let snapshot: PlanSnapshot | undefined;
    const result = await run((s) => void (snapshot = s));
    if (!snapshot) throw new CkptError('INTERNAL', 'the preview made no plan');
    return { result, snapshot };
  };
  const route = sessionRoutes(r, state);

  route('POST /restore/preview', {
    summary: 'plan a restore (nothing changes); returns the plan and the token the restore needs',
    body: restoreBody,
    handler: async ({ s, body }) => {
      const ws = await state.workspace(body.workspace); // the tokens are bound to its id
      const asked = ['restore', ws.id, s.id, body.tag, body.paths ?? null, Boolean(body.force)];
      const { result, snapshot } = await preview((checkPlan) => s.restore(body.tag, { paths: body.paths, cwd: s.workspaceRoot, force: body.force, dryRun: true, checkPlan }));
      return { ...publicResult(result), seq: snapshot.lastSeq, token: tokenFor(asked, snapshot) };
    },
  });

  route('POST /restore', {
    summary: 'restore to a tag with the token of its preview (409 when the session or the files changed since)',
    body: restoreBody.extend({ token: z.string().regex(/^\d+\.[0-9a-f]{64}$/, 'a token from /restore/preview') }),
    handler: async ({ s, body }) => {
      const ws = await state.workspace(body.workspace);
      const checkPlan = checkToken(body.token, ['restore', ws.id, s.id, body.tag, body.paths ?? null, Boolean(body.force)], 'restore');
      return publicResult(await s.restore(body.tag, { paths: body.paths, cwd: s.workspaceRoot, force: body.force, checkPlan }));
    },
  });

  route('POST /undo', {
    summary: 'restore one path to a tag: dryRun returns the plan and a token; the real call needs it (409 when the session or the files changed since)',
    body: undoBody,
    handler: async ({ s, body }) => {
      const ws = await state.workspace(body.workspace);
      const asked = ['undo', ws.id, s.id, body.tag, body.path, Boolean(body.force)];
      if (body.dryRun) {
        const { result, snapshot } = await preview((checkPlan) => s.undo(body.tag, body.path, { cwd: s.workspaceRoot, force: body.force, dryRun: true, checkPlan }));
        return { ...publicResult(result), seq: snapshot.lastSeq, token: tokenFor(asked, snapshot) };
      }
      const checkPlan = checkToken(body.token, asked, 'undo');
      return publicResult(await s.undo(body.tag, body.path, { cwd: s.workspaceRoot, force: body.force, checkPlan }));
    },
  });

  route('POST /rewind', {
    summary: 'restore to a tag and move the conversation back (or fork there): dryRun returns the plan and a token; the real call needs it',
    body: rewindBody,
    handler: async ({ s, body }) => {
      const ws = await state.workspace(body.workspace);
      const asked = ['rewind', ws.id, s.id, body.tag, Boolean(body.fork), Boolean(body.force)];
      if (body.dryRun) {
        const { result: res, snapshot } = await preview((checkPlan) => s.rewind(body.tag, { fork: body.fork, force: body.force, dryRun: true, checkPlan }));
        return { ...publicResult(res), watermark: res.watermark, session: res.session, ...(res.forked ? { forked: true } : {}), seq: snapshot.lastSeq, token: tokenFor(asked, snapshot) };
      }
      const res = await s.rewind(body.tag, { fork: body.fork, force: body.force, checkPlan: checkToken(body.token, asked, 'rewind') });
      return { ...publicResult(res), watermark: res.watermark, session: res.session, ...(res.forked ? { forked: true } : {}) };
    },
  });
}

/** The §9 result fields (the plan as path/action pairs), without internal ids. */
function publicResult(res: RestoreResult): Record<string, unknown> {
  const { plan, id: _id, ...rest } = res;
  return { ...rest, ...(plan ? { plan: plan.entries.map(({ path, action }) => ({ path, action })) } : {}) };
}
