// The owner index's model-based test (test/owner-index-model.ts), short: `npm test`. The long run is
// owner-index-model.full.test.ts.
import { describeOwnerIndexModel } from './owner-index-model.js';

describeOwnerIndexModel({ runs: Number(process.env.CKPT_PROPERTY_RUNS ?? 50), maxCommands: 14, timeoutMs: 60_000 });
