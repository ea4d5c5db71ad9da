// `ckpt mcp` driven by a client nobody here wrote: the MCP Inspector CLI (npm
// @modelcontextprotocol/inspector, installed once into the test tools cache, see helpers/npm-tool.ts).
// Each Inspector call starts a new server, types arguments from `key=value` (a bare number is a JSON
// number), and lints every published schema for portability (issue 29, "MCP with other clients").
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CKPT_BIN } from './helpers/cli.js';
import { npmTool } from './helpers/npm-tool.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

const INSPECTOR_VERSION = '2.12.0';
const exec = promisify(execFile);

let dirs: TempDirs;
let inspector: string;

beforeAll(async () => {
  dirs = await makeTempDirs('ckpt-inspector-');
  const tool = await npmTool('@modelcontextprotocol/inspector', INSPECTOR_VERSION);
  inspector = join(tool, 'node_modules', '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js');
}, 320_000);
afterAll(async () => {
  await dirs?.cleanup();
});

/** One Inspector CLI call (a new `ckpt mcp` process each time); exit code, stdout JSON and stderr. */
async function inspect(args: string[]): Promise<{ code: number; json: any; stderr: string }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const server = [process.execPath, CKPT_BIN, 'mcp', '--store', dirs.store, '--workspace', dirs.workspace];
  try {
    const r = await exec(process.execPath, [inspector, '--cli', ...server, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: dirs.base },
      cwd: dirs.base,
      maxBuffer: 64 * 1024 * 1024,
      timeout: 60_000,
    });
    return { code: 0, json: JSON.parse(r.stdout), stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    let json: unknown;
    try {
      json = JSON.parse(e.stdout ?? '');
    } catch {
      json = undefined;
    }
    return { code: typeof e.code === 'number' ? e.code : -1, json, stderr: `${e.stderr ?? ''}${String(err)}` };
  }
}

const call = (tool: string, ...args: string[]) => inspect(['--method', 'tools/call', '--tool-name', tool, ...(args.length ? ['--tool-arg', ...args] : [])]);

describe('ckpt mcp under the MCP Inspector CLI', () => {
  it('publishes schemas with no portability warning', async () => {
    const r = await inspect(['--strict', '--method', 'tools/list']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.tools.length).toBeGreaterThan(15);
    // --strict details each finding ("Warning: tool …"); without it a count is printed when there is any.
    expect(r.stderr).not.toMatch(/Warning: tool|Error: tool/);
    const plain = await inspect(['--method', 'tools/list']);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).not.toMatch(/[1-9]\d* (warning|error)/);
  });

  it('records, diffs with a numeric tag, and previews then confirms in separate server processes', async () => {
    const file = join(dirs.workspace, 'a.txt');
    await writeFile(file, 'first\n');
    const created = await call('session_new');
    expect(created.code, created.stderr).toBe(0);
    expect((await call('turn')).json.structuredContent).toMatchObject({ turn: 1 });
    expect((await call('checkpoint', 'paths=["a.txt"]')).json.structuredContent).toMatchObject({ tag: '1.1' });
    await writeFile(file, 'second\n');
    await call('settle', 'paths=["a.txt"]');

    // `from=1` arrives as the JSON number 1.
    const diff = await call('diff', 'from=1');
    expect(diff.json.isError, JSON.stringify(diff.json)).toBeFalsy();
    expect(diff.json.structuredContent.changes).toEqual([{ path: 'a.txt', status: 'M', added: 1, removed: 1 }]);

    const preview = await call('restore_preview', 'tag=1');
    expect(preview.json.structuredContent.plan).toEqual([{ path: 'a.txt', action: 'write' }]);
    const token = preview.json.structuredContent.token as string;
    expect(await readFile(file, 'utf8')).toBe('second\n');

    // A new server process: the token is the store's, so it is accepted.
    const restored = await call('restore', 'tag=1', `token=${token}`);
    expect(restored.json.isError, JSON.stringify(restored.json)).toBeFalsy();
    expect(restored.json.structuredContent).toMatchObject({ to: '1', restored: ['a.txt'] });
    expect(await readFile(file, 'utf8')).toBe('first\n');

    // And spent by the restore it confirmed.
    const again = await call('restore', 'tag=1', `token=${token}`);
    expect(again.json.isError).toBe(true);
    expect(JSON.stringify(again.json)).toContain('TOKEN_STALE');
  });
});
