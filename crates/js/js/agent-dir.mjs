// Where the agent keeps its sessions, blobs and history (shared by the agent modules).
import os from 'node:os';
import path from 'node:path';

/** `$PI_CODING_AGENT_DIR`, else `~/.xcsh/agent` (where the agent keeps sessions and blobs). */
export function getAgentDir() {
  return process.env.PI_CODING_AGENT_DIR || path.join(os.homedir(), '.xcsh', 'agent');
}
