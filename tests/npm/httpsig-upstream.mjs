// httpsig-upstream.mjs -- an upstream that checks sworn's RFC 9421 signatures with an
// implementation no one here wrote: the npm http-message-signatures package (1.0.6).
//
//   node httpsig-upstream.mjs PORT_FILE SPKI_DER
//
// Listens on 127.0.0.1 (a free port, written to PORT_FILE once listening). SPKI_DER is the
// operator's published key (the DER SubjectPublicKeyInfo of the HSM key); its key id is computed
// here from the DER (SHA-256, lower-case hex: docs/keys.md), not taken from sworn.
//
// For every request it answers 200 with a JSON verdict:
//   signed       the request carries Signature/Signature-Input
//   verified     the library verified it: the keyid is the key's, alg ecdsa-p256-sha256, tag
//                "sworn", created within 300 s, and all six components covered (content-digest
//                only with a body)
//   digest_ok    Content-Digest (RFC 9530) is sha-256 of the body received (null: no header)
//                the request's Host and target are exactly the components the library derived,
//                and its Sworn-Entry was not accepted before (docs/api-owners.md steps 5 and 7)
//   tampered     the captured request re-verified with one part changed: method, path, query,
//                body (Content-Digest kept: the digest check fails), body with a fresh digest
//                (the signature fails), Sworn-Entry; the same request again (replay); the target
//                spelt with dot segments, escaped dots or a backslash, the Host with userinfo or
//                a zero-padded port (red team of issue 16, B); each is true when rejected.
//                RT16B_OLD_RECIPE=1 in the environment checks as docs/api-owners.md did before
//                (no target check, no replay memory): then those six verify
//                With a Sworn-Batch field (decisiond's `receipts: batch`, docs/formats.md section
//                14), the Signature covers the root of a commit group's tree, not the base: the
//                key's verify function given to the library hashes the base the library built,
//                walks the path from it to the root and checks the signature over the batch TBS
//                (docs/api-owners.md, "Batch signatures"); and tampered.batch (the group size
//                changed) must be rejected too
//   counts       how often each of signature, signature-input, content-digest, sworn-entry,
//                sworn-batch came
//                (field names compared as a server reads them: any case, '_' as '-')
//   method, url, body_len, sworn_entry, log_index, created, keyid, tag
// A WebSocket upgrade gets the 101 and then the same verdict as one text frame.
// The C test (test_proxy_httpsig.c) asserts on the verdicts.
import { createRequire } from 'node:module';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';

const modules = process.env.SWORN_NODE_MODULES;
const require = createRequire(`${modules}/`);
const { httpbis, createVerifier } = require('http-message-signatures');

const [portFile, spkiPath] = process.argv.slice(2);
const spki = fs.readFileSync(spkiPath);
const publicKey = crypto.createPublicKey({ key: spki, format: 'der', type: 'spki' });
const keyid = crypto.createHash('sha256').update(spki).digest('hex');
const verify = createVerifier(publicKey, 'ecdsa-p256-sha256');

// docs/api-owners.md, "Batch signatures": Sworn-Batch: i=<index>, n=<size>, path=:<base64>:.
// The verify function for the library: SHA-256 of the base it built is the item; the item's
// leaf SHA-256(00 || item) up the RFC 9162 path gives the root; the signature (r||s) must verify
// over FF "sworn/v1 batch" 00 || u32 size || root with the operator's key. null: not a batch.
function batchVerifier(field) {
  const m = /^i=(\d{1,3}), n=(\d{1,3}), path=:([A-Za-z0-9+/=]*):$/.exec(field ?? '');
  if (m === null) return null;
  const index = Number(m[1]);
  const size = Number(m[2]);
  const path = Buffer.from(m[3], 'base64');
  const H = (...parts) => crypto.createHash('sha256').update(Buffer.concat(parts)).digest();
  return async (data, signature) => {
    if (!(size >= 1 && size <= 256 && index < size && path.length % 32 === 0)) return false;
    let r = H(Buffer.from([0]), H(Buffer.from(data)));
    let fn = index;
    let sn = size - 1;
    for (let k = 0; k < path.length; k += 32) {
      const p = path.subarray(k, k + 32);
      if (sn === 0) return false;
      if ((fn & 1) === 1 || fn === sn) {
        r = H(Buffer.from([1]), p, r);
        while ((fn & 1) === 0 && fn !== 0) { fn >>= 1; sn >>= 1; }
      } else {
        r = H(Buffer.from([1]), r, p);
      }
      fn >>= 1;
      sn >>= 1;
    }
    if (sn !== 0) return false;
    const n = Buffer.alloc(4);
    n.writeUInt32BE(size);
    const prefix = Buffer.concat([Buffer.from([0xff]), Buffer.from('sworn/v1 batch'), Buffer.from([0])]);
    const tbs = Buffer.concat([prefix, n, r]);
    return crypto.verify('sha256', tbs, { key: publicKey, dsaEncoding: 'ieee-p1363' }, signature);
  };
}

