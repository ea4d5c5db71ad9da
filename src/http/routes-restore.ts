// Restores over HTTP (DESIGN §9 `ckpt restore|undo|rewind`). A restore is two calls: the preview
// returns the plan and a token bound to the session's last seq, the tag, the paths and `force`; the
// restore runs only with that token and only while the session is still at that seq (else CONFLICT,
// 409, nothing changed) — what runs is what was shown, even with other writers on the session.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { CkptError, type RestoreResult } from '../index.js';
import type { DaemonState } from './daemon-state.js';
import type { Router } from './route.js';
import { pathsField, tagField, workspaceBody } from './schemas.js';

const restoreBody = workspaceBody.extend({ tag: tagField, paths: pathsField.optional(), force: z.boolean().optional() });

export function addRestoreRoutes(r: Router, state: DaemonState, secret: string): void {
  const sign = (wid: string, sid: string, seq: number, body: z.infer<typeof restoreBody>): string =>
    createHmac('sha256', secret)
      .update(JSON.stringify([wid, sid, seq, body.tag, body.paths ?? null, Boolean(body.force)]))
      .digest('hex');

  r.add({
    method: 'post',
    path: '/sessions/:id/restore/preview',
    summary: 'plan a restore (nothing changes); returns the plan and the token the restore needs',
    body: restoreBody,
    handler: async ({ body, params }) => {
      const s = await state.session(body.workspace, params.id!);
      const ws = await state.workspace(body.workspace);
      const seq = await s.log.lastSeq();
      const preview = await s.restore(body.tag, { paths: body.paths, cwd: s.workspaceRoot, force: body.force, dryRun: true });
      return { ...publicResult(preview), seq, token: `${seq}.${sign(ws.id, s.id, seq, body)}` };
    },
  });

  r.add({
    method: 'post',
    path: '/sessions/:id/restore',
    summary: 'restore to a tag with the token of its preview (409 when the session changed since)',
    body: restoreBody.extend({ token: z.string().regex(/^\d+\.[0-9a-f]{64}$/, 'a token from /restore/preview') }),
    handler: async ({ body, params }) => {
      const s = await state.session(body.workspace, params.id!);
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

  r.add({
    method: 'post',
    path: '/sessions/:id/undo',
    summary: 'restore one path to a tag',
    body: workspaceBody.extend({ tag: tagField, path: z.string().min(1), force: z.boolean().optional(), dryRun: z.boolean().optional() }),
    handler: async ({ body, params }) => {
      const s = await state.session(body.workspace, params.id!);
      return publicResult(await s.undo(body.tag, body.path, { cwd: s.workspaceRoot, force: body.force, dryRun: body.dryRun }));
    },
  });

  r.add({
    method: 'post',
    path: '/sessions/:id/rewind',
    summary: 'restore to a tag and move the conversation back (or fork there)',
    body: workspaceBody.extend({ tag: tagField, fork: z.boolean().optional(), force: z.boolean().optional(), dryRun: z.boolean().optional() }),
    handler: async ({ body, params }) => {
      const s = await state.session(body.workspace, params.id!);
      const res = await s.rewind(body.tag, { fork: body.fork, force: body.force, dryRun: body.dryRun });
      return { ...publicResult(res), watermark: res.watermark, session: res.session, ...(res.forked ? { forked: true } : {}) };
    },
  });
}

/** The §9 result fields (the plan as path/action pairs), without internal ids. */
function publicResult(res: RestoreResult): Record<string, unknown> {
  const { plan, id: _id, ...rest } = res;
  return { ...rest, ...(plan ? { plan: plan.entries.map(({ path, action }) => ({ path, action })) } : {}) };
}
