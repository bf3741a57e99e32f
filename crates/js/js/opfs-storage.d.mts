// Declarations of `xcsh-session/opfs-storage` (opfs-storage.mjs).
import type { AsyncStorage } from './async-session.mjs';

/** An async storage over the Origin Private File System (browsers), for `AsyncSession`. */
export function opfsStorage(): AsyncStorage &
  Required<Pick<AsyncStorage, 'readRange'>> & {
    /** The file as a `File`, a snapshot: stale once the file is written. */
    snapshot(path: string): Promise<File>;
  };
