// The owner index's model-based test (test/owner-index-model.ts), long: `npm run test:long`.
import { describeOwnerIndexModel } from './owner-index-model.js';

describeOwnerIndexModel({ runs: Number(process.env.CKPT_PROPERTY_RUNS ?? 1000), maxCommands: 40, timeoutMs: 600_000 });
