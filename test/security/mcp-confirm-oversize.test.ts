// Hostile-agent cases of `ckpt mcp` (issue 27 items 5 and 11; issue 29): the model holds a preview
// token, so with the "person must confirm" setting (--require-person) only a person's yes through the
// client (elicitation accepted) may run a destructive tool; a client that cancels every question
// (Claude Code in print mode) falls back to the token only without that setting. And one oversize
// message must not take the server down for the rest of the agent's session.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startMcp, textOf } from '../helpers/mcp.js';
import { makeTempDirs } from '../helpers/temp.js';

describe('ckpt mcp: a client that cancels every confirmation, and the "person must confirm" setting', () => {
  async function scenario(options: { args?: string[]; elicit?: 'cancel' | 'accept' | 'decline'; env?: boolean }) {
    const local = await makeTempDirs('ckpt-mcp-cancel-');
    const asked: string[] = [];
    const m = await startMcp({
      store: local.store,
      workspace: local.workspace,
      args: options.args,
      ...(options.elicit
        ? { elicit: (p) => (asked.push(p.message), options.elicit === 'accept' ? { action: 'accept', content: { confirm: true } } : { action: options.elicit! }) }
        : {}),
    });
    await writeFile(join(local.workspace, 'c.txt'), 'before\n');
    await m.ok('session_new', {});
    await m.ok('turn', {});
    await m.ok('checkpoint', { paths: ['c.txt'] });
    await writeFile(join(local.workspace, 'c.txt'), 'after\n');
    await m.ok('settle', { paths: ['c.txt'] });
    const preview = await m.ok('restore_preview', { tag: '1' });
    const content = () => readFile(join(local.workspace, 'c.txt'), 'utf8');
    const done = async () => {
      await m.close();
      await local.cleanup();
    };
    return { m, asked, preview, content, done };
  }

  it('falls back to the preview token when the client cancels (as `claude -p` does)', async () => {
    const s = await scenario({ elicit: 'cancel' });
    try {
      const r = await s.m.call('restore', { tag: '1', token: s.preview.token });
      expect(r.isError, textOf(r)).toBeFalsy();
      expect(textOf(r)).toContain('cancelled the confirmation prompt');
      expect(s.asked).toHaveLength(1);
      expect(await s.content()).toBe('before\n');
    } finally {
      await s.done();
    }
  });

  it('a person declining still refuses', async () => {
    const s = await scenario({ elicit: 'decline' });
    try {
      expect(await s.m.fails('restore', { tag: '1', token: s.preview.token })).toMatchObject({ code: 'INVALID_ARGUMENT', data: { action: 'decline' } });
      expect(await s.content()).toBe('after\n');
    } finally {
      await s.done();
    }
  });

  it('with --require-person, a cancel is refused and changes nothing', async () => {
    const s = await scenario({ elicit: 'cancel', args: ['--require-person'] });
    try {
      const refused = await s.m.fails('restore', { tag: '1', token: s.preview.token });
      expect(refused).toMatchObject({ code: 'FORBIDDEN', data: { personRequired: true } });
      expect(refused.text).toContain('cancelled');
      expect(await s.content()).toBe('after\n');
    } finally {
      await s.done();
    }
  });

  it('with --require-person, a client that cannot ask is refused; the token alone is not enough', async () => {
    const s = await scenario({ args: ['--require-person'] });
    try {
      expect(await s.m.fails('restore', { tag: '1', token: s.preview.token })).toMatchObject({ code: 'FORBIDDEN', data: { personRequired: true } });
      expect(await s.content()).toBe('after\n');
      // Reading and previewing still work.
      expect((await s.m.ok('restore_preview', { tag: '1' })).plan).toEqual([{ path: 'c.txt', action: 'write' }]);
    } finally {
      await s.done();
    }
  });

  it("shows the person the plan's paths quoted: a file name cannot forge a line of the plan (SECURITY promise 7)", async () => {
    const local = await makeTempDirs('ckpt-mcp-forge-');
    const asked: string[] = [];
    const m = await startMcp({ store: local.store, workspace: local.workspace, args: ['--require-person'], elicit: (p) => (asked.push(p.message), { action: 'decline' }) });
    try {
      // The agent makes two files after turn 1: a restore to 1 deletes both. One name holds a forged plan line.
      const forged = 'notes.txt\n  write  keep.txt  (kept as it is)';
      await m.ok('session_new', {});
      await m.ok('turn', {});
      await m.ok('checkpoint', { paths: ['keep.txt', forged] });
      await writeFile(join(local.workspace, 'keep.txt'), 'the user needs this\n');
      await writeFile(join(local.workspace, forged), 'x\n');
      await m.ok('settle', { paths: ['keep.txt', forged] });
      const preview = await m.ok('restore_preview', { tag: '1' });
      expect(preview.plan.map((e: { action: string }) => e.action)).toEqual(['delete', 'delete']);
      expect((await m.fails('restore', { tag: '1', token: preview.token })).data).toMatchObject({ action: 'decline' });
      expect(asked).toHaveLength(1);
      const lines = asked[0]!.split('\n');
      expect(lines.filter((l) => /^\s+(write|delete)\s/.test(l))).toEqual(['  delete keep.txt', `  delete ${JSON.stringify(forged)}`]);
      expect(await readFile(join(local.workspace, 'keep.txt'), 'utf8')).toBe('the user needs this\n');
    } finally {
      await m.close();
      await local.cleanup();
    }
  });

  it('with --require-person, a person accepting runs it', async () => {
    const s = await scenario({ elicit: 'accept', args: ['--require-person'] });
    try {
      expect(await s.m.ok('restore', { tag: '1', token: s.preview.token })).toMatchObject({ restored: ['c.txt'] });
      expect(s.asked).toHaveLength(1);
      expect(await s.content()).toBe('before\n');
    } finally {
      await s.done();
    }
  });
});

describe('ckpt mcp: one oversize message (issue 27, item 11)', () => {
  it('answers a message over 10 MiB with an error and keeps serving', async () => {
    const local = await makeTempDirs('ckpt-mcp-big-');
    const m = await startMcp({ store: local.store, workspace: local.workspace });
    try {
      await m.ok('session_new', {});
      const big = m.client.callTool({ name: 'checkpoint', arguments: { paths: ['x'.repeat(11 * 1024 * 1024)] } });
      await expect(big).rejects.toMatchObject({ code: -32600, message: expect.stringContaining('limit of ckpt mcp') });
      // Still serving, on the same connection.
      expect((await m.ok('session_list', {})).sessions).toHaveLength(1);
      expect(m.stderr()).toContain('dropped');
    } finally {
      await m.close();
      await local.cleanup();
    }
  }, 60_000);
});
