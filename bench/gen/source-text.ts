// Source-like text for the benchmark tree: TypeScript-flavoured modules with imports, interfaces,
// functions, control flow, literals and comments. Each file draws its own identifier pool from a
// shared vocabulary, so files resemble one another the way a real code base does (and compress
// ~3–4× like one), without being copies of each other.
import { createPrng, type Prng } from './prng.js';

const WORDS = (
  'user account session token cache store index entry item list map set queue buffer stream ' +
  'file path folder root node tree graph edge vertex link parent child sibling key value pair ' +
  'record row column table field schema model view controller service client server request ' +
  'response handler listener event message payload header body status code error result option ' +
  'config setting flag mode state context scope frame stack heap pool worker thread task job ' +
  'timer clock date time delay retry limit count total size length width height offset position ' +
  'range start end begin finish next prev first last min max sum avg rate ratio score rank level ' +
  'id name title label text content data info meta source target input output reader writer ' +
  'parser lexer token builder factory provider adapter driver manager registry resolver loader ' +
  'format encode decode serialize parse render update create delete remove insert append merge ' +
  'split join filter sort reduce find search match replace validate check verify compute build ' +
  'load save open close read write flush sync lock unlock acquire release emit dispatch notify ' +
  'subscribe publish route path url query param header cookie auth permission role group policy ' +
  'order invoice payment price amount currency product cart customer address email phone report ' +
  'metric log trace span debug warn fatal hash digest checksum signature cipher key secret vault ' +
  'image pixel color shape layer canvas style theme font icon button panel dialog menu tab form'
).split(/\s+/);

const COMMENT_WORDS = (
  'the a an of to in for on with by from at as is are be this that it we you not and or but if ' +
  'when then else so because before after while until each every all any some no only also just ' +
  'must should may can will would keep make sure handle return call pass use avoid skip ignore ' +
  'note todo fixme hack workaround legacy deprecated temporary fast slow safe unsafe empty missing ' +
  'invalid valid known unknown default custom explicit implicit here there above below caller ' +
  'callee value values item items list entry entries case cases edge path file error errors result'
).split(/\s+/);

const TYPES = ['string', 'number', 'boolean', 'unknown', 'void', 'Date', 'Buffer', 'Uint8Array', 'Error'];
const GENERIC = ['Array', 'Promise', 'Set', 'ReadonlyArray', 'Partial', 'Readonly'];
const OPS = ['===', '!==', '<', '>', '<=', '>=', '&&', '||', '+', '-', '*', '??'];

const cap = (w: string): string => w.charAt(0).toUpperCase() + w.slice(1);

