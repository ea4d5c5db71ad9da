// Turns the global CLI flags (--store, --workspace, --session) into an open store, workspace and
// session, the same way for every command. Without --workspace the workspace is found upward from
// the current folder (locateWorkspace); --session takes an id or a unique prefix of one.
import { resolve } from 'node:path';
import { CkptError, defaultStoreDir, invalidValue, findSession, isCkptError, storeLocation, locateWorkspace, openStore, parseSize, type RecoveredRestore, type Session, type Store, type Workspace } from '../index.js';
import type { CliIo } from './io.js';

export interface GlobalFlags {
  store?: string;
  workspace?: string;
  session?: string;
  json?: boolean;
  maxFileSize?: string;
  refuseOversize?: boolean;
}

export interface CliContext {
  io: CliIo;
  flags: GlobalFlags;
  store(): Promise<Store>;
  workspace(): Promise<Workspace>;
  /**
   * The workspace only if the store knows it already, without registering it (read-only commands:
   * `status` or `session list` in a folder ckpt never recorded leaves nothing in the store); `root`
   * either way.
   */
  knownWorkspace(): Promise<{ root: string; workspace?: Workspace }>;
  /** The session named by `id` (or a unique prefix), else by --session, else the workspace's most recently updated one. */
  session(id?: string): Promise<Session>;
}

/** An empty value (a script's unset variable) must not silently mean "the default". */
function checkNotEmpty(flag: string, value: string | undefined, option = flag): void {
  if (value !== undefined && value.trim() === '') {
    throw invalidValue(option, value, `${flag} needs a value, got an empty string`, { flag });
  }
}

export interface CliContextOptions {
  /**
   * The command only reads the store: it opens an existing one and never starts one. A store named by
   * --store or $CKPT_STORE that does not exist is NOT_FOUND with nothing made (a mistyped folder);
   * the default location (no store yet on a fresh machine) reads as an empty store, also making nothing.
   */
  reads?: boolean;
  /**
   * The command writes, but only into what the store holds already (`turn`, `restore`, `session rm`,
   * `gc`, …: a session or a workspace must be there): the store is opened as for `reads`, so a missing
   * named store is NOT_FOUND with nothing made, and a missing default location reads as empty (the
   * command then fails as in an empty store, SESSION_NOT_FOUND, still making nothing).
   */
  existing?: boolean;
}

export function createCliContext(io: CliIo, flags: GlobalFlags, options: CliContextOptions = {}): CliContext {
  checkNotEmpty('--store', flags.store);
  checkNotEmpty('--workspace', flags.workspace);
  checkNotEmpty('--session', flags.session);
  /** The user named the store (a typo there must not read as "no sessions yet"). */
  const named = Boolean(flags.store) || Boolean(io.env.CKPT_STORE);
  /** Never starts a store: it reads, or acts on what is there already. */
  const onlyExisting = options.reads === true || options.existing === true;
  let store: Promise<Store> | undefined;
  let workspace: Promise<Workspace> | undefined;
  let root: Promise<string> | undefined;
  const workspaceRoot = () => (root ??= ctx.store().then(async (s) => (flags.workspace ? resolve(io.cwd, flags.workspace) : (await locateWorkspace(s, io.cwd)).root)));
  const ctx: CliContext = {
    io,
    flags,
    store: () =>
      (store ??= openStore({
        // A shared store URL is passed as it is; a folder resolves against the working directory.
        dir: flags.store ? storeLocation(flags.store, io.cwd) : defaultStoreDir(io.env),
        ...(flags.maxFileSize !== undefined ? { maxBlobBytes: parseSize(flags.maxFileSize, '--max-file-size') } : {}),
        ...(flags.refuseOversize ? { refuseOversize: true } : {}),
        ...(onlyExisting ? { existing: true, missingAsEmpty: !named } : {}),
        onRecovered: (_session, restores) => io.stderr.write(restores.map(recoveredLine).join('')),
      }).then((s) => {
        if (s.tightened > 0) io.stderr.write(`warning: the store ${s.dir} was readable by other users; made ${s.tightened} files and folders private (owner only)\n`);
        return s;
      }, (err: unknown) => {
        throw isCkptError(err, 'NOT_FOUND') && onlyExisting ? noStore(err) : err;
      })),
    workspace: () => (workspace ??= ctx.store().then(async (s) => s.openWorkspace(await workspaceRoot()))),
    knownWorkspace: async () => {
      const dir = await workspaceRoot();
      try {
        await (await ctx.store()).openWorkspace(dir, { register: false });
      } catch (err) {
        if (!isCkptError(err, 'NOT_FOUND')) throw err;
        return { root: typeof err.data.workspace === 'string' ? err.data.workspace : dir };
      }
      const ws = await ctx.workspace(); // known: opening it writes nothing
      return { root: ws.root, workspace: ws };
    },
    session: async (id) => {
      checkNotEmpty('session id', id, '<id>');
      // A session is only ever in a workspace the store knows: never register one to find none.
      const { root: wsRoot, workspace: ws } = await ctx.knownWorkspace();
      const chosen = id ?? flags.session;
      if (!ws) {
        throw chosen !== undefined
          ? new CkptError('SESSION_NOT_FOUND', `session ${JSON.stringify(chosen)} not found in workspace ${wsRoot}`, { session: chosen })
          : new CkptError('SESSION_NOT_FOUND', `no session in workspace ${wsRoot} in the store ${(await ctx.store()).dir}; create one with 'ckpt session new' (or pick the store that has them: --store, $CKPT_STORE or $CKPT_HOME)`, { workspace: wsRoot, store: (await ctx.store()).dir });
      }
      return chosen !== undefined ? findSession(ws, chosen) : ws.latest();
    },
  };
  return ctx;
}

/** What opening a session did about a restore an earlier command left interrupted (Ctrl-C, a kill). */
function recoveredLine(r: RecoveredRestore): string {
  if (r.outcome === 'aborted') return `note: a restore to ${r.to} was interrupted before it changed anything: nothing to finish\n`;
  const undo = r.undo ? ` (restore ${r.undo} undoes it)` : '';
  const left = r.left && r.left.length > 0 ? `; ${r.left.length} path(s) written since it was interrupted were left as they are: ${r.left.slice(0, 5).join(', ')}${r.left.length > 5 ? ', …' : ''}` : '';
  return `note: finished a restore to ${r.to} that was interrupted${undo}${left}\n`;
}

/** A read command's store that does not exist: where it looked, that nothing was made, what starts one. */
function noStore(err: CkptError): CkptError {
  return new CkptError(
    'NOT_FOUND',
    `${err.message}; nothing was created. Check --store or $CKPT_STORE; a store is started by a command that records (ckpt session new, ckpt init <agent>, an agent's hook)`,
    err.data,
    { cause: err },
  );
}
