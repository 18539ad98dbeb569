// jose_tokens.mjs -- delegation tokens and a JWKS made by jose (panva/jose, from the npm test
// clients: an implementation no one here wrote), for tests/unit/test_proxy_delegation.c.
//
//   node jose_tokens.mjs NODE_MODULES OUT_DIR
//
// Writes OUT_DIR/jwks.json (the public keys: EC P-256 "ec-1", RSA 2048 "rsa-1", Ed25519 "ed-1",
// an EC key "enc-1" with use "enc", an Ed25519 key "ops-1" with key_ops ["sign"] only),
// OUT_DIR/one.json (a JWKS of the Ed25519 key alone, without kid) and OUT_DIR/tokens.json:
// {name: compact JWS} for the cases the test checks, each built as jose builds tokens (SignJWT),
// with the claims of a delegation: sub, iss, act (nested), may_act, client_id, aud, scope, jti,
// exp.
import { pathToFileURL } from "node:url";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

const [, , nodeModules, outDir] = process.argv;
const jose = await import(pathToFileURL(join(nodeModules, "jose", "dist", "webapi", "index.js")));

const now = Math.floor(Date.now() / 1000);
const claims = {
  sub: "alice@example.com",
  act: { sub: "agent-svc", iss: "https://sts.example", act: { sub: "planner", iss: "https://sts.example" } },
  may_act: { sub: "agent-svc", iss: "https://sts.example" },
  client_id: "agent-client",
  scope: "repo:read issues:write",
  jti: "tok-0001",
};

async function pair(alg, opts) {
  return jose.generateKeyPair(alg, { extractable: true, ...opts });
}

const ec = await pair("ES256");
const rsa = await pair("RS256", { modulusLength: 2048 });
const ed = await pair("EdDSA", { crv: "Ed25519" });
const enc = await pair("ES256");
const ops = await pair("EdDSA", { crv: "Ed25519" });

async function pub(k, extra) {
  return { ...(await jose.exportJWK(k.publicKey)), ...extra };
}

const jwks = {
  keys: [
    await pub(ec, { kid: "ec-1", alg: "ES256", use: "sig" }),
    await pub(rsa, { kid: "rsa-1", alg: "RS256" }),
    await pub(ed, { kid: "ed-1", key_ops: ["verify"] }),
    await pub(enc, { kid: "enc-1", use: "enc" }),
    await pub(ops, { kid: "ops-1", key_ops: ["sign"] }),
  ],
};
writeFileSync(join(outDir, "jwks.json"), JSON.stringify(jwks));
writeFileSync(join(outDir, "one.json"), JSON.stringify({ keys: [await pub(ed, {})] }));

async function sign(key, header, payload, exp = now + 600) {
  return new jose.SignJWT(payload)
    .setProtectedHeader(header)
    .setIssuer("https://idp.example")
    .setAudience(["https://api.example", "https://other.example"])
    .setIssuedAt(now)
    .setExpirationTime(exp)
    .sign(key.privateKey);
}

const tokens = {};
tokens.ec = await sign(ec, { alg: "ES256", kid: "ec-1", typ: "JWT" }, claims);
tokens.rsa = await sign(rsa, { alg: "RS256", kid: "rsa-1" }, claims);
tokens.ed = await sign(ed, { alg: "EdDSA", kid: "ed-1" }, claims);
tokens.ed_nokid = await sign(ed, { alg: "EdDSA" }, claims);
tokens.expired = await sign(ec, { alg: "ES256", kid: "ec-1" }, claims, now - 3600);
tokens.wrong_kid = await sign(ec, { alg: "ES256", kid: "rsa-1" }, claims);
tokens.unknown_kid = await sign(ec, { alg: "ES256", kid: "nope" }, claims);
tokens.enc_key = await sign(enc, { alg: "ES256", kid: "enc-1" }, claims);
tokens.ops_key = await sign(ops, { alg: "EdDSA", kid: "ops-1" }, claims);
// may_act naming someone else than the current actor
tokens.may_act_other = await sign(ec, { alg: "ES256", kid: "ec-1" },
  { ...claims, may_act: { sub: "someone-else" } });
// a single audience string, no may_act
tokens.one_aud = await new jose.SignJWT({ sub: "bob", scope: "read" })
  .setProtectedHeader({ alg: "ES256", kid: "ec-1" })
  .setAudience("https://api.example")
  .setExpirationTime(now + 600)
  .sign(ec.privateKey);
// alg confusion: HS256 keyed with the RSA public key's bytes (as a JWK's text and as SPKI DER)
const rsaPem = await jose.exportSPKI(rsa.publicKey);
tokens.hs256_pem = await new jose.SignJWT(claims)
  .setProtectedHeader({ alg: "HS256", kid: "rsa-1" })
  .sign(new TextEncoder().encode(rsaPem));
// alg none
tokens.none = new jose.UnsecuredJWT(claims).setIssuer("https://idp.example").encode();
// tampered: the payload of one token with the signature of another
{
  const a = tokens.ec.split(".");
  const b = (await sign(ec, { alg: "ES256", kid: "ec-1" }, { ...claims, sub: "mallory" })).split(".");
  tokens.tampered = [a[0], b[1], a[2]].join(".");
}
writeFileSync(join(outDir, "tokens.json"), JSON.stringify(tokens));
