// The reason a restore's recovery capture carries (`restore to T`, `restore to T: paths`, `rewind to T
// (fork of S)`: restore.ts, rewind.ts), read back for the tag it went to (the log's entries, recovery's
// report of a restore it dropped).
export function restoreTargetOf(reason: string | undefined): string | undefined {
  return /^(?:restore|rewind) to (\S+)/.exec(reason ?? '')?.[1];
}
