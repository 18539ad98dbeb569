// mcp-server.mjs -- an MCP server made with the SDK no one here wrote (@modelcontextprotocol/sdk
// 1.32.2: McpServer and StreamableHTTPServerTransport, stateful, sessions by Mcp-Session-Id), for
// the MCP tests of sworn-proxy (tests/unit/test_proxy_mcp_sdk.c, bench/bench_proxy.c).
//
//   node mcp-server.mjs PORT_FILE CALLS_FILE
//
// Listens on 127.0.0.1, port chosen by the kernel, written to PORT_FILE once listening (written
// to a temporary name and renamed, so a reader never sees half of it). The endpoint is /mcp.
// Each tool call the server executes appends one JSON line to CALLS_FILE ({"tool", "arguments"}),
// so a test can tell what reached the server from what the proxy stopped.
//
// Tools: echo {text}; pay {to, amount} (the payment whose amount a budget caps); delete_all {};
// slow {}: sends a progress notification on the call's SSE stream, then waits until the tool
// release {} is called (so the client sees the notification before the stream ends, or never
// ends: how a test shows the proxy relays an SSE event as it arrives). A resource
// file:///docs/readme and a prompt review {topic}.
import { randomUUID } from 'node:crypto';
import { appendFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/v4';

const [portFile, callsFile] = process.argv.slice(2);
if (!portFile || !callsFile) {
    console.error('usage: node mcp-server.mjs PORT_FILE CALLS_FILE');
    process.exit(2);
}

let release = null; // resolves the slow tool's wait
let released = false;

function called(tool, args) {
    appendFileSync(callsFile, JSON.stringify({ tool, arguments: args }) + '\n');
}

function makeServer() {
    const server = new McpServer({ name: 'sworn-test-server', version: '1.0.0' });
    server.registerTool('echo', { description: 'Echo the text', inputSchema: { text: z.string() } },
        async ({ text }) => {
            called('echo', { text });
            return { content: [{ type: 'text', text }] };
        });
    server.registerTool('pay', {
        description: 'Pay an amount to someone',
        inputSchema: { to: z.string(), amount: z.number() },
    }, async ({ to, amount }) => {
        called('pay', { to, amount });
        return { content: [{ type: 'text', text: `paid ${amount} to ${to}` }] };
    });
    server.registerTool('delete_all', { description: 'Delete everything', inputSchema: {} },
        async () => {
            called('delete_all', {});
            return { content: [{ type: 'text', text: 'deleted everything' }] };
        });
    server.registerTool('slow', { description: 'Report progress, then wait for release', inputSchema: {} },
        async (_args, extra) => {
            called('slow', {});
            const done = released ? Promise.resolve() : new Promise((resolve) => { release = resolve; });
            await extra.sendNotification({
                method: 'notifications/progress',
                params: { progressToken: extra._meta?.progressToken ?? 0, progress: 1, total: 2,
                          message: 'started' },
            });
            await done;
            return { content: [{ type: 'text', text: 'slow done' }] };
        });
    server.registerTool('release', { description: 'End the slow call', inputSchema: {} }, async () => {
        called('release', {});
        released = true;
        if (release) release();
        return { content: [{ type: 'text', text: 'released' }] };
    });
    server.registerResource('readme', 'file:///docs/readme', { mimeType: 'text/plain' }, async (uri) => ({
        contents: [{ uri: uri.href, text: 'the readme' }],
    }));
    server.registerPrompt('review', { description: 'Review a topic', argsSchema: { topic: z.string() } },
        ({ topic }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Review ${topic}` } }] }));
    return server;
}

const transports = new Map(); // session id -> transport

async function readJson(req) {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const text = Buffer.concat(chunks).toString('utf8');
    return text.length > 0 ? JSON.parse(text) : undefined;
}

const http = createServer(async (req, res) => {
    try {
        if (!req.url.startsWith('/mcp')) {
            res.writeHead(404).end();
            return;
        }
        const sid = req.headers['mcp-session-id'];
        const body = req.method === 'POST' ? await readJson(req) : undefined;
        let transport = sid ? transports.get(sid) : undefined;
        if (!transport && !sid && req.method === 'POST' && isInitializeRequest(body)) {
            transport = new StreamableHTTPServerTransport({
                sessionIdGenerator: () => randomUUID(),
                onsessioninitialized: (id) => transports.set(id, transport),
            });
            transport.onclose = () => { if (transport.sessionId) transports.delete(transport.sessionId); };
            await makeServer().connect(transport);
        }
        if (!transport) {
            res.writeHead(400, { 'content-type': 'application/json' })
                .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'no session' }, id: null }));
            return;
        }
        await transport.handleRequest(req, res, body);
    } catch (e) {
        console.error('mcp-server:', e);
        if (!res.headersSent) res.writeHead(500).end();
    }
});

http.listen(0, '127.0.0.1', () => {
    writeFileSync(portFile + '.tmp', String(http.address().port));
    renameSync(portFile + '.tmp', portFile);
});
process.on('SIGTERM', () => process.exit(0));
