// Declarations of `xcsh-session/agent/session-storage` (agent-session-storage.mjs).
import type { JsStorage } from './xcsh_session.js';

/** The agent's `SessionStorageStat`. */
export interface SessionStorageStat {
  size: number;
  mtimeMs: number;
  mtime: Date;
}

/** The agent's `SessionStorageWriter`: lines appended to one file. */
export interface SessionStorageWriter {
  writeLine(line: string): Promise<void>;
  flush(): Promise<void>;
  fsync(): Promise<void>;
  close(): Promise<void>;
  getError(): Error | undefined;
}

/** The agent's `SessionStorage` interface. */
export interface SessionStorage {
  ensureDirSync(dir: string): void;
  existsSync(path: string): boolean;
  writeTextSync(path: string, content: string): void;
  statSync(path: string): SessionStorageStat;
  listFilesSync(dir: string, pattern: string): string[];
  exists(path: string): Promise<boolean>;
  readText(path: string): Promise<string>;
  readTextPrefix(path: string, maxBytes: number): Promise<string>;
  writeText(path: string, content: string): Promise<void>;
  rename(path: string, nextPath: string): Promise<void>;
  unlink(path: string): Promise<void>;
  openWriter(path: string, options?: { flags?: 'a' | 'w'; onError?: (err: Error) => void }): SessionStorageWriter;
}

/** What both storages are: the agent's `SessionStorage` methods (merged into the class below) over a package storage. */
export interface PackageSessionStorage extends SessionStorage {}
export declare class PackageSessionStorage {
  /** The package storage this storage is over. */
  readonly storage: JsStorage;
}

/** Session files on the filesystem (`nodeStorage()`). */
export class FileSessionStorage extends PackageSessionStorage {
  constructor();
  /** Delete a session file with its artifacts directory and its lock (only a session file). */
  deleteSessionWithArtifacts(sessionPath: string): Promise<void>;
}

/** Session files in memory (`memoryStorage()`): nothing is written to disk. */
export class MemorySessionStorage extends PackageSessionStorage {
  constructor();
}

/**
 * What the drop-in's `storage` arguments take: a `FileSessionStorage`, a
 * `MemorySessionStorage`, or a storage of this package. Another `SessionStorage` throws
 * `kind: "invalidInput"`.
 */
export type AgentStorage = FileSessionStorage | MemorySessionStorage | JsStorage;

/** The package storage behind a drop-in `storage` argument (throws for another kind). */
export function packageStorage(storage: AgentStorage): JsStorage;
