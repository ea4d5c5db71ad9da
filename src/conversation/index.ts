// The conversation side of a session: append, the live view after rewinds and compactions, message tags.
export { appendConversation, type AppendOptions, type AppendResult } from './append.js';
export { isConversationEvent, liveConversation, hiddenByRewind, messageTags, type MessageTag } from './live.js';
export { planCompaction, recordCompaction, type CompactionOptions, type CompactionPlan, type EventRef, type RecordCompactionOptions } from './compaction.js';
