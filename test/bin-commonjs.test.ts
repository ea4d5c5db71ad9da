// bin/ckpt.js is CommonJS and runs a hook (and an exact scan call) from the build's standalone CommonJS
// entries, so that such a process never starts Node's ES module loader (DESIGN §10 "The hook path in
// CommonJS"). Needs `npm run build` (the entries are the bundle's).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CKPT_BIN } from './helpers/cli.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const bundle = join(root, 'dist', 'bundle');
const temp = mkdtempSync(join(tmpdir(), 'ckpt-bin-cjs-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** Runs bin/ckpt.js with a preload that prints, at exit, which ckpt files were required as CommonJS. */
function run(args: string[], input: string, cwd: string): { status: number | null; stdout: string; stderr: string; required: string[] } {
  const preload = join(temp, 'report-required.cjs');
  const report = join(temp, `required-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(preload, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(report)}, JSON.stringify(Object.keys(require.cache))));\n`);
  const r = spawnSync(process.execPath, ['--require', preload, CKPT_BIN, ...args], { input, cwd, encoding: 'utf8', env: { ...process.env, CKPT_NO_DAEMON: '1', CLAUDE_PROJECT_DIR: cwd } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, required: JSON.parse(readFileSync(report, 'utf8')) as string[] };
}

describe('bin/ckpt.js (CommonJS)', () => {
  it('is CommonJS, and the build has the CommonJS hook and scan entries with their exports', () => {
    expect(JSON.parse(readFileSync(join(root, 'bin', 'package.json'), 'utf8')).type).toBe('commonjs');
    const req = createRequire(import.meta.url);
    expect(Object.keys(req(join(bundle, 'hook-client.cjs')))).toEqual(expect.arrayContaining(['hookClient', 'parseHookArgs']));
    expect(Object.keys(req(join(bundle, 'hook-main.cjs')))).toEqual(expect.arrayContaining(['hookMain', 'parseHookArgs']));
    expect(Object.keys(req(join(bundle, 'scan-main.cjs')))).toEqual(expect.arrayContaining(['isScanCall', 'scanMain']));
  });

  it('records a hook in-process from hook-client.cjs and hook-main.cjs', () => {
    const ws = mkdtempSync(join(temp, 'ws-'));
    writeFileSync(join(ws, 'a.txt'), 'one\n');
    const store = join(temp, 'store-hook');
    const event = { session_id: 'cjs', transcript_path: join(ws, 't.jsonl'), cwd: ws, hook_event_name: 'UserPromptSubmit', prompt: 'hello' };
    const r = run(['--store', store, 'hook', 'claude'], JSON.stringify(event), ws);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.required).toEqual(expect.arrayContaining([join(bundle, 'hook-client.cjs'), join(bundle, 'hook-main.cjs')]));
    // Recorded: the session exists with its first turn.
    const list = spawnSync(process.execPath, [CKPT_BIN, '--store', store, '--workspace', ws, 'session', 'list', '--json'], { encoding: 'utf8' });
    expect(list.status).toBe(0);
    expect(list.stdout).toContain('claude-cjs');
  });

  it('runs an exact scan call from scan-main.cjs, and anything else through the ESM CLI', () => {
    const ws = mkdtempSync(join(temp, 'ws-'));
    writeFileSync(join(ws, 'b.txt'), 'two\n');
    const store = join(temp, 'store-scan');
    expect(spawnSync(process.execPath, [CKPT_BIN, '--store', store, '--workspace', ws, 'session', 'new'], { encoding: 'utf8' }).status).toBe(0);
    const scan = run(['--store', store, '--workspace', ws, '--json', 'scan'], '', ws);
    expect(scan.status).toBe(0);
    expect(JSON.parse(scan.stdout).scanned).toBe(1);
    expect(scan.required).toContain(join(bundle, 'scan-main.cjs'));
    const version = run(['--version'], '', ws);
    expect(version.status).toBe(0);
    expect(version.required.some((f) => f.endsWith('.cjs') && f.startsWith(bundle))).toBe(false);
  });
});
