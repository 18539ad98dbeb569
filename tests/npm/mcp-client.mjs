// mcp-client.mjs -- the SDK's MCP client (@modelcontextprotocol/sdk 1.32.2, Client over
// StreamableHTTPClientTransport), calling an MCP server through sworn-proxy, for
// tests/unit/test_proxy_mcp_sdk.c.
//
//   node mcp-client.mjs PROXY_URL SERVER_URL
//
// Node's fetch ignores HTTP_PROXY, so the transport gets undici's fetch with a ProxyAgent
// (proxyTunnel: false: an http:// URL goes to the proxy in absolute form, as a forward proxy
// gets it, not through a CONNECT tunnel). Each step prints one JSON line {"step", "ok", ...};
// a step whose outcome is not the expected one prints "ok": false, and the exit status is then 1.
// The whole run fails after 60 s (a timer that only fails: nothing waits on it to succeed).
//
// The steps (the test's policy allows the session methods, echo, pay up to 10 per hour,
// file:///docs/* and the prompt review, and nothing else):
//   connect     initialize + notifications/initialized (and the SDK's GET SSE stream)
//   list        tools/list names the five tools
//   echo        allowed: the text comes back
//   delete_all  denied: a JSON-RPC error, code -32001, "denied by sworn: ..." with the log index
//   pay-4, pay-5.5           allowed (9.5 of 10)
//   pay-1                    denied: the window's cap
//   pay-0.5                  allowed (10 of 10)
//   read-readme, prompt-review   allowed
//   slow        a progress notification arrives on the call's SSE stream while the server still
//               holds the stream open; only then is release called (another request), which lets
//               the server end it: the call cannot finish unless the proxy relayed the event
//               before the stream's end
//   end         DELETE of the session (mcp.rpc.end)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { ProxyAgent, fetch as undiciFetch } from 'undici';

const [proxyUrl, serverUrl] = process.argv.slice(2);
if (!proxyUrl || !serverUrl) {
    console.error('usage: node mcp-client.mjs PROXY_URL SERVER_URL');
    process.exit(2);
}

const agent = new ProxyAgent({ uri: proxyUrl, proxyTunnel: false });
const viaProxy = (url, init) => undiciFetch(url, { ...init, dispatcher: agent });
let failed = false;

function report(step, ok, extra = {}) {
    if (!ok) failed = true;
    console.log(JSON.stringify({ step, ok, ...extra }));
}

setTimeout(() => {
    report('timeout', false, { why: 'the run took more than 60 s' });
    process.exit(1);
}, 60000).unref();

const text = (r) => r.content?.[0]?.text;

async function expectAllowed(step, call, want) {
    try {
        const r = await call();
        const got = want(r);
        report(step, got === true, got === true ? {} : { got });
    } catch (e) {
        report(step, false, { error: String(e) });
    }
}

async function expectDenied(step, call) {
    try {
        const r = await call();
        report(step, false, { why: 'allowed', result: r });
    } catch (e) {
        const ok = e instanceof McpError && e.code === -32001 &&
                   e.message.includes('denied by sworn: ') && e.data?.effect === 'deny' &&
                   Number.isInteger(e.data?.log_index);
        report(step, ok, { code: e.code, message: e.message, data: e.data });
    }
}

const client = new Client({ name: 'sworn-test-client', version: '1.0.0' });
const transport = new StreamableHTTPClientTransport(new URL(serverUrl), { fetch: viaProxy });

try {
    await client.connect(transport);
    report('connect', transport.sessionId !== undefined, { session: transport.sessionId !== undefined });
} catch (e) {
    report('connect', false, { error: String(e) });
    process.exit(1);
}

await expectAllowed('list', () => client.listTools(), (r) => {
    const names = r.tools.map((t) => t.name).sort().join(',');
    return names === 'delete_all,echo,pay,release,slow' || names;
});
await expectAllowed('echo', () => client.callTool({ name: 'echo', arguments: { text: 'hello' } }),
    (r) => text(r) === 'hello' || text(r));
await expectDenied('delete_all', () => client.callTool({ name: 'delete_all', arguments: {} }));
await expectAllowed('pay-4', () => client.callTool({ name: 'pay', arguments: { to: 'bob', amount: 4 } }),
    (r) => text(r) === 'paid 4 to bob' || text(r));
await expectAllowed('pay-5.5', () => client.callTool({ name: 'pay', arguments: { to: 'bob', amount: 5.5 } }),
    (r) => text(r) === 'paid 5.5 to bob' || text(r));
await expectDenied('pay-1', () => client.callTool({ name: 'pay', arguments: { to: 'bob', amount: 1 } }));
await expectAllowed('pay-0.5', () => client.callTool({ name: 'pay', arguments: { to: 'eve', amount: 0.5 } }),
    (r) => text(r) === 'paid 0.5 to eve' || text(r));
await expectAllowed('read-readme', () => client.readResource({ uri: 'file:///docs/readme' }),
    (r) => r.contents?.[0]?.text === 'the readme' || r);
await expectAllowed('prompt-review', () => client.getPrompt({ name: 'review', arguments: { topic: 'x' } }),
    (r) => r.messages?.[0]?.content?.text === 'Review x' || r);

// The SSE event before the stream's end: release only once the progress event came.
{
    let progressed = false;
    let released = null;
    await expectAllowed('slow', () => client.callTool({ name: 'slow', arguments: {} }, undefined, {
        onprogress: (p) => {
            if (progressed) return;
            progressed = p.message === 'started';
            released = client.callTool({ name: 'release', arguments: {} });
        },
    }), (r) => (text(r) === 'slow done' && progressed) || { text: text(r), progressed });
    try {
        report('release', released !== null && text(await released) === 'released');
    } catch (e) {
        report('release', false, { error: String(e) });
    }
}

try {
    await transport.terminateSession();
    report('end', transport.sessionId === undefined);
} catch (e) {
    report('end', false, { error: String(e) });
}
await client.close();
await agent.close();
process.exit(failed ? 1 : 0);
