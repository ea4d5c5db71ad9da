// Fuzz targets for the pure decoders of store bytes and hook input: each gets arbitrary input and
// mutations of valid input, and must either decode to a value that is safe to act on (clean paths,
// ids that are hashes, numbers in range) or fail with its documented code.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { it } from 'vitest';
import { decodeEvent, encodeEvent, type EventBase } from '../../src/format/event.js';
import { BLOB_HEADER_LENGTH, decodeBlobHeader, encodeBlob, isCodecId } from '../../src/format/blob-header.js';
import { availableCodecs, compress } from '../../src/format/blob-codec.js';
import { decodePackIndex, encodePackIndex } from '../../src/format/pack-index.js';
import { formatTag, parseTag } from '../../src/format/tag.js';
import { isBlobId, isStoredPath } from '../../src/format/stored-path.js';
import { decodeVerified } from '../../src/storage/blob-store.js';
import { decodePlan } from '../../src/session/restore-plans.js';
import { decodeHotState, emptyHotState, encodeHotState, foldHot } from '../../src/session/hot-state.js';
import { applyInfo, checkInfoPatch, SESSION_INFO_FIELDS } from '../../src/session/session-info.js';
import { HASH_SHA256, KIND_DIR, KIND_FILE, KIND_SYMLINK, ScanIndex } from '../../src/scan/scan-index.js';
import { HookRejection, parseHookEvent } from '../../src/hooks/hook-input.js';
import { AGENTS } from '../../src/hooks/agents/index.js';
import { applyByteMutation, applyJsonMutation, byteMutation, jsonMutation } from './mutations.js';
import { checkSync, expectCode, type FuzzTally } from './fuzz-run.js';

const BLOB = 'ab'.repeat(32);
const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

const VALID_EVENTS: EventBase[] = [
  { v: 1, seq: 1, type: 'session', at: '2026-01-01T00:00:00.000Z', kind: 'fork', title: 't', parent: 'p', forkedFrom: { session: 'p', seq: 3 }, depth: 1, info: { agent: 'claude' } },
  { v: 1, seq: 2, type: 'turn', at: '2026-01-01T00:00:00.000Z', turn: 1, messageCount: 4, text: 'hi' },
  { v: 1, seq: 3, type: 'capture', at: '2026-01-01T00:00:00.000Z', tag: '1.1', turn: 1, k: 1, tool: 'Edit', files: [{ path: 'a/b.txt', state: 'file', blob: BLOB, bytes: 3, mode: 420 }, { path: 'c', state: 'absent' }, { path: 'l', state: 'symlink', target: '../t' }] },
  { v: 1, seq: 4, type: 'settle', at: '2026-01-01T00:00:00.000Z', tag: '1.1', files: [{ path: 'a/b.txt', state: 'file', blob: BLOB, mode: 420 }] },
  { v: 1, seq: 5, type: 'restore_started', at: '2026-01-01T00:00:00.000Z', id: 'r1', to: '1', recovery: '1.2', plan: [{ path: 'a/b.txt', action: 'write', blob: BLOB, mode: 420 }, { path: 'c', action: 'delete' }, { path: 'd', action: 'mkdir' }] },
  { v: 1, seq: 6, type: 'restore_committed', at: '2026-01-01T00:00:00.000Z', id: 'r1', result: { restored: 2 } },
  { v: 1, seq: 7, type: 'rewind', at: '2026-01-01T00:00:00.000Z', to: '1', watermark: { messageCount: 2 } },
  { v: 1, seq: 8, type: 'conflict', at: '2026-01-01T00:00:00.000Z', path: 'a/b.txt', otherSession: 's', expected: null, actual: null },
  { v: 1, seq: 9, type: 'prune', at: '2026-01-01T00:00:00.000Z', before: 3 },
  { v: 1, seq: 10, type: 'info', at: '2026-01-01T00:00:00.000Z', set: { model: 'm' } },
];

