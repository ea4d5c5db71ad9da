// The real Claude Code CLI in a git project whose checkout converts content (`*.txt text eol=crlf`):
// the work tree holds CRLF where git's blobs hold LF, with the index's stat matching. Found
// 2026-12-06: a scan referenced the blob, and `restore` of the turn before the agent's shell rewrite
// gave back LF. Every turn must restore the bytes the user had.
import { describe, expect, it } from 'vitest';
import { makeAgentWorld } from './harness/agent-world.js';
import { tool } from './harness/fake-anthropic-server.js';

const P1 = 'Add a todo file';
const P2 = 'Rewrite the notes';

describe('Claude Code 2.1.328 in a git project with eol=crlf', () => {
  it.each(['command', 'default'] as const)('%s hooks: a shell rewrite of a CRLF-converted file restores to the CRLF bytes', async (mode) => {
    const w = await makeAgentWorld({ kind: 'git', mode, files: { '.gitattributes': '*.txt text eol=crlf\n', 'notes.txt': 'one\ntwo\n', 'src/app.js': "console.log('v1');\n" } });
    try {
      // Checked out again through the conversion: CRLF on disk, LF in git. The index is then rewritten
      // after the file's time (as any later git command that refreshes it leaves it), so its stat
      // entry for notes.txt is not racily clean and matches.
      await w.sh("rm notes.txt && git checkout -- notes.txt && touch -d '1 hour ago' .git/index && git update-index -q --refresh");
      expect(await w.sh('od -c notes.txt')).toContain('\\r');
      await w.prompt(P1, [[tool.bash('echo todo > todo.md')]]);
      await w.prompt(P2, [[tool.bash("printf 'three\\n' > notes.txt")]]);
      expect(await w.checkRestores([{ prompt: P2 }, { prompt: P1 }])).toEqual([]);
      expect(await w.hookFailures(), 'hooks.log (hook failures)').toEqual([]);
    } finally {
      await w.close();
    }
  });

  it.each(['command', 'default'] as const)('%s hooks: the same through an untracked .gitattributes below the root (git applies it on checkout)', async (mode) => {
    const w = await makeAgentWorld({ kind: 'git', mode, files: { 'docs/notes.txt': 'one\ntwo\n', 'src/app.js': "console.log('v1');\n" } });
    try {
      await w.sh("printf '*.txt text eol=crlf\\n' > docs/.gitattributes && rm docs/notes.txt && git checkout -- docs/notes.txt && touch -d '1 hour ago' .git/index && git update-index -q --refresh");
      expect(await w.sh('git status --porcelain')).toContain('?? docs/.gitattributes');
      expect(await w.sh('od -c docs/notes.txt')).toContain('\\r');
      await w.prompt(P1, [[tool.bash('echo todo > todo.md')]]);
      await w.prompt(P2, [[tool.bash("printf 'three\\n' > docs/notes.txt")]]);
      expect(await w.checkRestores([{ prompt: P2 }, { prompt: P1 }])).toEqual([]);
      expect(await w.hookFailures(), 'hooks.log (hook failures)').toEqual([]);
    } finally {
      await w.close();
    }
  });
});
