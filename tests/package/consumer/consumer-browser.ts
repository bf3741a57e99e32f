// A typed browser consumer, checked with `moduleResolution: bundler` (the browser entry's
// types) and with `nodenext` (tsc --init's default, which resolves the `node` condition
// even for a browser build): every condition's typings export the same names.
import { AsyncSession, Session, memoryStorage, nodeStorage, opfsStorage, ready, type SessionContext } from 'xcsh-session';
import * as inline from 'xcsh-session/inline';

const loaded: Promise<void> = ready.then(() => {});
const s = Session.create(memoryStorage(), { agentDir: '/agent', cwd: '/w' });
s.appendMessage({ role: 'user', content: 'hi', timestamp: 1 });
const context: SessionContext = s.context();
// Declared everywhere; it throws in a browser.
const onDisk: () => unknown = nodeStorage;
const opened: Promise<AsyncSession> = AsyncSession.create(opfsStorage(), { agentDir: '/agent', cwd: '/w' });
const fromInline: Promise<SessionContext> = inline.ready.then(() => inline.Session.inMemory('/w').context());
export { loaded, context, onDisk, opened, fromInline };