/** Every path an event asks ckpt to act on. */
function actedPaths(e: EventBase): unknown[] {
  const list = (v: unknown): unknown[] => (Array.isArray(v) ? (v as { path?: unknown }[]).map((f) => f?.path) : []);
  if (e.type === 'capture' || e.type === 'settle') return list(e.files);
  if (e.type === 'restore_started') return list(e.plan);
  if (e.type === 'conflict') return [e.path];
  return [];
}

function checkEvent(line: string): void {
  const e = expectCode('decodeEvent', ['LOG_CORRUPT'], () => decodeEvent(line, { line: 1 }));
  if (typeof e === 'string') return;
  if (e.v !== 1 || !Number.isSafeInteger(e.seq) || e.seq < 1 || typeof e.type !== 'string' || typeof e.at !== 'string') throw new Error(`decoded a malformed event: ${line.slice(0, 200)}`);
  for (const p of actedPaths(e)) if (!isStoredPath(p)) throw new Error(`decoded an event with an unclean path ${JSON.stringify(p)}`);
  const images = e.type === 'capture' || e.type === 'settle' ? e.files : e.type === 'restore_started' ? e.plan : [];
  for (const f of (images ?? []) as { blob?: unknown }[]) {
    if (f.blob !== undefined && !isBlobId(f.blob)) throw new Error(`decoded an event with a bad blob id ${JSON.stringify(f.blob)}`);
  }
  if (e.type === 'capture' && typeof e.tag === 'string') expectCode('capture tag', [], () => parseTag(e.tag as string));
}

function checkBlobRecord(id: string, record: Buffer): void {
  const raw = expectCode('decodeVerified', ['BLOB_CORRUPT', 'IO'], () => decodeVerified(id, record, 'loose'));
  if (typeof raw !== 'string' && sha(raw) !== id) throw new Error('decoded a blob that does not match its id');
}

function validPackIndex(): { buf: Buffer; size: number } {
  const entries = Array.from({ length: 12 }, (_, i) => ({ id: sha(Buffer.from(`e${i}`)), offset: 4 + i * 20, length: 20 }));
  return { buf: encodePackIndex(entries, 4 + 12 * 20), size: 4 + 12 * 20 };
}

/** An index whose checksum is recomputed after the mutation: only the structural checks stand between it and a reader. */
function resum(buf: Buffer): Buffer {
  if (buf.length < 32) return buf;
  const out = Buffer.from(buf);
  createHash('sha256').update(out.subarray(0, out.length - 32)).digest().copy(out, out.length - 32);
  return out;
}

function checkPackIndex(buf: Buffer, probes: string[]): void {
  const idx = expectCode('decodePackIndex', ['BLOB_CORRUPT'], () => decodePackIndex(buf, 'p'));
  if (typeof idx === 'string') return;
  for (const e of idx.entries()) {
    if (!Number.isSafeInteger(e.offset) || e.offset < 4 || e.offset + e.length > idx.packSize) throw new Error(`entry out of bounds: ${JSON.stringify(e)}`);
  }
  for (const id of probes) {
    const at = idx.find(id);
    if (at && (at.offset < 4 || at.offset + at.length > idx.packSize)) throw new Error(`find() gave an out-of-bounds entry ${JSON.stringify(at)}`);
  }
}

function validScanIndex(): Buffer {
  const idx = new ScanIndex(4, 1_000);
  const d = idx.push('src', KIND_DIR, { size: 0, mtimeMs: 1, ctimeMs: 1, ino: 1, mode: 0o40755 });
  idx.flags[d] = 0;
  const f = idx.push('src/a.ts', KIND_FILE, { size: 3, mtimeMs: 2, ctimeMs: 2, ino: 2, mode: 0o100644 });
  idx.setHash(f, HASH_SHA256, 'c'.repeat(64));
  const l = idx.push('link', KIND_SYMLINK, { size: 1, mtimeMs: 3, ctimeMs: 3, ino: 3, mode: 0o120777 });
  idx.targets.set(l, '../x');
  return idx.encode();
}

