// `xcsh-session/agent/streaming-output`: the `OutputSink` of the agent's
// `session/streaming-output` module (streaming tool output with a bounded tail, spilled
// whole to an artifact file past `spillThreshold`), over this package's core sink: every
// rule (sanitizing, counting, the tail, spilling) is the Rust core's. Node only: the
// artifact file is written through node:fs.
//
// Its deliberate differences from the agent (chunks sanitized as they arrive, the
// `imageProtocol` option, the line limit, `artifactError`) are listed once, in the package
// README (crates/js/README.md, "Where `xcsh-session/agent` differs from the agent").
import { OutputSink as CoreOutputSink } from './node.mjs';
import { nodeStorage } from './node-storage.mjs';

let storage;

export class OutputSink {
  #sink;
  /** @param {import('./agent-streaming-output.d.mts').OutputSinkOptions} [options] */
  constructor(options = {}) {
    const core = { ...options };
    if (options.artifactPath) core.storage = (storage ??= nodeStorage());
    this.#sink = new CoreOutputSink(core);
  }
  /** Add a chunk (masked, passed to `onChunk`, sanitized into the tail). */
  push(chunk) { this.#sink.push(chunk); }
  /** A `WritableStream` of strings or UTF-8 bytes that pushes into this sink. */
  createInput() {
    const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
    const finish = () => { const rest = decoder.decode(); if (rest) this.push(rest); };
    return new WritableStream({
      write: (chunk) => this.push(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true })),
      close: finish,
      abort: finish,
    });
  }
  /** The summary; `notice` comes first as a `[notice]` line. */
  async dump(notice) { return this.#sink.dump(notice); }
}
