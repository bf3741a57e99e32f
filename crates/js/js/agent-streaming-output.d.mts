// Declarations of `xcsh-session/agent/streaming-output` (agent-streaming-output.mjs): the
// agent's `OutputSink` with its `OutputSinkOptions` and `OutputSummary`, which are the
// package's own (xcsh_session.d.ts) but for `storage`: the artifact file goes through node:fs.
import type {
  OutputSinkOptions as PackageOutputSinkOptions,
  OutputSummary,
} from './xcsh_session.js';

/** The agent's `OutputSinkOptions`, plus `imageProtocol` and `maxLines`. */
export interface OutputSinkOptions extends Omit<PackageOutputSinkOptions, 'storage'> {}

/** The agent's `OutputSummary`, plus `artifactError`. */
export type { OutputSummary };

/** Line-buffered tool output with a bounded tail, spilled whole to `artifactPath`. */
export class OutputSink {
  constructor(options?: OutputSinkOptions);
  push(chunk: string): void;
  createInput(): WritableStream<Uint8Array | string>;
  dump(notice?: string): Promise<OutputSummary>;
}