function checkScanIndex(buf: Buffer): void {
  const idx = expectCode('ScanIndex.decode', ['LOG_CORRUPT'], () => ScanIndex.decode(buf));
  if (typeof idx === 'string') return;
  for (const p of [...idx.paths, ...idx.unbaselined]) if (!isStoredPath(p)) throw new Error(`scan index path ${JSON.stringify(p)}`);
}

const VALID_PLAN = Buffer.from(JSON.stringify({ format: 'ckpt-restore-plan/1', plan: (VALID_EVENTS[4]!.plan as unknown[]) }));

function checkPlan(raw: Buffer): void {
  const plan = expectCode('decodePlan', ['LOG_CORRUPT'], () => decodePlan(raw, 5));
  if (typeof plan === 'string') return;
  const seen = new Set<string>();
  for (const e of plan) {
    if (!isStoredPath(e.path) || seen.has(e.path)) throw new Error(`plan path ${JSON.stringify(e.path)}`);
    seen.add(e.path);
    if (e.blob !== undefined && !isBlobId(e.blob)) throw new Error(`plan blob ${JSON.stringify(e.blob)}`);
  }
}

function validHotState(): unknown {
  return encodeHotState(foldHot(emptyHotState(), VALID_EVENTS.slice(0, 6)));
}

/** A decoded snapshot is folded on by capture and settle: every path and image in it must be clean. */
function checkHotState(value: unknown): void {
  const state = decodeHotState(value);
  if (!state) return;
  for (const [path, image] of state.known) {
    if (!isStoredPath(path)) throw new Error(`hot state known path ${JSON.stringify(path)}`);
    if (image && (image.path !== path || (image.blob !== undefined && !isBlobId(image.blob)))) throw new Error(`hot state image ${JSON.stringify(image)}`);
  }
  for (const r of state.recent) for (const f of r.files) if (!isStoredPath(f.path)) throw new Error(`hot state capture path ${JSON.stringify(f.path)}`);
  for (const [id, plan] of state.openPlans) {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) throw new Error(`hot state restore id ${JSON.stringify(id)}`);
    for (const e of plan ?? []) if (!isStoredPath(e?.path)) throw new Error(`hot state plan path ${JSON.stringify(e?.path)}`);
  }
}

const HOOK_INPUTS: Record<string, unknown>[] = [
  { hook_event_name: 'PreToolUse', session_id: 's1', cwd: '/tmp/ws', transcript_path: '/tmp/t.jsonl', tool_name: 'Write', tool_input: { file_path: '/tmp/ws/a.txt', content: 'x' }, tool_use_id: 'tu1' },
  { hook_event_name: 'PostToolUse', session_id: 's1', cwd: '/tmp/ws', tool_name: 'Bash', tool_input: { command: 'ls' }, tool_use_id: 'tu2' },
  { hook_event_name: 'UserPromptSubmit', session_id: 's1', cwd: '/tmp/ws', prompt: 'do it' },
  { hook_event_name: 'SessionStart', session_id: 's1', cwd: '/tmp/ws', source: 'startup' },
  { hook_event_name: 'PreCompact', session_id: 's1', cwd: '/tmp/ws', trigger: 'manual', custom_instructions: 'short' },
  { hook_event_name: 'BeforeTool', session_id: 's1', cwd: '/tmp/ws', tool_name: 'write_file', tool_input: { file_path: 'a.txt' } },
];

function checkHook(data: Buffer): void {
  for (const spec of Object.values(AGENTS)) {
    try {
      const e = parseHookEvent(spec, { data, tooLarge: false, bytes: data.length });
      if (typeof e.cwd !== 'string' || !e.cwd.startsWith('/') || e.cwd.includes('\0')) throw new Error(`hook cwd ${JSON.stringify(e.cwd)}`);
      if (typeof e.sessionId !== 'string' || typeof e.name !== 'string') throw new Error('hook ids not strings');
      if (e.toolInput !== undefined && (typeof e.toolInput !== 'object' || e.toolInput === null || Array.isArray(e.toolInput))) throw new Error('tool input not an object');
    } catch (err) {
      if (err instanceof HookRejection && (err.code === 'INVALID_ARGUMENT' || err.code === 'PATH_ESCAPE')) continue;
      throw err;
    }
  }
}

