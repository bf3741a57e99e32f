// A typed browser consumer (moduleResolution bundler): the browser entry's types.
import { AsyncSession, Session, memoryStorage, opfsStorage, type SessionContext } from 'xcsh-session';

const s = Session.create(memoryStorage(), { agentDir: '/agent', cwd: '/w' });
s.appendMessage({ role: 'user', content: 'hi', timestamp: 1 });
const context: SessionContext = s.context();
// @ts-expect-error: node:fs is not in the browser entry
import('xcsh-session').then((m) => m.nodeStorage());
const opened: Promise<AsyncSession> = AsyncSession.create(opfsStorage(), { agentDir: '/agent', cwd: '/w' });
export { context, opened };
