// Input generators for the fuzz suite: arbitrary bytes, byte-level mutations of a valid input (bit
// flips, truncation, insertion, splices of its own bytes, overwrites with hostile text) and JSON-level
// mutations (a value anywhere in the document replaced by a wrong type, a huge or negative number, a
// hostile path or a prototype key; a key dropped or added), applied to every line of a JSON-lines file.
import fc from 'fast-check';

export type ByteMutation =
  | { kind: 'flip'; at: number[]; bits: number[] }
  | { kind: 'cut'; at: number }
  | { kind: 'insert'; at: number; bytes: Uint8Array }
  | { kind: 'splice'; from: number; to: number; at: number }
  | { kind: 'overwrite'; at: number; text: string }
  | { kind: 'replace'; bytes: Uint8Array };

const unit = fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true });

/** Strings that mean trouble where a path, id or name is expected. */
export const HOSTILE_STRINGS = [
  '', '.', '..', '../outside/keep.txt', '../../etc/passwd', '/etc/passwd', 'a//b', './a', 'a/./b', 'a/../../b', 'a\u0000b',
  '__proto__', 'constructor', 'prototype', '\\..\\x', 'C:\\x', '-rf', ' ', '\n', '\udc80', 'ζ', 'x'.repeat(5000),
];

/** Numbers that mean trouble where a count, offset, seq or length is expected. */
export const HOSTILE_NUMBERS = [0, -1, 1.5, -0.5, 2 ** 31, 2 ** 32, 2 ** 53, 2 ** 53 + 2, -(2 ** 63), 1e308, -1e308, Number.MIN_VALUE];

export const byteMutation: fc.Arbitrary<ByteMutation> = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.array(unit, { minLength: 1, maxLength: 4 }), bits: fc.array(fc.integer({ min: 1, max: 255 }), { minLength: 4, maxLength: 4 }) }),
  fc.record({ kind: fc.constant('cut' as const), at: unit }),
  fc.record({ kind: fc.constant('insert' as const), at: unit, bytes: fc.uint8Array({ minLength: 1, maxLength: 16 }) }),
  fc.record({ kind: fc.constant('splice' as const), from: unit, to: unit, at: unit }),
  fc.record({ kind: fc.constant('overwrite' as const), at: unit, text: fc.constantFrom(...HOSTILE_STRINGS.slice(0, 20), '{}', 'null', '[]', '999999999999999999999', '-1', '"', '\n') }),
  fc.record({ kind: fc.constant('replace' as const), bytes: fc.uint8Array({ maxLength: 64 }) }),
);

export function applyByteMutation(data: Buffer, m: ByteMutation): Buffer {
  const pos = (x: number): number => Math.min(data.length, Math.floor(x * data.length));
  switch (m.kind) {
    case 'flip': {
      const out = Buffer.from(data);
      if (out.length === 0) return Buffer.from([m.bits[0]!]);
      m.at.forEach((x, i) => (out[pos(x) % out.length]! ^= m.bits[i]!));
      return out;
    }
    case 'cut':
      return data.subarray(0, pos(m.at));
    case 'insert':
      return Buffer.concat([data.subarray(0, pos(m.at)), m.bytes, data.subarray(pos(m.at))]);
    case 'splice': {
      // A piece of the input copied over another place: plausible structure in the wrong spot.
      const [a, b] = [pos(m.from), pos(m.to)].sort((x, y) => x - y) as [number, number];
      const piece = data.subarray(a, b);
      const at = pos(m.at);
      return Buffer.concat([data.subarray(0, at), piece, data.subarray(Math.min(data.length, at + piece.length))]);
    }
    case 'overwrite': {
      const out = Buffer.from(data);
      out.write(m.text, pos(m.at), 'utf8');
      return out;
    }
    case 'replace':
      return Buffer.from(m.bytes);
  }
}

/** A JSON value that is wrong for almost any field. */
export const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(null, true, false, {}, [], [null], { path: '../x' }, ...HOSTILE_STRINGS, ...HOSTILE_NUMBERS),
  fc.jsonValue({ maxDepth: 2 }),
);

export type JsonMutation =
  | { kind: 'set'; pick: number; value: unknown }
  | { kind: 'drop'; pick: number }
  | { kind: 'add'; pick: number; key: string; value: unknown }
  | { kind: 'whole'; value: unknown };

export const jsonMutation: fc.Arbitrary<JsonMutation> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('set' as const), pick: fc.nat(), value: hostileJson }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('drop' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('add' as const), pick: fc.nat(), key: fc.constantFrom('__proto__', 'constructor', 'seq', 'path', 'plan', 'files', 'x'), value: hostileJson }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('whole' as const), value: hostileJson }) },
);

type Slot = { parent: Record<string, unknown> | unknown[]; key: string | number };

function slots(value: unknown, out: Slot[] = []): Slot[] {
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      out.push({ parent: value, key: i });
      slots(v, out);
    });
  } else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      out.push({ parent: value as Record<string, unknown>, key: k });
      slots(v, out);
    }
  }
  return out;
}

function containers(value: unknown, out: Record<string, unknown>[] = []): Record<string, unknown>[] {
  if (Array.isArray(value)) for (const v of value) containers(v, out);
  else if (typeof value === 'object' && value !== null) {
    out.push(value as Record<string, unknown>);
    for (const v of Object.values(value)) containers(v, out);
  }
  return out;
}

/** Applies `m` to a parsed JSON document (a copy); returns the new document. */
export function mutateJsonValue(doc: unknown, m: JsonMutation): unknown {
  if (m.kind === 'whole') return m.value;
  const copy = JSON.parse(JSON.stringify(doc)) as unknown;
  if (m.kind === 'add') {
    const objs = containers(copy);
    if (objs.length === 0) return copy;
    // defineProperty: `__proto__` becomes an own key, as JSON.parse makes it.
    Object.defineProperty(objs[m.pick % objs.length]!, m.key, { value: m.value, enumerable: true, writable: true, configurable: true });
    return copy;
  }
  const all = slots(copy);
  if (all.length === 0) return m.kind === 'set' ? m.value : copy;
  const slot = all[m.pick % all.length]!;
  if (m.kind === 'set') (slot.parent as Record<string | number, unknown>)[slot.key] = m.value;
  else if (Array.isArray(slot.parent)) slot.parent.splice(slot.key as number, 1);
  else delete slot.parent[slot.key as string];
  return copy;
}

/**
 * Applies `m` to a JSON file, or to one line (`line` picks it) of a JSON-lines file; bytes that are
 * not JSON are returned unchanged.
 */
export function applyJsonMutation(data: Buffer, m: JsonMutation, line = 0): Buffer {
  const text = data.toString('utf8');
  try {
    return Buffer.from(`${JSON.stringify(mutateJsonValue(JSON.parse(text), m))}\n`);
  } catch {
    // not one document: JSON lines
  }
  const lines = text.split('\n');
  const complete = lines.slice(0, -1);
  if (complete.length === 0) return data;
  const i = line % complete.length;
  try {
    complete[i] = JSON.stringify(mutateJsonValue(JSON.parse(complete[i]!), m)) ?? 'null';
  } catch {
    return data;
  }
  return Buffer.from(`${complete.join('\n')}\n${lines.at(-1)}`);
}
