// An opened folder's index cache, kept in the browser storage: the folder is read-only, so
// the package's index cache of its sessions (`<agentDir>/cache/...`, written by the first
// open of a session and read by the next) goes to `/xcsh/agent/cache/...` in OPFS (named by
// a hash of the session's path, checked against the file before it is trusted: a cache
// of another file, or of this one before it changed, is not used). Without a writable
// browser storage, the folder has no cache: every open scans its session.
// Also counts the bytes the package reads (`bytesRead`), as StagedStorage does.
import { sources } from './sources.js';

const CACHE_IN_OPFS = '/xcsh/agent/cache';
const READS = new Set(['read', 'readPrefix', 'readRange']);

/** `storage` (the folder's FileStorage, agent directory `agentDir`) with its cache in OPFS. */
export function withFolderCache(storage, agentDir) {
  const prefix = `${agentDir}/cache`;
  const inCache = (p) => typeof p === 'string' && (p === prefix || p.startsWith(`${prefix}/`));
  const mapped = (p) => (inCache(p) ? CACHE_IN_OPFS + p.slice(prefix.length) : p);
  /** The browser storage, when the cache can be kept there. */
  const opfs = () => {
    const src = sources.get('opfs');
    return src.available && src.writable && src.storage ? src.storage : null;
  };
  const counts = { bytesRead: 0 };
  return new Proxy(storage, {
    get(target, name) {
      if (name === 'bytesRead') return counts.bytesRead;
      const value = target[name];
      if (typeof value !== 'function') return value;
      return (...args) => {
        const cache = inCache(args[0]) ? opfs() : null;
        const out = cache ? cache[name](...args.map(mapped)) : value.apply(target, args);
        if (READS.has(name) && out?.length !== undefined) counts.bytesRead += out.length;
        return out;
      };
    },
  });
}