function fold(name) {
  return name.toLowerCase().replace(/_/g, '-');
}

function contentDigestOk(headers, body) {
  const v = headers['content-digest'];
  if (v === undefined) return null;
  const m = /^sha-256=:([A-Za-z0-9+/=]+):$/.exec(v);
  if (m === null) return false;
  return m[1] === crypto.createHash('sha256').update(body).digest('base64');
}

// The library's verdict on a message ({method, url, headers}); false on any error.
async function verdict(message, hasBody, seen) {
  const requiredFields = ['@method', '@authority', '@path', '@query', 'sworn-entry'];
  if (hasBody) requiredFields.push('content-digest');
  try {
    const ok = await httpbis.verifyMessage(
      {
        all: true,
        maxAge: 300,
        tolerance: 5,
        requiredParams: ['created', 'keyid', 'alg', 'tag'],
        requiredFields,
        keyLookup: async (params) => {
          if (seen) Object.assign(seen, params);
          if (params.keyid !== keyid || params.tag !== 'sworn') return null;
          const batch = batchVerifier(message.headers['sworn-batch']);
          return { id: keyid, algs: ['ecdsa-p256-sha256'], verify: batch ?? verify };
        },
      },
      message,
    );
    return ok === true;
  } catch (e) {
    return false;
  }
}

// docs/api-owners.md, step 5 (red team of issue 16, B): the library derives @authority, @path
// and @query by parsing the URL with a WHATWG parser, which removes dot segments ("/a/../x",
// "/a/%2e%2e/x"), reads "\\" as "/", drops userinfo from the Host and leading zeros from its
// port. So the request's own Host and request target must be exactly what the parser derived
// (sworn sends the canonical forms it signed): anything else could be acted on as another path.
function targetIsCanonical(url, rawHost, rawTarget) {
  if (process.env.RT16B_OLD_RECIPE) return true;
  try {
    const u = new URL(url);
    return u.host === rawHost && `${u.pathname}${u.search}` === rawTarget;
  } catch (e) {
    return false;
  }
}

// docs/api-owners.md, step 7: the Sworn-Entry values accepted within the window (maxAge +
// tolerance), so the same signed request sent again is refused.
const acceptedEntries = new Map();
function firstUse(entry, nowMs) {
  for (const [k, until] of acceptedEntries) if (until < nowMs) acceptedEntries.delete(k);
  if (process.env.RT16B_OLD_RECIPE) return true;
  if (entry === undefined || acceptedEntries.has(entry)) return false;
  acceptedEntries.set(entry, nowMs + 305 * 1000);
  return true;
}

// What an API owner does (docs/api-owners.md): the target check, the signature, no replay.
async function apiOwner(message, rawHost, rawTarget, hasBody, seen) {
  if (!targetIsCanonical(message.url, rawHost, rawTarget)) return false;
  if (!(await verdict(message, hasBody, seen))) return false;
  return firstUse(message.headers['sworn-entry'], Date.now());
}

