// A2A's JavaScript SDK (@a2a-js/sdk 1.x) as a client of agent_a2a's push
// notifications: node push.mjs SDK_DIR BASE_URL HOOK_URL.  A message with
// its push config over A2A 1.0's JSON-RPC binding and over 0.3's (the
// SDK's legacyCompat), then the config read back.  One JSON line per
// observation, {"k": NAME, "v": VALUE}; t/a2a_push.t asserts on them.

import { randomUUID } from 'node:crypto';

const [dir, base, hook] = process.argv.slice(2);
const sdk = `${dir}/node_modules/@a2a-js/sdk/dist`;
const { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } =
    await import(`${sdk}/client/index.js`);
const { SendMessageRequest, Task, GetTaskPushNotificationConfigRequest,
        ListTaskPushNotificationConfigsRequest, TaskPushNotificationConfig,
        ListTaskPushNotificationConfigsResponse } =
    await import(`${sdk}/index.js`);

function out(k, v) {
    console.log(JSON.stringify({ k, v }));
}

async function call(k, f, conv) {
    try {
        const r = await f();
        out(k, { result: conv(r) });
        return conv(r);
    } catch (e) {
        out(k, { error: String(e?.message ?? e), code: e?.code ?? null });
        return null;
    }
}

function request(text, push) {
    return SendMessageRequest.fromJSON({
        message: { messageId: randomUUID(), role: 'ROLE_USER',
                   parts: [{ text }] },
        configuration: { taskPushNotificationConfig: push } });
}

const user = (url, init = {}) => fetch(url, { ...init, headers: {
    ...(init.headers ?? {}), 'X-User': 'alice' } });

try {
    const card = await (await fetch(`${base}/a2a/.well-known/agent-card.json`,
        { headers: { 'X-User': 'alice' } })).json();
    out('card', card.capabilities);

    const factory = new ClientFactory(ClientFactoryOptions.createFrom(
        ClientFactoryOptions.default, { transports: [
            new JsonRpcTransportFactory({ fetchImpl: user }) ] }));
    const v1 = await factory.createFromAgentCard(card);
    const task = await call('v1_send', () => v1.sendMessage(request('hi', {
        id: 'cfg-1', url: `${hook}/v1`, token: 'tok-1' })),
        (r) => Task.toJSON(r));
    await call('v1_get', () => v1.getTaskPushNotificationConfig(
        GetTaskPushNotificationConfigRequest.fromJSON({
            taskId: task?.id, id: 'cfg-1' })),
        (r) => TaskPushNotificationConfig.toJSON(r));
    await call('v1_list', () => v1.listTaskPushNotificationConfig(
        ListTaskPushNotificationConfigsRequest.fromJSON({
            taskId: task?.id })),
        (r) => ListTaskPushNotificationConfigsResponse.toJSON(r));
    await call('v1_refused', () => v1.sendMessage(request('hi', {
        url: 'http://127.0.0.1:9/elsewhere', token: 't' })),
        (r) => Task.toJSON(r));

    const legacy = { ...card, supportedInterfaces:
        card.supportedInterfaces.filter((i) => i.protocolVersion === '0.3') };
    const f03 = new ClientFactory(ClientFactoryOptions.createFrom(
        ClientFactoryOptions.default, { transports: [
            new JsonRpcTransportFactory({ fetchImpl: user,
                                          legacyCompat: { enabled: true } })
        ] }));
    const v03 = await f03.createFromAgentCard(legacy);
    const t03 = await call('v03_send', () => v03.sendMessage(request('hey', {
        url: `${hook}/legacy`,
        authentication: { scheme: 'Bearer', credentials: 'cred-1' } })),
        (r) => Task.toJSON(r));
    await call('v03_get', () => v03.getTaskPushNotificationConfig(
        GetTaskPushNotificationConfigRequest.fromJSON({
            taskId: t03?.id, id: t03?.id })),
        (r) => TaskPushNotificationConfig.toJSON(r));
} catch (e) {
    out('__died__', String(e?.stack ?? e));
}
