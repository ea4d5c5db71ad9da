// The library side of agent integration (issue 11): the baseline trap (a new session takes the
// workspace's scan baseline, so the first scan after a shell command records it; a scan that had to
// take the baseline says so), sessions tied to an agent's id, and settles matched to their tool call.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agentSessionId, hasBaseline, openStore, type Workspace } from '../src/index.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
let ws: Workspace;
beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-agent-');
  ws = await (await openStore({ dir: dirs.store })).openWorkspace(dirs.workspace);
  await writeFile(join(dirs.workspace, 'a.txt'), 'a\n');
});
afterEach(() => dirs.cleanup());

describe('the baseline trap', () => {
  it('a new session takes the baseline: the first shell command after it is recorded and undone', async () => {
    const session = await ws.create();
    expect(await hasBaseline(session)).toBe(true);
    await session.turn({ text: 'delete a' });
    await writeFile(join(dirs.workspace, 'a.txt'), 'changed by a shell command\n');
    const r = await session.scan({ tool: 'Bash' });
    expect(r).toMatchObject({ tag: '1.1', files: [{ path: 'a.txt', change: 'modified' }] });
    expect(r.baseline).toBeUndefined();
    await session.restore('1');
    expect(await import('node:fs/promises').then((f) => f.readFile(join(dirs.workspace, 'a.txt'), 'utf8'))).toBe('a\n');
  });

  it('without it, the scan that had to take the baseline says loudly what it could not record', async () => {
    const session = await ws.create({ baseline: false });
    expect(await hasBaseline(session)).toBe(false);
    const r = await session.scan();
    expect(r).toMatchObject({ tag: null, baseline: true });
    expect(r.warning).toMatch(/no scan baseline/);
  });
});

describe('agent sessions', () => {
  it('find-or-create by the agent id: created once (with the link in its metadata), found afterwards', async () => {
    const link = { agent: 'claude', externalId: '2b7c3f9e-1d4a', cwd: dirs.workspace, transcriptPath: '/t.jsonl' };
    const first = await ws.openAgentSession(link);
    expect(first).toMatchObject({ created: true });
    expect(first.session.id).toBe('claude-2b7c3f9e-1d4a');
    const again = await ws.openAgentSession({ ...link, transcriptPath: '/other.jsonl' });
    expect(again.created).toBe(false);
    expect(again.session.id).toBe(first.session.id);
    expect(await again.session.metadata()).toMatchObject(link);
    expect((await ws.list()).map((m) => m.id)).toEqual([first.session.id]);
  });

  it('ids that are not valid session ids are hashed; the id is a pure function of agent and external id', () => {
    expect(agentSessionId('gemini', 'a b/c')).toMatch(/^gemini-h[0-9a-f]{40}$/);
    expect(agentSessionId('gemini', 'a b/c')).toBe(agentSessionId('gemini', 'a b/c'));
    expect(agentSessionId('claude', 'x'.repeat(120))).toMatch(/^claude-h/);
    expect(() => agentSessionId('Claude!', 'x')).toThrow(/invalid agent name/);
  });

  it('parallel tool calls: each settle finds the capture of its own call', async () => {
    const { session } = await ws.openAgentSession({ agent: 'claude', externalId: 's1' });
    await writeFile(join(dirs.workspace, 'b.txt'), 'b\n');
    await session.turn();
    const a = await session.capture(['a.txt'], { tool: 'Edit', callId: 'call-a' });
    const b = await session.capture(['b.txt'], { tool: 'Edit', callId: 'call-b' });
    await writeFile(join(dirs.workspace, 'a.txt'), 'a2\n');
    expect((await session.settle(['a.txt'], { callId: 'call-a' })).tag).toBe(a.tag);
    expect((await session.settle(['b.txt'], { callId: 'call-b' })).tag).toBe(b.tag);
    await expect(session.settle(['a.txt'], { callId: 'nope' })).rejects.toMatchObject({ code: 'TAG_NOT_FOUND' });
  });
});
