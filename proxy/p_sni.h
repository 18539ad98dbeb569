/*
 * p_sni.h -- a bounded reader of the first bytes a client sends inside a CONNECT tunnel: is it a
 * TLS ClientHello, and which server name and ALPN protocols does it carry?
 *
 * The proxy reads the tunnel's first bytes before it answers them, so that it can (1) tell TLS
 * from anything else (a non-TLS payload is decided as tcp.connect), (2) compare the SNI with the
 * CONNECT target (domain fronting) and (3) choose the leaf certificate to present. The bytes are
 * then handed unchanged to OpenSSL; this reader only looks.
 *
 * What is accepted (anything else is -1 with a static sentence in *why):
 *   record     content type 22 (handshake), legacy version 0x03 0x01..0x03, length 1..16384
 *              (RFC 8446 5.1).
 *   handshake  type 1 (client_hello); its 24-bit length is exactly the record's length less the
 *              4-byte handshake header: the ClientHello fills the first record alone. A
 *              ClientHello fragmented over several records is refused (no client sends one for a
 *              ClientHello that fits a record, and reassembly is room for disagreement with
 *              OpenSSL's parser); so is anything after it in the same record.
 *   body       legacy_version 0x03 0x01..0x03, random (32), session_id (0..32), cipher_suites
 *              (even, >= 2 bytes), compression_methods (>= 1), then either nothing (no
 *              extensions) or an extensions block whose length fills the body exactly.
 *   extensions each type at most once (RFC 8446 4.2); each length inside the block.
 *   server_name (0): a ServerNameList filling the extension exactly, holding exactly one entry,
 *              of name_type host_name (0), of 1..255 bytes: letters, digits, '-' and '.' only;
 *              labels 1..63 bytes, no empty label (a single trailing dot is tolerated, as some
 *              clients send it). The name is copied lower-cased into out->name. The reader does
 *              not decide whether the name is acceptable as a host (a dotted quad, which RFC 6066
 *              forbids in SNI, passes here): the caller canonicalises it with
 *              sworn_resource_canon_host and compares it with the CONNECT target.
 *   ALPN (16): a ProtocolNameList filling the extension exactly, of >= 2 bytes, each name 1..255
 *              bytes; offers_http11 / offers_h2 say whether "http/1.1" / "h2" are among them.
 *   other extensions (including encrypted_client_hello) are skipped by their length.
 * Bytes after the first record are not looked at (the TLS stack reads them).
 *
 * Thread safety: pure computation on the caller's bytes, no allocation, no globals (the bounded
 * reads of common/buf.h may overwrite this thread's sworn_err slot; the answer is *why, not it).
 * The extension bookkeeping takes 8 KiB of stack (one bit per extension type).
 */
#ifndef SWORN_P_SNI_H
#define SWORN_P_SNI_H

#include <stddef.h>
#include <stdint.h>

#define SWORN_SNI_NAME_MAX 255u     /* RFC 6066 HostName as this reader accepts it */
#define SWORN_SNI_RECORD_MAX 16384u /* TLSPlaintext.length limit (RFC 8446 5.1) */
#define SWORN_SNI_HEADER_LEN 5u     /* a TLS record header */
#define SWORN_SNI_PEEK_MAX (SWORN_SNI_HEADER_LEN + SWORN_SNI_RECORD_MAX) /* most bytes needed */

struct sworn_sni {
    int has_sni;                       /* 1: a server_name extension with its host_name */
    char name[SWORN_SNI_NAME_MAX + 1]; /* lower-cased host_name, NUL-terminated; "" if none */
    int offers_http11, offers_h2;      /* the ALPN list names "http/1.1" / "h2" */
};

/*
 * Read the first bytes of a tunnel (p[0..len); p may be NULL only when len is 0).
 * Returns:
 *    0  p starts with one complete TLS record holding a ClientHello that follows the rules
 *       above; *out filled;
 *    1  the bytes so far are a valid start of such a record (every header field present checks
 *       out) and the record is not complete yet: read more (at most SWORN_SNI_PEEK_MAX bytes in
 *       all are ever needed);
 *   -1  not TLS, or a malformed or hostile ClientHello; *why holds a static sentence.
 * OUT: *out is zeroed first on every call and filled only when 0 is returned; *why is set on
 * -1 only (why may not be NULL). Once a prefix gives -1, every longer input does too.
 */
int sworn_sni_peek(const uint8_t *p, size_t len, struct sworn_sni *out, const char **why);

/*
 * Whether p[0..len) starts like a TLS handshake record (content type 22 and version 0x03
 * 0x01..0x03 as far as the bytes go; 1 for len 0). Lets a caller tell "not TLS at all" (decide
 * as tcp.connect) from "TLS, but a ClientHello sworn_sni_peek refuses" (refuse the tunnel).
 */
int sworn_sni_looks_tls(const uint8_t *p, size_t len);

#endif