class Writer {
  readonly out: string[] = [];
  length = 0;
  constructor(readonly r: Prng, readonly ids: string[], readonly typeNames: string[], readonly indentUnit: string) {}
  line(depth: number, text: string): void {
    const s = this.indentUnit.repeat(depth) + text + '\n';
    this.out.push(s);
    this.length += s.length;
  }
  id(): string {
    // Zipf-like reuse: the first identifiers of the pool are used most, as in real code.
    const n = this.ids.length;
    const i = Math.floor(n * Math.pow(this.r.next(), 2.2));
    return this.ids[i] as string;
  }
  type(): string {
    const r = this.r;
    if (r.chance(0.35)) return r.pick(this.typeNames);
    if (r.chance(0.2)) return `${r.pick(GENERIC)}<${r.pick(TYPES)}>`;
    return r.pick(TYPES);
  }
  literal(): string {
    const r = this.r;
    const k = r.int(6);
    if (k === 0) return String(r.int(1000));
    if (k === 1) return `'${r.pick(WORDS)}${r.chance(0.5) ? '-' + r.pick(WORDS) : ''}'`;
    if (k === 2) return r.chance(0.5) ? 'true' : 'false';
    if (k === 3) return `0x${r.int(0xffffff).toString(16)}`;
    if (k === 4) return 'undefined';
    return `${r.int(100)}.${r.int(100)}`;
  }
  expr(depth = 0): string {
    const r = this.r;
    const k = r.int(depth > 1 ? 3 : 7);
    if (k === 0) return this.id();
    if (k === 1) return this.literal();
    if (k === 2) return `${this.id()}.${this.id()}`;
    if (k === 3) return `${this.expr(depth + 1)} ${r.pick(OPS)} ${this.expr(depth + 1)}`;
    if (k === 4) return `${this.id()}(${this.args(depth + 1)})`;
    if (k === 5) return `await ${this.id()}.${r.pick(WORDS)}${cap(r.pick(WORDS))}(${this.args(depth + 1)})`;
    return `${this.id()}[${this.expr(depth + 1)}]`;
  }
  args(depth: number): string {
    const n = this.r.int(4);
    const parts: string[] = [];
    for (let i = 0; i < n; i++) parts.push(this.expr(depth));
    return parts.join(', ');
  }
  comment(depth: number): void {
    const r = this.r;
    const n = r.range(3, 14);
    const words: string[] = [];
    for (let i = 0; i < n; i++) words.push(r.chance(0.2) ? this.id() : r.pick(COMMENT_WORDS));
    this.line(depth, `// ${cap(words.join(' '))}${r.chance(0.5) ? '.' : ''}`);
  }
  statement(depth: number, budget: number): void {
    const r = this.r;
    const k = r.int(12);
    if (k <= 2) this.line(depth, `const ${this.id()} = ${this.expr()};`);
    else if (k === 3) this.line(depth, `let ${this.id()}: ${this.type()} = ${this.expr()};`);
    else if (k === 4) this.line(depth, `${this.id()}.${this.id()} = ${this.expr()};`);
    else if (k === 5) this.line(depth, `${this.expr()};`);
    else if (k === 6) this.comment(depth);
    else if (k === 7 && budget > 0) {
      this.line(depth, `if (${this.expr()}) {`);
      this.block(depth + 1, budget - 1);
      if (r.chance(0.3)) {
        this.line(depth, '} else {');
        this.block(depth + 1, budget - 1);
      }
      this.line(depth, '}');
    } else if (k === 8 && budget > 0) {
      this.line(depth, `for (const ${this.id()} of ${this.id()}) {`);
      this.block(depth + 1, budget - 1);
      this.line(depth, '}');
    } else if (k === 9 && budget > 0) {
      this.line(depth, 'try {');
      this.block(depth + 1, budget - 1);
      this.line(depth, `} catch (${r.chance(0.5) ? 'err' : 'error'}) {`);
      this.line(depth + 1, `throw new Error(\`${r.pick(WORDS)} ${r.pick(COMMENT_WORDS)} \${${this.id()}}\`);`);
      this.line(depth, '}');
    } else if (k === 10) this.line(depth, `return ${this.expr()};`);
    else this.line(depth, `${this.id()}.push(${this.args(1)});`);
  }
  block(depth: number, budget: number): void {
    const n = this.r.range(1, 5);
    for (let i = 0; i < n; i++) this.statement(depth, budget);
  }
  declaration(): void {
    const r = this.r;
    const k = r.int(5);
    if (r.chance(0.4)) {
      this.line(0, '/**');
      this.line(0, ` * ${cap(r.pick(COMMENT_WORDS))} ${r.pick(COMMENT_WORDS)} ${this.id()} ${r.pick(COMMENT_WORDS)} ${r.pick(WORDS)}.`);
      if (r.chance(0.5)) this.line(0, ` * @param ${this.id()} ${r.pick(COMMENT_WORDS)} ${r.pick(WORDS)}`);
      this.line(0, ' */');
    }
    const exp = r.chance(0.6) ? 'export ' : '';
    if (k === 0) {
      this.line(0, `${exp}interface ${r.pick(this.typeNames)} {`);
      const n = r.range(2, 8);
      for (let i = 0; i < n; i++) this.line(1, `${this.id()}${r.chance(0.3) ? '?' : ''}: ${this.type()};`);
      this.line(0, '}');
    } else if (k === 1) {
      this.line(0, `${exp}class ${r.pick(this.typeNames)} {`);
      const n = r.range(1, 4);
      for (let i = 0; i < n; i++) {
        this.line(1, `${r.chance(0.3) ? 'private ' : ''}${this.id()}(${this.id()}: ${this.type()}): ${this.type()} {`);
        this.block(2, 2);
        this.line(1, '}');
      }
      this.line(0, '}');
    } else if (k === 2) {
      this.line(0, `${exp}const ${this.id()} = {`);
      const n = r.range(2, 7);
      for (let i = 0; i < n; i++) this.line(1, `${this.id()}: ${this.literal()},`);
      this.line(0, '};');
    } else {
      const asyncKw = r.chance(0.4) ? 'async ' : '';
      this.line(0, `${exp}${asyncKw}function ${this.id()}(${this.id()}: ${this.type()}, ${this.id()}: ${this.type()}): ${this.type()} {`);
      this.block(1, 3);
      this.line(0, '}');
    }
    this.line(0, '');
  }
}

/** The content of file number `index` of a tree generated with `seed`: exactly `size` ASCII bytes. */
export function sourceText(seed: number, index: number, size: number): Buffer {
  const r = createPrng(seed, index);
  const poolSize = r.range(15, 60);
  const ids: string[] = [];
  for (let i = 0; i < poolSize; i++) {
    const n = r.range(1, 3);
    let s = r.pick(WORDS);
    for (let j = 1; j < n; j++) s += cap(r.pick(WORDS));
    if (r.chance(0.08)) s += String(r.int(100));
    ids.push(s);
  }
  const typeNames: string[] = [];
  for (let i = 0; i < 6; i++) typeNames.push(cap(r.pick(WORDS)) + cap(r.pick(WORDS)));
  const w = new Writer(r, ids, typeNames, r.chance(0.7) ? '  ' : '    ');
  w.line(0, `// ${cap(r.pick(WORDS))} ${r.pick(WORDS)} module (generated benchmark file ${index}).`);
  const imports = r.range(1, 6);
  for (let i = 0; i < imports; i++) {
    w.line(0, `import { ${w.id()}, ${w.id()} } from '../${r.pick(WORDS)}/${r.pick(WORDS)}-${r.pick(WORDS)}.js';`);
  }
  w.line(0, '');
  while (w.length < size) w.declaration();
  const text = w.out.join('');
  const buf = Buffer.from(text.slice(0, size), 'latin1');
  if (size > 0) buf[size - 1] = 0x0a;
  return buf;
}
