// Defects the reliability suites (issue 16) found, with their root cause and fix: published in the
// suites' figures (`defects`), each kept by a test in regressions.test.ts.
export const FIXED_DEFECTS: string[] = [
  'fixed: an event-log append whose write or fsync failed left its line in the log, so a command that failed with IO had happened after all (a failed restore_started was finished by the next open; a failed capture stayed in the log with metadata.json behind it). The fs backend now cuts the file back to its size before the append and fsyncs that before rethrowing.',
  'fixed: create() (create-if-absent: session logs, blobs, workspace.json) failed when it could not remove its temp name after the object was already linked in place, so a fork reported IO although the forked session existed (with no metadata.json). Removing the temp name is now cleanup only; a stranded temp file is GC\'s, by age.',
  'fixed: verify reported metadata.json missing or behind its log as a problem (exit 5), although the design makes it a cache rebuilt from the log in exactly that case (a crash or a failed write after an append). It now accepts a missing metadata.json and one equal to the log folded up to its eventCount; any other disagreement is still a problem.',
];
