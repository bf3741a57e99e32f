// A typed consumer, checked by tsc --strict: the package's types as a TS user meets them.
import { AsyncSession, Session, checkStorage, nodeAsyncStorage, nodeStorage, memoryStorage, type AsyncStorage, type JsStorage, type SessionContext } from 'xcsh-session';
import { init, initSync } from 'xcsh-session/slim';
import { SessionManager } from 'xcsh-session/agent';
import { SessionManager as PiSessionManager, type SessionContext as PiContext } from 'xcsh-session/pi';

const storages: JsStorage[] = [nodeStorage(), memoryStorage({ readOnly: false })];
const s: Session = Session.create(storages[1], { agentDir: '/agent', cwd: '/w' });
const id: string = s.appendMessage({ role: 'user', content: 'hi', timestamp: 1 });
const context: SessionContext = s.context();
const roles: string[] = context.messages.map((m) => m.role);
const later: Promise<unknown> = init();
const now: unknown = initSync;
const manager: SessionManager = SessionManager.inMemory('/w');
const pi: PiSessionManager = PiSessionManager.inMemory('/w');
const piModel: PiContext['model'] = pi.buildSessionContext().model;
const created: Session = Session.create(storages[1], { agentDir: '/agent', cwd: '/w', flavour: 'pi' });
// @ts-expect-error: a storage needs every required method
const broken: JsStorage = { read: () => new Uint8Array() };
const asyncStorage: AsyncStorage = nodeAsyncStorage();
// readRange: optional in a storage, there in the shipped ones; checkStorage's warnings.
const head: Uint8Array = nodeStorage().readRange('/agent/s.jsonl', 0, 4096);
const tail: Promise<Uint8Array> = Promise.resolve(nodeAsyncStorage().readRange('/agent/s.jsonl', 4096, 10));
const slice: Uint8Array = memoryStorage().readRange('/agent/s.jsonl', 0, 1);
const warnings: string[] = checkStorage({ ...nodeStorage(), readRange: undefined });
// @ts-expect-error: a storage's readRange may be missing
const unchecked: Uint8Array = storages[0].readRange('/agent/s.jsonl', 0, 1);
const opened: Promise<AsyncSession> = AsyncSession.open(asyncStorage, '/agent/s.jsonl');
const appended: Promise<string> = opened.then((a) => a.appendMessage({ role: 'user', content: 'hi', timestamp: 1 }));
const read: Promise<SessionContext> = opened.then((a) => a.context());
export { id, roles, later, now, manager, pi, piModel, created, broken, appended, read, head, tail, slice, warnings, unchecked };
