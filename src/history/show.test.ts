import { writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { useAgentWorld } from '../../test/helpers/lib-session.js';
import type { Session } from '../api/session.js';

let session: Session;
const { w, agentWrite } = useAgentWorld('ckpt-show-', (world) => ({ session } = world));

describe('session.show', () => {
  it('describes a turn tag: the turn with its text, the next checkpoint, the captures of the turn', async () => {
    await writeFile(w('a.txt'), 'one\n');
    await session.turn({ messageCount: 4, text: 'make it two' });
    await agentWrite('a.txt', 'two\n', 'Edit');
    await agentWrite('b.txt', 'new\n');
    const info = await session.show('1');
    expect(info.turn).toMatchObject({ turn: 1, messageCount: 4, text: 'make it two' });
    expect(info.event?.type).toBe('turn');
    expect(info.next).toMatchObject({ tag: '1.1', tool: 'Edit', files: [{ path: 'a.txt', state: 'file', bytes: 4 }] });
    expect(info.turnCaptures).toEqual(['1.1', '1.2']);
    expect(info.capturesAfter).toBe(2);
    expect(info.pathsAfter).toBe(2);
    expect(info.lastSeq).toBe((await session.events()).at(-1)!.seq);
  });

  it('describes N.K as the point just before capture N.K, and @S by seq', async () => {
    await session.turn({ text: 'first' });
    await agentWrite('a.txt', 'x');
    await session.turn({ text: 'second' });
    await agentWrite('b.txt', 'y', 'Bash');
    const k = await session.show('2.1');
    expect(k.next).toMatchObject({ tag: '2.1', tool: 'Bash', files: [{ path: 'b.txt', state: 'absent' }] });
    expect(k.turn).toMatchObject({ turn: 2, text: 'second' });
    expect(k.capturesAfter).toBe(1);
    const seq = await session.show(`@${k.position}`);
    expect(seq.position).toBe(k.position);
    expect(seq.next?.tag).toBe('2.1');
    const start = await session.show('0');
    expect(start.turn).toEqual({ turn: 0, messageCount: null });
    expect(start.capturesAfter).toBe(2);
  });

  it('names what is wrong with a tag', async () => {
    await expect(session.show('9')).rejects.toMatchObject({ code: 'TAG_NOT_FOUND' });
    await expect(session.show('x')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});