/** Registers the decoder targets; `runs` is the number of cases per property. */
export function registerDecoderFuzz(tally: FuzzTally, runs: number): void {
  const bytes = fc.uint8Array({ maxLength: 512 });
  const text = fc.string({ unit: 'binary', maxLength: 300 });

  it('event lines', () => {
    checkSync(tally, 'event-line', fc.property(text, (s) => checkEvent(s)), runs);
    checkSync(tally, 'event-line', fc.property(fc.nat(VALID_EVENTS.length - 1), byteMutation, (i, m) => checkEvent(applyByteMutation(Buffer.from(encodeEvent(VALID_EVENTS[i]!).trimEnd()), m).toString('utf8'))), runs);
    checkSync(tally, 'event-line', fc.property(fc.nat(VALID_EVENTS.length - 1), jsonMutation, (i, m) => checkEvent(applyJsonMutation(Buffer.from(JSON.stringify(VALID_EVENTS[i])), m).toString('utf8').trimEnd())), runs * 2);
  });

  it('blob headers and payloads', () => {
    checkSync(tally, 'blob-header', fc.property(bytes, (b) => {
      const h = expectCode('decodeBlobHeader', ['BLOB_CORRUPT'], () => decodeBlobHeader(b));
      if (typeof h !== 'string' && (!isCodecId(h.codec) || !Number.isSafeInteger(h.rawLength) || h.rawLength < 0 || h.headerLength !== BLOB_HEADER_LENGTH)) throw new Error(`bad header ${JSON.stringify(h)}`);
    }), runs);
    const raw = Buffer.from('hello blob '.repeat(40));
    const id = sha(raw);
    const records = availableCodecs().map((name) => {
      const c = compress(raw, name);
      return encodeBlob(raw.length, c.codec, c.payload);
    });
    checkSync(tally, 'blob-record', fc.property(bytes, (b) => checkBlobRecord(id, Buffer.from(b))), runs);
    checkSync(tally, 'blob-record', fc.property(fc.nat(records.length - 1), byteMutation, (i, m) => checkBlobRecord(id, applyByteMutation(records[i]!, m))), runs * 2);
    // A lying header: the payload of one codec under another codec byte or another length.
    checkSync(tally, 'blob-record', fc.property(fc.nat(records.length - 1), fc.integer({ min: 0, max: 255 }), fc.oneof(fc.nat(), fc.constantFrom(0, 2 ** 40, 2 ** 53 - 1)), (i, codec, len) => {
      const r = Buffer.from(records[i]!);
      r[4] = codec;
      r.writeBigUInt64BE(BigInt(len), 5);
      checkBlobRecord(id, r);
    }), runs);
  });

  it('pack indexes', () => {
    const { buf } = validPackIndex();
    const probes = [...validPackIndexIds(), '00'.repeat(32), 'ff'.repeat(32)];
    checkSync(tally, 'pack-index', fc.property(fc.uint8Array({ maxLength: 2000 }), (b) => checkPackIndex(Buffer.from(b), probes)), runs);
    checkSync(tally, 'pack-index', fc.property(byteMutation, (m) => checkPackIndex(applyByteMutation(buf, m), probes)), runs);
    // Checksum recomputed: a forged index (or a bug in the writer) reaches the structural checks.
    checkSync(tally, 'pack-index', fc.property(byteMutation, (m) => checkPackIndex(resum(applyByteMutation(buf, m)), probes)), runs * 2);
    checkSync(tally, 'pack-index', fc.property(fc.array(fc.tuple(fc.nat(buf.length - 33), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }), (edits) => {
      const b = Buffer.from(buf);
      for (const [at, v] of edits) b[at] = v;
      checkPackIndex(resum(b), probes);
    }), runs * 2);
  });

  it('scan index', () => {
    const base = validScanIndex();
    checkSync(tally, 'scan-index', fc.property(bytes, (b) => checkScanIndex(Buffer.from(b))), runs);
    checkSync(tally, 'scan-index', fc.property(byteMutation, (m) => checkScanIndex(applyByteMutation(base, m))), runs * 2);
  });

  it('restore plans kept in blobs', () => {
    checkSync(tally, 'restore-plan', fc.property(bytes, (b) => checkPlan(Buffer.from(b))), runs);
    checkSync(tally, 'restore-plan', fc.property(byteMutation, (m) => checkPlan(applyByteMutation(VALID_PLAN, m))), runs);
    checkSync(tally, 'restore-plan', fc.property(jsonMutation, (m) => checkPlan(applyJsonMutation(VALID_PLAN, m))), runs * 2);
  });

  it('hot snapshot state', () => {
    const valid = validHotState();
    checkSync(tally, 'hot-snapshot', fc.property(fc.jsonValue({ maxDepth: 4 }), (v) => checkHotState(v)), runs);
    checkSync(tally, 'hot-snapshot', fc.property(jsonMutation, (m) => checkHotState(JSON.parse(applyJsonMutation(Buffer.from(JSON.stringify(valid)), m).toString('utf8')))), runs * 2);
  });

  it('tags', () => {
    const checkTag = (s: string): void => {
      const t = expectCode('parseTag', ['INVALID_ARGUMENT'], () => parseTag(s));
      if (typeof t === 'string') return;
      const nums = t.kind === 'seq' ? [t.seq] : [t.turn, t.k];
      if (!nums.every((n) => Number.isSafeInteger(n) && n >= 0)) throw new Error(`tag ${s} -> ${JSON.stringify(t)}`);
      if (parseTag(formatTag(t)).kind !== t.kind) throw new Error(`tag ${s} does not round-trip`);
    };
    checkSync(tally, 'tag', fc.property(fc.string({ maxLength: 30 }), checkTag), runs);
    checkSync(tally, 'tag', fc.property(fc.stringMatching(/^@?[0-9]{0,25}(\.[0-9]{0,25})?$/), checkTag), runs);
  });

  it('session info', () => {
    checkSync(tally, 'session-info', fc.property(fc.jsonValue({ maxDepth: 2 }), fc.dictionary(fc.constantFrom(...SESSION_INFO_FIELDS, '__proto__', 'x'), fc.jsonValue({ maxDepth: 1 })), (v, d) => {
      for (const patch of [v, d]) {
        const info: Record<string, unknown> = {};
        applyInfo(info, patch);
        for (const [k, x] of Object.entries(info)) if (!(SESSION_INFO_FIELDS as readonly string[]).includes(k) || typeof x !== 'string') throw new Error(`info ${k}=${JSON.stringify(x)}`);
        const checked = expectCode('checkInfoPatch', ['INVALID_ARGUMENT'], () => checkInfoPatch(patch, { allowNull: true }));
        if (typeof checked === 'object') for (const x of Object.values(checked)) if (x !== null && typeof x !== 'string') throw new Error('checked info not a string');
      }
    }), runs);
  });

  it('hook JSON input', () => {
    checkSync(tally, 'hook-input', fc.property(bytes, (b) => checkHook(Buffer.from(b))), runs);
    checkSync(tally, 'hook-input', fc.property(fc.nat(HOOK_INPUTS.length - 1), byteMutation, (i, m) => checkHook(applyByteMutation(Buffer.from(JSON.stringify(HOOK_INPUTS[i])), m))), runs);
    checkSync(tally, 'hook-input', fc.property(fc.nat(HOOK_INPUTS.length - 1), jsonMutation, (i, m) => checkHook(applyJsonMutation(Buffer.from(JSON.stringify(HOOK_INPUTS[i])), m))), runs * 2);
  });
}

function validPackIndexIds(): string[] {
  return Array.from({ length: 12 }, (_, i) => sha(Buffer.from(`e${i}`)));
}
