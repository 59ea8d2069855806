// The one rule set that keeps credentials out of everything MAP Inspector writes, copies or
// prints: trace records of every kind (frames, operator actions, close reasons, notes), CSV and
// Chrome trace exports, the CLI's JSON output, the inspector's text and clipboard. The store keeps
// what the server sent; redaction happens on the way out, so every way out calls one of these.
//
// The rules (docs/security.md lists them with examples; tests/unit/SecretShapes.h is the table of
// secret shapes every way out is tested with):
//  1. Names. A JSON member, or a `name=value` / `name: value` pair in text, whose name is a
//     credential: compared without case and without '_', '-' and '.', the name is one of
//     credential(s), token, password, passwd, pwd, secret, authorization, cookie, apikey,
//     privatekey, passphrase, bearer, sessionkey, secretkey, accesskey, or ends with token, secret,
//     password, apikey, privatekey, credential(s), passphrase, authorization, cookie, secretkey,
//     accesskey (accessToken, id_token, x-api-key, client_secret, resumeToken, Proxy-Authorization
//     …); or, made of words joined by '_', '-' or '.', it has the word secret, password, passwd,
//     passphrase, credential(s), apikey, api/access/private/secret + key, or (upper case only)
//     token anywhere, unless its last word says what it is about (_FILE, _URL, _ID, _TYPE,
//     _COUNT, _LENGTH …): AWS_SECRET_ACCESS_KEY, SECRET_KEY_BASE, GITHUB_TOKEN_V2. At most 256
//     characters, \u escapes decoded ("tok\u0065n" is "token"). Its value becomes "REDACTED"
//     (null and booleans are kept: they say whether there is a secret, not what it is).
//     "tokens_used", "input_tokens", "tokenizer", "token_budget" are not names of secrets. In text
//     the name may be quoted at any level of escaping (`\"api_key\":\"…\"`, stringified JSON in
//     a log line or in a frame that does not parse), and a secret's name followed by a comma and
//     a string loses that string (header lists: ["X-Api-Key", "…"], ("x-auth-token", "…")).
//  2. Schemes: "Bearer <token>" and "Basic <base64>" keep the scheme and lose the token (a token
//     has at least 8 characters with a digit or one of -._~+/=, so "bearer of news" is text).
//     After an authorization name any scheme word stays and what follows it goes
//     ("Authorization: Token REDACTED"); after another secret name, a known scheme word does.
//  3. Shapes of well-known credentials anywhere in text: JSON Web Tokens (eyJ….eyJ….…), OpenAI /
//     Anthropic / Stripe style keys (sk-…, rk-…), GitHub tokens (ghp_…, github_pat_…), AWS access
//     key ids (AKIA…, ASIA…), Slack tokens (xox?-…), Google API keys (AIza…), PEM private keys,
//     and the password of a URL's user info (scheme://user:password@host).
//  4. Inside JSON, every string value gets rules 1–3, a string that is itself JSON (stringified
//     JSON: "{\"token\":\"…\"}") gets all four, to a depth of 4, and in an array a string that
//     names a secret makes the next string "REDACTED" (["Authorization", "Token …"]).
//
// Everything else is kept byte for byte. Linear in the input (the JSON scan does not recurse over
// nesting: any depth is safe; the text rules read each value at most a bounded number of times);
// never throws; thread-safe.
#pragma once

#include "protocol/JsonRpc.h"

#include <QByteArray>
#include <QString>

#include <string_view>

namespace mapi {

// Rule 1 on one name.
bool isSecretName(std::string_view name);

// JSON text (any value): rules 1–4. Other text: rules 1–3 on the whole. Bytes that are not UTF-8
// are kept as they are (the rules match ASCII only).
QByteArray redactSecrets(const QByteArray &text);
// False when redactSecrets(text) certainly gives `text` back unchanged (none of the rules' hints
// in it): a writer that copies texts from where they are kept skips redactSecrets' copy.
bool mayNeedRedaction(QByteArrayView text);
QString redactSecrets(const QString &text);
// The same on a document (e.g. an operator action's parameters).
Json redactSecrets(const Json &json);

} // namespace mapi
