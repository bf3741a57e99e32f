// The scenario every consumer runs, whatever loaded the package: create a session in the
// given storage, append a user and an assistant message and a label, open it again from
// the storage, and read it back. Returns what it saw, the same JSON in every host. With
// `Session` the calls return values, with `AsyncSession` Promises: awaited either way.
export async function scenario({ Session, version }, SessionClass, storage, agentDir) {
  const s = await SessionClass.create(storage, { agentDir, cwd: '/work/consumer' });
  const first = await s.appendMessage({ role: 'user', content: 'hi from a consumer', timestamp: 1 });
  await s.appendMessage({ role: 'assistant', content: [{ type: 'text', text: 'hello' }], timestamp: 2 });
  await s.appendLabelChange(first, 'start');
  const file = s.file;
  await s.close();
  const again = await SessionClass.open(storage, file, { readOnly: true });
  const context = again.context();
  return {
    version: typeof version() === 'string',
    messages: context.messages.map((m) => m.role),
    text: context.messages[0].content,
    label: again.label(first) ?? null,
    entries: again.entries().length,
    idsDiffer: Session.inMemory('/w').sessionId !== Session.inMemory('/w').sessionId,
  };
}
