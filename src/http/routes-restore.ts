// Restores over HTTP (DESIGN §9 `ckpt restore|undo|rewind`). A restore is two calls: the preview
// returns the plan and a token bound to the session's last seq, the tag, the paths and `force`; the
// restore runs only with that token and only while the session is still at that seq (else CONFLICT,
// 409, nothing changed) — what runs is what was shown, even with other writers on the session.
// Undo and rewind follow the same rule (issue 27 item 4): their `dryRun` answer carries `seq` and a
// token signed for the operation, tag, path or fork, and force; the real call needs that token and
// refuses with CONFLICT when the session moved since (checked under the session lock).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { CkptError, type RestoreResult } from '../index.js';
import type { DaemonState } from './daemon-state.js';
import type { Router } from './route.js';
import { sessionRoutes } from './session-route.js';
import { pathField, pathsField, tagField, workspaceBody } from './schemas.js';

const restoreBody = workspaceBody.extend({ tag: tagField, paths: pathsField.optional(), force: z.boolean().optional() });
const tokenField = z.string().regex(/^\d+\.[0-9a-f]{64}$/, 'a token from the preview (dryRun)');
const undoBody = workspaceBody.extend({ tag: tagField, path: pathField, force: z.boolean().optional(), dryRun: z.boolean().optional(), token: tokenField.optional() });
const rewindBody = workspaceBody.extend({ tag: tagField, fork: z.boolean().optional(), force: z.boolean().optional(), dryRun: z.boolean().optional(), token: tokenField.optional() });

export function addRestoreRoutes(r: Router, state: DaemonState, secret: string): void {
  const sign = (wid: string, sid: string, seq: number, body: z.infer<typeof restoreBody>): string =>
    createHmac('sha256', secret)
      .update(JSON.stringify([wid, sid, seq, body.tag, body.paths ?? null, Boolean(body.force)]))
      .digest('hex');
  /** The MAC of an undo or rewind preview: the operation and what it was asked, at that seq. */
  const signOp = (op: 'undo' | 'rewind', wid: string, sid: string, seq: number, what: unknown[]): string =>
    createHmac('sha256', secret).update(JSON.stringify([op, wid, sid, seq, ...what])).digest('hex');
  /** The seq an undo/rewind token was issued at, after checking it was issued for exactly this call. */
  const checkOpToken = (token: string | undefined, mac: (seq: number) => string): number => {
    if (token === undefined) throw new CkptError('INVALID_ARGUMENT', 'this call changes files: preview it first (dryRun: true) and pass the token it returns', { where: 'token' });
    const [seqText, given] = token.split('.') as [string, string];
    const seq = Number(seqText);
    if (!timingSafeEqual(Buffer.from(mac(seq), 'hex'), Buffer.from(given, 'hex'))) {
      throw new CkptError('INVALID_ARGUMENT', 'the token was not issued for this call (session, tag, path or fork, and force must match the preview)', { where: 'token' });
    }
    return seq;
  };
  const route = sessionRoutes(r, state);
  /** A checkPlan hook refusing (CONFLICT, nothing changed) when the session moved since the preview. */
  const atSeq = (seq: number) => ({ lastSeq }: { lastSeq: number }): void => {
    if (lastSeq !== seq) throw new CkptError('CONFLICT', `the session changed since the preview (at @${seq}, now @${lastSeq}): preview again`, { expected: seq, actual: lastSeq });
  };

  route('POST /restore/preview', {
    summary: 'plan a restore (nothing changes); returns the plan and the token the restore needs',
    body: restoreBody,
    handler: async ({ s, body }) => {
      const ws = await state.workspace(body.workspace); // the tokens are bound to its id
      const seq = await s.log.lastSeq();
      const preview = await s.restore(body.tag, { paths: body.paths, cwd: s.workspaceRoot, force: body.force, dryRun: true });
      return { ...publicResult(preview), seq, token: `${seq}.${sign(ws.id, s.id, seq, body)}` };
    },
  });

  route('POST /restore', {
    summary: 'restore to a tag with the token of its preview (409 when the session changed since)',
    body: restoreBody.extend({ token: z.string().regex(/^\d+\.[0-9a-f]{64}$/, 'a token from /restore/preview') }),
    handler: async ({ s, body }) => {
      const ws = await state.workspace(body.workspace);
      const [seqText, mac] = body.token.split('.') as [string, string];
      const seq = Number(seqText);
      const expected = Buffer.from(sign(ws.id, s.id, seq, body), 'hex');
      if (!timingSafeEqual(expected, Buffer.from(mac, 'hex'))) {
        throw new CkptError('INVALID_ARGUMENT', 'the token was not issued for this restore (session, tag, paths and force must match the preview)', { where: 'token' });
      }
      return publicResult(await s.restore(body.tag, { paths: body.paths, cwd: s.workspaceRoot, force: body.force, expectSeq: seq }));
    },
  });

  route('POST /undo', {
    summary: 'restore one path to a tag: dryRun returns the plan and a token; the real call needs it (409 when the session changed since)',
    body: undoBody,
    handler: async ({ s, body }) => {
      const ws = await state.workspace(body.workspace);
      const mac = (seq: number): string => signOp('undo', ws.id, s.id, seq, [body.tag, body.path, Boolean(body.force)]);
      if (body.dryRun) {
        const seq = await s.log.lastSeq();
        const preview = await s.undo(body.tag, body.path, { cwd: s.workspaceRoot, force: body.force, dryRun: true });
        return { ...publicResult(preview), seq, token: `${seq}.${mac(seq)}` };
      }
      const seq = checkOpToken(body.token, mac);
      return publicResult(await s.undo(body.tag, body.path, { cwd: s.workspaceRoot, force: body.force, expectSeq: seq }));
    },
  });

  route('POST /rewind', {
    summary: 'restore to a tag and move the conversation back (or fork there): dryRun returns the plan and a token; the real call needs it',
    body: rewindBody,
    handler: async ({ s, body }) => {
      const ws = await state.workspace(body.workspace);
      const mac = (seq: number): string => signOp('rewind', ws.id, s.id, seq, [body.tag, Boolean(body.fork), Boolean(body.force)]);
      let seq: number;
      let res;
      if (body.dryRun) {
        seq = await s.log.lastSeq();
        res = await s.rewind(body.tag, { fork: body.fork, force: body.force, dryRun: true });
      } else {
        seq = checkOpToken(body.token, mac);
        res = await s.rewind(body.tag, { fork: body.fork, force: body.force, checkPlan: atSeq(seq) });
      }
      return {
        ...publicResult(res),
        watermark: res.watermark,
        session: res.session,
        ...(res.forked ? { forked: true } : {}),
        ...(body.dryRun ? { seq, token: `${seq}.${mac(seq)}` } : {}),
      };
    },
  });
}

/** The §9 result fields (the plan as path/action pairs), without internal ids. */
function publicResult(res: RestoreResult): Record<string, unknown> {
  const { plan, id: _id, ...rest } = res;
  return { ...rest, ...(plan ? { plan: plan.entries.map(({ path, action }) => ({ path, action })) } : {}) };
}
