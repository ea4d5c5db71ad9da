// The install path the README gives for a clone (issue 29): `npm pack`, then `npm install -g` of the
// tarball — here into a scratch prefix. The installed `ckpt` (found on PATH, as a user would run it)
// writes hooks that run the installed package, not this clone; those hooks record a prompt; and
// `ckpt mcp` from there answers a real MCP client. Needs a build (`npm test` makes one) and npm's
// cache of the dependencies (`npm ci` fills it); ~45 s, so test:full.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdir, readFile, readdir, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeEvents as ev, claudeSession } from './fixtures/claude-events.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

const repo = fileURLToPath(new URL('..', import.meta.url));
let dirs: TempDirs;
let prefix: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  dirs = await makeTempDirs('ckpt-install-');
  prefix = join(dirs.base, 'prefix');
  const home = join(dirs.base, 'home');
  await mkdir(home);
  // The built package as it is (prepack would rebuild it: --ignore-scripts).
  const packed = JSON.parse(execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dirs.base], { cwd: repo, encoding: 'utf8' }));
  const tarball = join(dirs.base, packed[0].filename);
  // Only the current build is shipped, however many older ones the clone keeps.
  const builds = new Set((packed[0].files as { path: string }[]).map((f) => /^dist\/builds\/([^/]+)\//.exec(f.path)?.[1]).filter(Boolean));
  expect(builds.size).toBe(1);
  execFileSync('npm', ['install', '-g', '--prefix', prefix, tarball, '--no-audit', '--no-fund', '--prefer-offline'], { cwd: dirs.base, stdio: 'pipe' });
  // No daemon: init then installs command hooks only, and nothing is left running after the test.
  env = { PATH: `${join(prefix, 'bin')}:${process.env.PATH}`, HOME: home, CKPT_HOME: dirs.store, NO_COLOR: '1', CKPT_NO_DAEMON: '1' };
}, 300_000);
afterAll(() => dirs?.cleanup());

const ckpt = (args: string[], input?: string) => spawnSync('ckpt', args, { cwd: dirs.workspace, env, encoding: 'utf8', input: input ?? '' });

describe('ckpt installed from the packed tarball', () => {
  it('init claude writes hooks that run the installed package, and they record', async () => {
    const installed = await realpath(join(prefix, 'lib', 'node_modules', 'ckpt'));
    const r = ckpt(['init', 'claude', '--json']);
    expect(r.status, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result.ckpt).toMatchObject({ from: 'package', dir: installed });
    // The shell hook client of the installed package (still executable after pack and install), run by node's absolute path.
    expect(result.command).toMatch(new RegExp(`^${join(installed, 'bin', 'ckpt-hook.sh')} ${process.execPath} hook claude\\b`));
    expect(result.command).not.toContain(repo);
    const settings = JSON.parse(await readFile(result.file, 'utf8'));
    const hook = settings.hooks.UserPromptSubmit[0].hooks[0].command as string;
    expect(hook).toBe(result.command);
    // Claude Code runs the hook with sh -c, the event on stdin.
    const s = claudeSession(dirs.workspace);
    for (const event of [ev.sessionStart(s), ev.userPromptSubmit(s, 'make it faster')]) {
      const run = spawnSync('sh', ['-c', hook], { cwd: dirs.workspace, env, encoding: 'utf8', input: JSON.stringify(event) });
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toBe('');
    }
    const log = ckpt(['log', '--json']);
    expect(JSON.parse(log.stdout).turns).toMatchObject([{ turn: 1, text: 'make it faster' }]);
    expect((await readdir(join(installed, 'dist', 'builds'))).filter((n) => !n.startsWith('.'))).toHaveLength(1);
  });

  it('ckpt mcp answers an MCP client', async () => {
    const transport = new StdioClientTransport({ command: 'ckpt', args: ['mcp'], cwd: dirs.workspace, env: env as Record<string, string>, stderr: 'pipe' });
    const client = new Client({ name: 'install-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name)).toContain('restore_preview');
      const status = await client.callTool({ name: 'status', arguments: {} });
      expect(status.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });
});
