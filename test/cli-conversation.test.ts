// End-to-end: `ckpt conversation` and the resumable-session flags through the real CLI binary.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
const ckpt = (args: string[], input?: string) => runCli(['--store', dirs.store, ...args], { cwd: dirs.workspace, input });

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-cli-conv-');
});
afterEach(() => dirs.cleanup());

describe('ckpt conversation', () => {
  it('append (args and stdin, unless-exists), show, compact, messages, and rewind hiding entries', async () => {
    await ckpt(['session', 'new', '--id', 's1', '--json']);
    await ckpt(['turn', '--text', 'fix the bug', '--json']);
    const a = await ckpt(['conversation', 'append', '{"type":"message","id":"u1","text":"fix the bug"}', '--json']);
    expect(a.code, a.stderr).toBe(0);
    expect(a.json()).toEqual({ appended: [{ seq: 3, type: 'message', id: 'u1' }], existing: [] });
    const lines = '{"type":"message","id":"a1","text":"looking"}\n{"type":"tool_call","id":"t1","name":"Edit"}\n';
    const b = await ckpt(['conv', 'append', '-', '--unless-exists', '--json'], lines);
    expect(b.json().appended.map((e: { id: string }) => e.id)).toEqual(['a1', 't1']);
    const again = await ckpt(['conv', 'append', '-', '--unless-exists', '--json'], lines);
    expect(again.json()).toEqual({ appended: [], existing: ['a1', 't1'] });

    const bad = await ckpt(['conv', 'append', '{"type":"capture"}', '--json']);
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stderr).error.code).toBe('INVALID_ARGUMENT');
    expect((await ckpt(['conv', 'append', 'not json', '--json'])).code).toBe(2);

    const plan = (await ckpt(['conv', 'compact', '--preserve-last', '1', '--dry-run', '--json'])).json().plan;
    expect(plan.compactable.map((e: { id: string }) => e.id)).toEqual(['u1', 'a1']);
    const c = await ckpt(['conv', 'compact', '--summary', 'asked to fix; looked', '--preserve-last', '1', '--through-seq', String(plan.throughSeq), '--json']);
    expect(c.code, c.stderr).toBe(0);
    const shown = (await ckpt(['conv', 'show', '--json'])).json().events;
    expect(shown.map((e: { type: string; id?: string }) => e.id ?? e.type)).toEqual(['compaction', 't1']);
    const all = (await ckpt(['conv', 'show', '--all', '--json'])).json().events;
    expect(all.filter((e: { live: boolean }) => !e.live).map((e: { id: string }) => e.id)).toEqual(['u1', 'a1']);
    expect((await ckpt(['conv', 'show'])).stdout).toContain('summary: asked to fix; looked');

    const messages = (await ckpt(['conv', 'messages', '--json'])).json().messages;
    expect(messages).toEqual([{ id: 't1', seq: 5, type: 'tool_call', before: '@4', after: '@5', turn: 1 }]);

    const dry = (await ckpt(['rewind', '1', '--dry-run', '--json'])).json();
    expect(dry.userMessage).toEqual({ turn: 1, text: 'fix the bug' });
    expect(dry.hidden.map((e: { id?: string; type: string }) => e.id ?? e.type)).toEqual(['compaction', 't1']);
    // In words: a dry run says what would happen (a newcomer probe: it said "rewound").
    const dryText = (await ckpt(['rewind', '1', '--dry-run'])).stdout;
    expect(dryText).toContain('the conversation would be rewound to turn 1');
    expect(dryText).not.toContain('conversation rewound');
  });

  it('session end, list --resumable, and a new turn resuming', async () => {
    await ckpt(['session', 'new', '--id', 'main1', '--json']);
    await ckpt(['session', 'new', '--id', 'kid', '--parent', 'main1', '--json']);
    const ids = async () => (await ckpt(['session', 'list', '--resumable', '--json'])).json().sessions.map((s: { id: string }) => s.id);
    expect(await ids()).toEqual(['main1']);
    const ended = await ckpt(['session', 'end', 'main1', '--reason', 'closed', '--json']);
    expect(ended.json().session.endedAt).toBeTypeOf('string');
    expect(await ids()).toEqual([]);
    // The list says why it is not resumable; a turn resumes it.
    expect((await ckpt(['session', 'list'])).stdout).toMatch(/^main1 +root .*\(ended\)$/m);
    await ckpt(['--session', 'main1', 'turn', '--json']);
    expect(await ids()).toEqual(['main1']);
    expect((await ckpt(['session', 'list'])).stdout).not.toContain('(ended)');
  });
});
