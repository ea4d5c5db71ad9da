// Store maintenance over HTTP (DESIGN §9 `ckpt prune|gc|verify|stats`).
import { z } from 'zod';
import { CkptError, gcSummary, parseDuration, prune, resolveRetention, runGc, storeStats, verify } from '../index.js';
import type { DaemonState } from './daemon-state.js';
import type { Router } from './route.js';
import { sessionRoutes } from './session-route.js';
import { workspaceBody } from './schemas.js';

export function addStoreRoutes(r: Router, state: DaemonState): void {
  sessionRoutes(r, state)('POST /prune', {
    summary: "retire a session's early history (default: the automatic retention policy)",
    body: workspaceBody.extend({ keepTurns: z.number().int().nonnegative().optional(), olderThan: z.string().max(32).optional() }),
    handler: async ({ s, body }) => {
      let options = { keepTurns: body.keepTurns, olderThanMs: body.olderThan === undefined ? undefined : parseDuration(body.olderThan, 'olderThan') };
      if (options.keepTurns === undefined && options.olderThanMs === undefined) {
        const policy = resolveRetention(undefined);
        if (!policy) throw new CkptError('INVALID_ARGUMENT', 'retention is off (CKPT_RETENTION); give keepTurns or olderThan', {});
        options = { keepTurns: policy.keepTurns, olderThanMs: policy.olderThanMs };
      }
      return { session: s.id, ...(await prune(s, options)) };
    },
  });

  r.add({
    method: 'post',
    path: '/gc',
    summary: 'delete blobs no live event references (never any younger than the grace period)',
    body: z.object({ dryRun: z.boolean().optional(), grace: z.string().max(32).optional() }),
    handler: async ({ body }) => {
      const graceMs = parseDuration(body.grace ?? '15m', 'grace');
      const { plan, result } = await runGc(state.store.ctx, { graceMs, dryRun: body.dryRun });
      return gcSummary(plan, result, { dryRun: body.dryRun });
    },
  });

  r.add({
    // POST: re-hashing the whole store is heavy work, and a GET can be made by any same-site page (<img>).
    method: 'post',
    path: '/verify',
    summary: 're-hash every blob, parse every log, check references (ok false lists the problems)',
    handler: () => verify(state.store.ctx),
  });

  r.add({
    method: 'get',
    path: '/stats',
    summary: 'bytes recorded vs bytes on disk, per workspace and session',
    handler: () => storeStats(state.store.ctx),
  });
}