async function check(req, body) {
  const headers = { ...req.headers };
  const url = `http://${req.headers.host}${req.url}`;
  const message = { method: req.method, url, headers };
  const hasBody = body.length > 0 || headers['content-length'] !== undefined;
  const counts = {
    'signature': 0, 'signature-input': 0, 'content-digest': 0, 'sworn-entry': 0, 'sworn-batch': 0,
  };
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const n = fold(req.rawHeaders[i]);
    if (n in counts) counts[n]++;
  }
  const out = {
    method: req.method,
    url: req.url,
    body_len: body.length,
    counts,
    signed: headers['signature'] !== undefined || headers['signature-input'] !== undefined,
    sworn_entry: headers['sworn-entry'] ?? null,
    log_index: headers['sworn-log-index'] ?? null,
    digest_ok: contentDigestOk(headers, body),
    verified: false,
    tampered: null,
  };
  if (!out.signed) return out;
  const seen = {};
  out.verified = await apiOwner(message, req.headers.host, req.url, hasBody, seen);
  out.keyid = seen.keyid ?? null;
  out.tag = seen.tag ?? null;
  out.created = seen.created instanceof Date ? seen.created.getTime() / 1000 : null;
  const u = new URL(url);
  const other = (f) => ({ ...message, ...f });
  const withPath = new URL(url);
  withPath.pathname = `${u.pathname}x`;
  const withQuery = new URL(url);
  withQuery.search = u.search ? `${u.search}&x=1` : '?x=1';
  const changedBody = Buffer.concat([body, Buffer.from('!')]);
  // sent instead of the request sworn sent (so its entry is not yet seen): the target check and
  // the signature only
  const spelt = async (host, target) => targetIsCanonical(`http://${host}${target}`, host, target)
    && verdict({ ...message, url: `http://${host}${target}` }, hasBody);
  const freshDigest = `sha-256=:${crypto.createHash('sha256').update(changedBody).digest('base64')}:`;
  out.tampered = {
    method: !(await verdict(other({ method: req.method === 'POST' ? 'PUT' : 'POST' }), hasBody)),
    path: !(await verdict(other({ url: withPath.toString() }), hasBody)),
    query: !(await verdict(other({ url: withQuery.toString() }), hasBody)),
    // the body changed, its Content-Digest kept: the digest no longer matches the body
    body: contentDigestOk(headers, changedBody) !== true,
    // the body changed with a matching digest: the signature (which covers the digest) fails
    body_and_digest: !(await verdict(
      other({ headers: { ...headers, 'content-digest': freshDigest } }),
      true,
    )),
    // (red team of issue 16, B) the same signed request again, and spellings of its Host and
    // target that a WHATWG parser reads as the signed ones: each refused by the API owner's checks
    replay: !(await apiOwner(message, req.headers.host, req.url, hasBody)),
    path_dots: !(await spelt(req.headers.host, `/zz/..${req.url}`)),
    path_escaped_dots: !(await spelt(req.headers.host, `/zz/%2e%2e${req.url}`)),
    path_backslash: !(await spelt(req.headers.host, `/zz\\..${req.url}`)),
    authority_userinfo: !(await spelt(`evil@${req.headers.host}`, req.url)),
    authority_port: !(await spelt(`${u.hostname}:0${u.port || '80'}`, req.url)),
    sworn_entry: !(await verdict(
      other({ headers: { ...headers, 'sworn-entry': `:${Buffer.alloc(32).toString('base64')}:` } }),
      hasBody,
    )),
    // a batch signature with its group size changed (null: not a batch)
    batch: headers['sworn-batch'] === undefined ? null : !(await verdict(
      other({ headers: { ...headers, 'sworn-batch': headers['sworn-batch'].replace(/n=(\d+)/, (x, v) => `n=${Number(v) + 1}`) } }),
      hasBody,
    )),
  };
  return out;
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    const out = await check(req, Buffer.concat(chunks));
    const text = JSON.stringify(out);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
});

// A WebSocket upgrade (ws.upgrade): the same verdict, as the one text frame after the 101.
server.on('upgrade', async (req, socket) => {
  const out = await check(req, Buffer.alloc(0));
  const accept = crypto.createHash('sha1')
    .update(`${req.headers['sec-websocket-key']}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
    .digest('base64');
  const payload = Buffer.from(JSON.stringify(out));
  const head = payload.length < 126
    ? Buffer.from([0x81, payload.length])
    : Buffer.from([0x81, 126, payload.length >> 8, payload.length & 0xff]);
  socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n'
    + `Sec-WebSocket-Accept: ${accept}\r\n\r\n`);
  socket.end(Buffer.concat([head, payload]));
});

server.listen(0, '127.0.0.1', () => {
  fs.writeFileSync(`${portFile}.tmp`, String(server.address().port));
  fs.renameSync(`${portFile}.tmp`, portFile);
});
