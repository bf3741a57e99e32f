// Declarations of `xcsh-session/agent/streaming-output` (agent-streaming-output.mjs): the
// agent's `OutputSink` with its `OutputSinkOptions` and `OutputSummary`.

/** The agent's `OutputSinkOptions`, plus `imageProtocol` and `maxLines`. */
export interface OutputSinkOptions {
  /** Where the whole output is written once it passes `spillThreshold`. */
  artifactPath?: string;
  /** Reported as `artifactId` when the whole output is in `artifactPath`. */
  artifactId?: string;
  /** Bytes kept in memory before spilling (default 51200). */
  spillThreshold?: number;
  /** Called with each raw (masked, unsanitized) chunk, for live display. */
  onChunk?: (chunk: string) => void;
  /** Minimum ms between onChunk calls. 0 = every chunk (default). */
  chunkThrottleMs?: number;
  /** Mask sensitive values (e.g. env var secrets) in output chunks and final dump. */
  maskSecrets?: (text: string) => string;
  /**
   * The terminal's image protocol (the value of the agent's `TERMINAL.imageProtocol`):
   * when set (not null), SIXEL, iTerm2 and kitty image sequences are kept whole in the
   * output instead of stripped.
   */
  imageProtocol?: string | null;
  /** Lines kept in memory before spilling (default 3000; the agent has no line limit). */
  maxLines?: number;
}

/** The agent's `OutputSummary`, plus `artifactError`. */
export interface OutputSummary {
  /** The tail to show: sanitized, `[notice]` line first. */
  output: string;
  truncated: boolean;
  /** LFs pushed plus one (nothing pushed: 0). */
  totalLines: number;
  /** UTF-8 bytes pushed, before sanitizing. */
  totalBytes: number;
  /** Lines and bytes of the tail shown (without the notice line). */
  outputLines: number;
  outputBytes: number;
  /** Artifact ID for internal URL access (artifact://<id>) when truncated */
  artifactId?: string;
  /** Why the artifact file could not be written (the tail is all there is). */
  artifactError?: string;
}

/** Line-buffered tool output with a bounded tail, spilled whole to `artifactPath`. */
export class OutputSink {
  constructor(options?: OutputSinkOptions);
  push(chunk: string): void;
  createInput(): WritableStream<Uint8Array | string>;
  dump(notice?: string): Promise<OutputSummary>;
}
