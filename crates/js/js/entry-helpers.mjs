// Helpers over a file's records that both drop-ins export under the agents' names
// (`xcsh-session/agent` for xcsh's session-manager module, `xcsh-session/pi` for pi's).
import { migrateRecords } from './node.mjs';

/**
 * `migrateSessionEntries(entries)`: a file's records (header first) migrated to the current
 * version in place, each object keeping its identity, as the agents mutate them.
 */
export function migrateSessionEntries(entries) {
  const migrated = migrateRecords(entries);
  migrated.forEach((next, i) => {
    const entry = entries[i];
    for (const key of Object.keys(entry)) if (!(key in next)) delete entry[key];
    Object.assign(entry, next);
  });
}

/** The newest compaction entry of `entries`, or `null`. */
export function getLatestCompactionEntry(entries) {
  for (let i = entries.length - 1; i >= 0; i--) {
    if (entries[i].type === 'compaction') return entries[i];
  }
  return null;
}
