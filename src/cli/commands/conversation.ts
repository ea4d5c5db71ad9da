// `ckpt conversation append|show|compact|messages` (issue 15): the conversation side of a session —
// record any agent event, read the live conversation after rewinds and compactions, compact it.
import type { Command } from 'commander';
import { CHECKPOINT_EVENT_TYPES, CkptError, invalidValue, type EventBase, type NewEvent } from '../../index.js';
import { rootIo } from '../action.js';
import { addCommands } from '../command-table.js';
import type { CliIo } from '../io.js';

export function registerConversationCommands(program: Command): void {
  const conv = program.command('conversation').alias('conv').description("record and read the agent's conversation (messages, tool calls, …)");

  addCommands(conv, [
    {
      use: 'append [events...]',
      existing: true,
      description: 'append conversation events, each a JSON object with a "type" (or "-": JSON lines / an array on stdin), in one batch',
      options: [['--unless-exists', 'skip events whose "id" is already recorded (atomic check and append)']],
      run: async ([events, opts], ctx, out, cmd) => {
        const parsed = await parseEvents(events as string[], rootIo(cmd));
        const session = await ctx.session();
        const r = await session.record(parsed, { unlessExists: Boolean((opts as { unlessExists?: boolean }).unlessExists) });
        const result = { appended: r.appended.map((e) => ({ seq: e.seq, type: e.type, ...(typeof e.id === 'string' ? { id: e.id } : {}) })), existing: r.existing };
        out.result(result, (x) => `appended ${x.appended.length} event(s)${x.existing.length ? `, ${x.existing.length} already recorded` : ''}`);
      },
    },
    {
      use: 'show',
      reads: true,
      description: 'the live conversation: what rewinds went back past is hidden, compacted ranges show their summary',
      options: [['--all', 'every conversation event ever recorded, live or not']],
      run: async ([opts], ctx, out) => {
        const session = await ctx.session();
        const all = Boolean((opts as { all?: boolean }).all);
        const live = await session.conversation();
        const liveSeqs = new Set(live.map((e) => e.seq));
        const events = all ? (await session.events()).filter((e) => !CHECKPOINT_EVENT_TYPES.has(e.type) || liveSeqs.has(e.seq)).map((e) => ({ ...e, live: liveSeqs.has(e.seq) })) : live;
        out.result({ events }, (r) => (r.events.length === 0 ? 'the conversation is empty' : r.events.map(line).join('\n')));
      },
    },
    {
      use: 'compact',
      existing: true,
      description: 'summarise the older part of the live conversation (nothing is deleted from the log)',
      options: [
        ['--summary <text>', 'the summary that replaces the compacted entries'],
        ['--preserve-last <n>', 'live entries kept verbatim at the end', '0'],
        ['--through-seq <seq>', 'refuse (CONFLICT) unless the plan still ends at this seq'],
        ['--dry-run', 'print the plan only'],
      ],
      run: async ([opts], ctx, out) => {
        const o = opts as { summary?: string; preserveLast: string; throughSeq?: string; dryRun?: boolean };
        const preserveLast = wholeNumber(o.preserveLast, '--preserve-last');
        // Bad values are usage errors before any look-up (not "no session", exit 3).
        const throughSeq = o.throughSeq === undefined ? undefined : wholeNumber(o.throughSeq, '--through-seq');
        const session = await ctx.session();
        if (o.dryRun) {
          const plan = await session.planCompaction({ preserveLast });
          out.result({ plan }, (r) => `would summarise ${r.plan.compactable.length} entries (through @${r.plan.throughSeq}) and keep ${r.plan.preserved.length}`);
          return;
        }
        if (o.summary === undefined) throw new CkptError('INVALID_ARGUMENT', 'compact needs --summary (or --dry-run to see the plan)');
        const event = await session.compact({ summary: o.summary, preserveLast, throughSeq });
        out.result({ compaction: event }, (r) => `compacted ${String(r.compaction.compacted)} entries through @${String(r.compaction.throughSeq)} (event @${r.compaction.seq})`);
      },
    },
    {
      use: 'messages',
      reads: true,
      description: 'live conversation events that carry an id, with the tags just before and after each (restore or rewind to them)',
      run: async (_args, ctx, out) => {
        const messages = await (await ctx.session()).messageTags();
        out.result({ messages }, (r) => r.messages.map((m) => `${m.id}  turn ${m.turn}  before ${m.before}  after ${m.after}`).join('\n') || 'no conversation event carries an id');
      },
    },
  ]);
}

function line(e: EventBase): string {
  const text = typeof e.summary === 'string' ? `summary: ${e.summary}` : typeof e.text === 'string' ? e.text : JSON.stringify(e);
  return `@${e.seq}  ${e.type}${typeof e.id === 'string' ? ` ${e.id}` : ''}  ${text.length > 100 ? `${text.slice(0, 99)}…` : text}`;
}

function wholeNumber(value: string, flag: string): number {
  if (!/^\d+$/.test(value)) throw invalidValue(flag, value, `${flag} must be a whole number, not ${JSON.stringify(value)}`);
  return Number(value);
}

async function parseEvents(args: readonly string[], io: CliIo): Promise<NewEvent[]> {
  if (args.length === 0) throw new CkptError('INVALID_ARGUMENT', 'append needs events: JSON objects as arguments, or - to read them from stdin');
  const texts = args.includes('-') ? [...args.filter((a) => a !== '-'), await readAll(io.stdin)] : [...args];
  const events: NewEvent[] = [];
  for (const text of texts) {
    const trimmed = text.trim();
    if (trimmed === '') continue;
    for (const chunk of trimmed.startsWith('[') ? [trimmed] : trimmed.split('\n').filter((l) => l.trim() !== '')) {
      let value: unknown;
      try {
        value = JSON.parse(chunk);
      } catch {
        throw new CkptError('INVALID_ARGUMENT', `not JSON: ${chunk.length > 60 ? `${chunk.slice(0, 60)}…` : chunk}`);
      }
      events.push(...((Array.isArray(value) ? value : [value]) as NewEvent[]));
    }
  }
  return events;
}

const MAX_STDIN = 64 * 1024 * 1024;

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += b.length;
    if (size > MAX_STDIN) throw new CkptError('BLOB_TOO_LARGE', `stdin is over ${MAX_STDIN} bytes`);
    chunks.push(b);
  }
  return Buffer.concat(chunks).toString('utf8');
}
