import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGENTS } from './agents/index.js';
import { installAgent, settingsFile } from './install/install-agent.js';
import { holdsCkptHooks } from './keep-hooks.js';

describe('holdsCkptHooks', () => {
  it("finds ckpt's hooks in what `ckpt init` writes for every agent (command and shell-client lines), and nowhere else", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ckpt-keep-hooks-'));
    try {
      for (const spec of Object.values(AGENTS)) {
        for (const ckptCommand of ["'/usr/bin/node' '/opt/ckpt/bin/ckpt.js' --store '/s t'", "'/opt/ckpt/bin/ckpt-hook.sh' '/usr/bin/node'"]) {
          const projectDir = join(dir, `${spec.name}-${ckptCommand.length}`);
          await installAgent({ spec, scope: 'project', projectDir, homeDir: join(dir, 'home'), ckptCommand });
          const text = await readFile(settingsFile(spec, 'project', projectDir, join(dir, 'home')), 'utf8');
          expect(holdsCkptHooks(text, spec.name), `${spec.name}: ${text}`).toBe(true);
          // Another agent's hooks are not this one's.
          for (const other of Object.values(AGENTS)) if (other.name !== spec.name && spec.install !== 'opencode-plugin') expect(holdsCkptHooks(text, other.name)).toBe(false);
        }
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    expect(holdsCkptHooks('{"permissions":{"allow":["Bash(npm test)"]},"hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify-send done"}]}]}}', 'claude')).toBe(false);
    expect(holdsCkptHooks('{"hooks":{"PreToolUse":[{"hooks":[{"type":"http","url":"http://127.0.0.1:4100/hooks/claude?workspace=%2Fp"}]}]}}', 'claude')).toBe(true);
    expect(holdsCkptHooks('not json', 'claude')).toBe(false);
    expect(holdsCkptHooks('', 'claude')).toBe(false);
  });
});
