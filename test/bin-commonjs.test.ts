// bin/ckpt.js is CommonJS and runs a hook (and an exact scan call) from the build's standalone CommonJS
// entries, so that such a process never starts Node's ES module loader (DESIGN §10 "The hook path in
// CommonJS"). Needs `npm run build` (the entries are the bundle's).
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
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

describe.skipIf(typeof (Module as { enableCompileCache?: unknown }).enableCompileCache === 'function')('the code cache of the CommonJS entries (Node < 22.1)', () => {
  /** A private copy of bin/ and the build's CommonJS entries (its caches are this test's alone). */
  function copyPackage(): { bin: string; build: string } {
    const pkg = mkdtempSync(join(temp, 'pkg-'));
    mkdirSync(join(pkg, 'bin'));
    for (const f of ['ckpt.js', 'package.json']) copyFileSync(join(root, 'bin', f), join(pkg, 'bin', f));
    mkdirSync(join(pkg, 'dist', 'bundle'), { recursive: true });
    let buildRel = '';
    for (const f of ['main.js', 'hook-client.cjs', 'hook-main.cjs', 'scan-main.cjs']) {
      const stub = readFileSync(join(bundle, f), 'utf8');
      writeFileSync(join(pkg, 'dist', 'bundle', f), stub);
      const target = /require\('(\.\.\/builds\/[^']+)'\)/.exec(stub)?.[1];
      if (!target) continue;
      buildRel = dirname(target);
      mkdirSync(join(pkg, 'dist', 'bundle', buildRel), { recursive: true });
      copyFileSync(join(bundle, target), join(pkg, 'dist', 'bundle', target));
    }
    symlinkSync(join(root, 'node_modules'), join(pkg, 'node_modules'));
    return { bin: join(pkg, 'bin', 'ckpt.js'), build: join(pkg, 'dist', 'bundle', buildRel) };
  }

  it('is written beside the entry after a first hook, used by the next (left as it is), and a refused one is replaced', () => {
    const { bin, build } = copyPackage();
    const ws = mkdtempSync(join(temp, 'ws-'));
    const store = join(temp, 'store-cache');
    const hook = (id: string, env: NodeJS.ProcessEnv = {}) => {
      const event = { session_id: 'cache', transcript_path: join(ws, 't.jsonl'), cwd: ws, hook_event_name: 'UserPromptSubmit', prompt: id };
      const r = spawnSync(process.execPath, [bin, '--store', store, 'hook', 'claude'], { input: JSON.stringify(event), cwd: ws, encoding: 'utf8', env: { ...process.env, CKPT_NO_DAEMON: '1', CLAUDE_PROJECT_DIR: ws, ...env } });
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
    };
    const caches = () => readdirSync(build).filter((f) => f.endsWith('.v8cache')).sort();
    hook('off', { CKPT_CODE_CACHE: '0' });
    expect(caches()).toEqual([]);
    hook('first');
    const tag = `${process.version}-${process.arch}.v8cache`;
    expect(caches()).toEqual([`hook-client.cjs.${tag}`, `hook-main.cjs.${tag}`]);
    const main = join(build, `hook-main.cjs.${tag}`);
    const first = statSync(main);
    expect(first.size).toBeGreaterThan(10_000);
    hook('second');
    const second = statSync(main);
    expect([second.ino, second.mtimeMs]).toEqual([first.ino, first.mtimeMs]);
    writeFileSync(main, 'not a code cache');
    hook('third');
    expect(statSync(main).size).toBeGreaterThan(10_000);
    // The entry edited in place at the same length: its cache is not used (V8 would take it: it
    // checks the length only), and the new code runs — here an entry that throws, said on stderr.
    const code = join(build, 'hook-main.cjs');
    const text = readFileSync(code, 'utf8');
    const broken = text.replace(/^"use strict";/m, 'throw 42;    ');
    expect(broken.length).toBe(text.length);
    expect(broken).not.toBe(text);
    writeFileSync(code, broken);
    const event = { session_id: 'cache', transcript_path: join(ws, 't.jsonl'), cwd: ws, hook_event_name: 'UserPromptSubmit', prompt: 'edited' };
    const r = spawnSync(process.execPath, [bin, '--store', store, 'hook', 'claude'], { input: JSON.stringify(event), cwd: ws, encoding: 'utf8', env: { ...process.env, CKPT_NO_DAEMON: '1', CLAUDE_PROJECT_DIR: ws } });
    expect(r.stderr).toContain('42');
    writeFileSync(code, text);
    // Every hook with the entry whole was recorded: four prompts, four turns of one session.
    const list = spawnSync(process.execPath, [CKPT_BIN, '--store', store, '--workspace', ws, 'log', '--session', 'claude-cache', '--json'], { encoding: 'utf8' });
    expect(list.status).toBe(0);
    expect((JSON.parse(list.stdout) as { turns: unknown[] }).turns).toHaveLength(4);
  });

  it("the entries load no module by import() where Node has getBuiltinModule (in a cached script it needs Node's experimental loader, which warns on stderr)", () => {
    for (const f of ['hook-client.cjs', 'hook-main.cjs', 'scan-main.cjs']) {
      const stub = readFileSync(join(bundle, f), 'utf8');
      const text = readFileSync(join(bundle, /require\('([^']+)'\)/.exec(stub)![1]!), 'utf8');
      const lines = text.split('\n').filter((l) => /\bimport\(/.test(l));
      for (const line of lines) expect(line, f).toMatch(/getBuiltinModule\?\.\(("node:[a-z_/]+")\) \?\? \(?await import\(\1\)/);
    }
  });
});

describe('the thread pool of the whole CLI', () => {
  /** Threads of a `ckpt log` process at its exit (Linux: /proc/self/task), with `env` added. */
  function threads(env: NodeJS.ProcessEnv): number {
    const ws = mkdtempSync(join(temp, 'ws-'));
    const preload = join(temp, 'count-threads.cjs');
    const report = join(temp, `threads-${Math.random().toString(36).slice(2)}`);
    writeFileSync(preload, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(report)}, String(require('node:fs').readdirSync('/proc/self/task').length)));\n`);
    const store = join(temp, 'store-threads');
    spawnSync(process.execPath, ['--require', preload, CKPT_BIN, '--store', store, '--workspace', ws, 'session', 'new'], { encoding: 'utf8', env: { ...process.env, ...env } });
    return Number(readFileSync(report, 'utf8'));
  }

  it.skipIf(process.platform !== 'linux')('has 32 threads for the flushes of a restore, unless the user set UV_THREADPOOL_SIZE', () => {
    expect(threads({ UV_THREADPOOL_SIZE: undefined })).toBeGreaterThanOrEqual(32);
    expect(threads({ UV_THREADPOOL_SIZE: '4' })).toBeLessThan(32);
  });
});
