// Sets ckpt up in a project the way a user would before starting an agent, with the built CLI
// (bin/ckpt.js; `npm run build` first), in one of three hook modes:
// - `command`: `ckpt init <agent> --command` with CKPT_NO_DAEMON=1 in the agent's environment: every
//   event is a hook process that records in-process (the path without any daemon);
// - `http`: `ckpt serve` + `ckpt init <agent> --http`: every event that can be is an HTTP hook to the
//   daemon (SessionStart stays a command hook);
// - `default`: plain `ckpt init <agent>` (it starts the daemon): per-tool-call HTTP hooks, per-prompt
//   command hooks forwarding to the daemon.
// `ckpt(args)` runs the CLI on that store and workspace. `stop()` ends the daemon of the store (the one
// it spawned, or the one init or a hook started, by the pid in the store's daemon claim).
import { spawn, type ChildProcess } from 'node:child_process';
import { CKPT_BIN, runCli, type CliRun } from '../../helpers/cli.js';
import { stopStoreDaemon } from './stop-store-daemon.js';

export type HookMode = 'command' | 'http' | 'default';

export interface CkptForAgent {
  mode: HookMode;
  /** Environment the agent must run with (the daemon's token for HTTP hooks). */
  agentEnv: Record<string, string>;
  /** The ckpt CLI on this store, from the workspace (HOME = the agent's scratch home). */
  ckpt(args: string[]): Promise<CliRun>;
  /** Like `ckpt` with `--json`, failing with the CLI's own words when the exit code is not 0. */
  json(args: string[]): Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  stop(): Promise<void>;
}

export async function setupCkpt(options: { agent: 'claude'; mode: HookMode; store: string; workspace: string; home: string }): Promise<CkptForAgent> {
  const { store, workspace, home } = options;
  const env = { HOME: home, CKPT_HOME: '', CKPT_STORE: '' };
  const ckpt = (args: string[]) => runCli(['--store', store, ...args], { cwd: workspace, env });
  const json = async (args: string[]) => {
    const r = await ckpt([...args, '--json']);
    if (r.code !== 0) throw new Error(`ckpt ${args.join(' ')} exited ${r.code}: ${r.stderr || r.stdout}`);
    return r.json();
  };
  let daemon: ChildProcess | undefined;
  const agentEnv: Record<string, string> = {};
  if (options.mode === 'http') {
    daemon = spawn(process.execPath, [CKPT_BIN, '--store', store, 'serve', '--json'], { cwd: workspace, env: { ...process.env, ...env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    daemon.stderr!.on('data', (d) => (err += d));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`ckpt serve did not start: ${err}`)), 30_000);
      daemon!.stdout!.on('data', (d) => {
        out += d;
        if (out.includes('"url"')) {
          clearTimeout(timer);
          resolve();
        }
      });
      daemon!.on('exit', (code) => reject(new Error(`ckpt serve exited ${code}: ${err}`)));
    });
    agentEnv.CKPT_DAEMON_TOKEN = (await json(['serve', '--print-token'])).token;
    await json(['init', options.agent, '--http']);
  } else if (options.mode === 'command') {
    agentEnv.CKPT_NO_DAEMON = '1';
    await json(['init', options.agent, '--command']);
  } else {
    await json(['init', options.agent]);
  }
  return {
    mode: options.mode,
    agentEnv,
    ckpt,
    json,
    stop: async () => {
      if (daemon && daemon.exitCode === null) {
        const exited = new Promise((resolve) => daemon!.once('exit', resolve));
        daemon.kill('SIGTERM');
        await exited;
      }
      // A daemon started by init or by a hook (detached): its pid is in the store's claim.
      await stopStoreDaemon(store);
    },
  };
}
