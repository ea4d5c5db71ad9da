// Session routes (DESIGN §9 `ckpt session …`): list, show, tree, new, fork, rm — same shapes as the
// CLI's --json output.
import { z } from 'zod';
import { machineId, sessionSize } from '../index.js';
import type { DaemonState } from './daemon-state.js';
import type { Router } from './route.js';
import { sessionRoutes } from './session-route.js';
import { nameString, tagField, workspaceBody, workspaceQuery } from './schemas.js';

export function addSessionRoutes(r: Router, state: DaemonState): void {
  const route = sessionRoutes(r, state);
  r.add({
    method: 'get',
    path: '/workspaces',
    summary: 'every workspace the store knows',
    // `machine`: this daemon's machine (shared stores), so a client can tell which workspaces are here.
    handler: async () => ({ workspaces: await state.store.listWorkspaces(), ...(state.store.shared ? { machine: await machineId() } : {}) }),
  });

  r.add({
    method: 'get',
    path: '/sessions',
    summary: "the workspace's sessions, newest first",
    query: workspaceQuery,
    handler: async ({ query }) => ({ sessions: await (await state.workspace(query.workspace)).list() }),
  });

  r.add({
    method: 'get',
    path: '/tree',
    summary: "the workspace's sessions grouped under their parents",
    query: workspaceQuery,
    handler: async ({ query }) => ({ tree: await (await state.workspace(query.workspace)).tree() }),
  });

  r.add({
    method: 'post',
    path: '/sessions',
    summary: 'start a new session',
    body: workspaceBody.extend({
      title: z.string().max(1000).optional(),
      id: nameString().optional(),
      /** Take the workspace's scan baseline now (default true), so the first shell command is recorded. */
      baseline: z.boolean().optional(),
    }),
    handler: async ({ body }) => {
      const ws = await state.workspace(body.workspace, { register: true });
      const created = await ws.create({ title: body.title, id: body.id, baseline: body.baseline });
      return { session: await created.metadata() };
    },
  });

  route('GET', {
    summary: 'one session: metadata, turn and capture counts, size (id `~latest`: the newest)',
    query: workspaceQuery,
    handler: async ({ s }) => {
      const events = await s.events();
      const { id: _id, ...size } = await sessionSize(s);
      return {
        session: await s.metadata(),
        turns: events.filter((e) => e.type === 'turn').length,
        captures: events.filter((e) => e.type === 'capture').length,
        size,
      };
    },
  });

  route('POST /fork', {
    summary: 'fork a session at a tag (default: its end)',
    body: workspaceBody.extend({ at: tagField.optional(), title: z.string().max(1000).optional(), id: nameString().optional() }),
    handler: async ({ s: parent, body }) => {
      const ws = await state.workspace(body.workspace);
      // By tag: a fork at `N.K` is placed as restore places it (store.ts).
      const fork = await ws.fork(parent.id, { ...(body.at !== undefined ? { atTag: body.at } : {}), title: body.title, id: body.id });
      return { session: await fork.metadata() };
    },
  });

  r.add({
    method: 'delete',
    path: '/sessions/:id',
    summary: 'remove a session (its content is freed by the next gc)',
    query: workspaceQuery,
    // The workspace first: an unknown one answers NOT_FOUND, as it always has, not SESSION_NOT_FOUND.
    handler: async ({ query, params }) => {
      const ws = await state.workspace(query.workspace);
      const s = await state.session(query.workspace, params.id!);
      await ws.remove(s.id);
      state.forget(ws, s.id);
      return { removed: s.id };
    },
  });
}
