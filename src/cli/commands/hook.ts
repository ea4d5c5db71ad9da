// `ckpt hook <agent>` (DESIGN §9): reads one hook event of a coding agent on stdin and records it.
// Never fails the agent: the runner turns every failure into exit 0 plus a JSON systemMessage (exit 2
// with CKPT_HOOK_STRICT=1); this command only sets the process exit code it returns.
import { resolve } from 'node:path';
import { defaultStoreDir } from '../../index.js';
import { agentSpec, AGENTS } from '../../hooks/agents/index.js';
import { readCapped } from '../../hooks/hook-input.js';
import { runHook } from '../../hooks/run-hook.js';
import { setExitCode } from '../action.js';
import type { CommandSpec } from '../command-table.js';

export const hookCommand: CommandSpec = {
  use: 'hook <agent>',
  description: `record one hook event of a coding agent (${Object.keys(AGENTS).join(', ')}; its hook JSON on stdin); installed by \`ckpt init <agent>\``,
  options: [['--daemon', "start the store's daemon on demand at a once-per-prompt event (installed by `ckpt init`)"]],
  run: async ([agent], ctx, _out, cmd) => {
    const spec = agentSpec(agent as string);
    const input = await readCapped(ctx.io.stdin);
    const outcome = await runHook({
      spec,
      input,
      env: ctx.io.env,
      storeDir: ctx.flags.store ? resolve(ctx.io.cwd, ctx.flags.store) : defaultStoreDir(ctx.io.env),
      ...(ctx.flags.workspace ? { workspace: resolve(ctx.io.cwd, ctx.flags.workspace) } : {}),
    });
    if (outcome.stdout) ctx.io.stdout.write(outcome.stdout);
    if (outcome.stderr) ctx.io.stderr.write(outcome.stderr);
    setExitCode(cmd, outcome.exitCode);
  },
};
