// One table of secret shapes (issue 42 item 2b): each row is a text holding one secret, the
// secret, and a part of the text that must stay. tst_redaction runs every row through each path of
// the rules (free text, a JSON string value, stringified JSON, a frame that does not parse, once
// and twice escaped). A test of another way out (journal, trace, CSV/Chrome/OTLP exports, incident
// bundle, webhook, CLI output) can feed the same rows to its writer and assert that `secret` is
// gone and `kept` is still there; harmlessTexts() are texts that must come out unchanged.
// Plain std::string (UTF-8), no Qt: any test can include it.
#pragma once

#include <string>
#include <vector>

namespace mapi_test {

struct SecretShape
{
    std::string name;   // the data row's name
    std::string text;   // a text holding one secret
    std::string secret; // must not appear after redaction (checked raw and JSON-escaped)
    std::string kept;   // must still appear after redaction (may be empty)
};

// One row a line (tools may read the table): {name, text, secret, kept}.
inline const std::vector<SecretShape> &secretShapes()
{
    static const std::vector<SecretShape> rows = [] {
        const std::string jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJvcGVyYXRvciJ9.c2lnbmF0dXJlXzEyMw";
        const std::string longName = std::string(94, 'a') + "_token"; // 100 characters: beyond the old limit of 64
        return std::vector<SecretShape>{
            // Schemes (rule 2): the scheme word may stay, the credential goes.
            {"Bearer JWT", "Authorization: Bearer " + jwt, jwt, "Authorization: Bearer"},
            {"Bearer opaque", "sent with bearer abc123def456ghi", "abc123def456ghi", "sent with bearer"},
            {"Basic", "Authorization: Basic dXNlcjpodW50ZXIy", "dXNlcjpodW50ZXIy", "Basic"},
            {"Authorization Token", "Authorization: Token abcdef0123456789", "abcdef0123456789", "Authorization: Token"},
            {"Authorization short token", "authorization=Token tk9", "tk9", "authorization="},
            {"Proxy-Authorization Negotiate", "Proxy-Authorization: Negotiate YIIGhgYGKwYBBQUCoIIGejCCBnag", "YIIGhgYGKwYBBQUCoIIGejCCBnag", "Proxy-Authorization:"},
            {"api key with scheme word", "api_key: Token sc-0a1b2c3d", "sc-0a1b2c3d", "api_key:"},
            // Shapes (rule 3), anywhere.
            {"bare JWT", "token was " + jwt + " then", jwt, " then"},
            {"OpenAI key", "using sk-proj-Abc123Def456Ghi789Jkl for the call", "sk-proj-Abc123Def456Ghi789Jkl", "for the call"},
            {"Anthropic key", "key sk-ant-api03-XyZ987aBc654dEf321", "sk-ant-api03-XyZ987aBc654dEf321", "key "},
            {"GitHub token", "clone with ghp_0123456789abcdefghijABCDEFGHIJklmnop now", "ghp_0123456789abcdefghijABCDEFGHIJklmnop", " now"},
            {"GitHub fine-grained", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", ""},
            {"AWS key id", "aws AKIAIOSFODNN7EXAMPLE ok", "AKIAIOSFODNN7EXAMPLE", " ok"},
            {"Slack", "xoxb-123456789012-abcdefABCDEF", "123456789012-abcdefABCDEF", ""},
            {"Google API key", "AIzaSyA1234567890abcdefghijklmnopqrstuv", "SyA1234567890abcdefghijklmnopqrstuv", ""},
            {"PEM RSA", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----\nafter", "MIIEpAIBAAKCAQEA7", "after"},
            {"PEM PKCS8", "key: -----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B\n-----END PRIVATE KEY----- done", "MIIEvQIBADANBgkqhkiG9w0B", " done"},
            {"URL password", "postgres://admin:hunter2@db.internal:5432/app", "hunter2", "postgres://admin:REDACTED@db.internal:5432/app"},
            {"URL userinfo https", "fetch https://user:pa55w0rd@host.example/path", "pa55w0rd", "https://user:REDACTED@host.example/path"},
            {"query parameter", "GET /v1?access_token=q1w2e3r4t5&page=2", "q1w2e3r4t5", "&page=2"},
            {"token query", "wss://agents.example.org/map?token=qt-1234abcd&room=ops", "qt-1234abcd", "&room=ops"},
            // Names (rule 1) in text.
            {"name: value", "password: correct-horse-battery", "correct-horse-battery", "password: "},
            {"x-api-key header", "X-Api-Key: 5f2b9c0e1d", "5f2b9c0e1d", "X-Api-Key"},
            {"cookie header", "Cookie: session=c00k1e-v4lue", "c00k1e-v4lue", "Cookie: "},
            {"env style", "OPENAI_API_KEY=abc-def-123 other=1", "abc-def-123", "other=1"},
            {"OPENAI_API_KEY colon", "OPENAI_API_KEY: oa-9f8e7d6c5b", "oa-9f8e7d6c5b", "OPENAI_API_KEY: "},
            {"AWS_SECRET_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY region=eu", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "region=eu"},
            {"GITHUB_TOKEN", "export GITHUB_TOKEN=gt-0a1b2c3d", "gt-0a1b2c3d", "export GITHUB_TOKEN="},
            {"DB_PASSWORD quoted", "DB_PASSWORD=\"p@ss w0rd!\" DB_HOST=db", "p@ss w0rd!", "DB_HOST=db"},
            {"SECRET_KEY_BASE", "SECRET_KEY_BASE: skb-77e1f0", "skb-77e1f0", "SECRET_KEY_BASE"},
            {"quoted pair", "{'client_secret': 'cs_live_42'}", "cs_live_42", "client_secret"},
            {"long key name", longName + "=lk-0987654321", "lk-0987654321", longName},
            {"escaped key name", "retry with {\"tok\\u0065n\": \"ek-5566778899\"", "ek-5566778899", "retry with"},
            // JSON inside text, escaped once or twice (an agent's error text quoting its request).
            {"api_key in JSON", "{\"api_key\": \"k-live-4321\", \"model\": \"m1\"}", "k-live-4321", "\"model\""},
            {"AWS secret in JSON", "{\"env\": {\"AWS_SECRET_ACCESS_KEY\": \"aws-s3cr3t-9\"}}", "aws-s3cr3t-9", "\"env\""},
            {"long key name in JSON", "{\"" + longName + "\": \"lj-1122334455\"}", "lj-1122334455", longName},
            {"escaped key name in JSON", "{\"p\\u0061ssword\": \"ej-424242\"}", "ej-424242", "p\\u0061ssword"},
            {"escaped JSON in text", "ERROR {\\\"api_key\\\":\\\"ak-7f3e9c\\\"}", "ak-7f3e9c", "ERROR {\\\"api_key\\\":\\\""},
            {"escaped JSON number", "ERROR {\\\"db_password\\\":86420,\\\"db\\\":1}", "86420", "\\\"db\\\":1"},
            {"double-escaped JSON", "payload: \"{\\\\\\\"password\\\\\\\":\\\\\\\"pw-d0uble\\\\\\\"}\"", "pw-d0uble", "payload: "},
            {"escaped key name escaped", "{\\\"tok\\\\u0065n\\\":\\\"ee-31415926\\\"}", "ee-31415926", ""},
            {"stringified in text", "queued: {\"payload\":\"{\\\"token\\\":\\\"nt-77aa88bb\\\"}\"}", "nt-77aa88bb", "queued: "},
            // Pairs of strings: header arrays and tuples.
            {"header array", "[\"X-Api-Key\",\"k-123-array\"]", "k-123-array", "X-Api-Key"},
            {"header arrays in text", "headers: [[\"Authorization\", \"Token hx-tok-42\"], [\"Accept\", \"*/*\"]]", "hx-tok-42", "[\"Accept\", \"*/*\"]"},
            {"escaped header array", "sent [\\\"X-Api-Key\\\",\\\"k-esc-777\\\"]", "k-esc-777", "X-Api-Key"},
            {"tuple", "headers=dict([(\"x-auth-token\", \"tup-5e6f7a\")])", "tup-5e6f7a", "x-auth-token"},
            {"single-quoted tuple", "[('Authorization', 'Bearer x'), ('Accept', 'json')]", "Bearer x", "('Accept', 'json')"},
        };
    }();
    return rows;
}

// Texts with words that look like secrets' names or schemes but hold none: they must come out
// byte for byte (no over-redaction). Each row: {name, text}.
struct HarmlessText
{
    std::string name;
    std::string text;
};

inline const std::vector<HarmlessText> &harmlessTexts()
{
    static const std::vector<HarmlessText> rows{
        {"bearer in prose", "the agent was the bearer of bad news"},
        {"basic in prose", "a basic functionality check"},
        {"token in prose", "token bucket refilled: token=null"},
        {"token budget", "token budget exceeded for agent planner"},
        {"password reset", "password reset requested by user"},
        {"authorization prose", "Authorization required for this endpoint"},
        {"time zone", "Asia/Tokyo, AKIA is not a key alone"},
        {"task ids", "task-0123456789abcdef risk-assessment-2026 desk-lamp"},
        {"URL without password", "see https://example.org/a?b=c and ws://127.0.0.1:8080"},
        {"seed 003 usage", R"({"resource_usage":{"tokens_used":1520,"cost_usd":0.42},"input_tokens":3})"},
        {"token counters", R"({"tokensUsed": 1200, "token_budget": 5000, "max_tokens": 4096, "token_type": "bearer"})"},
        {"counters in text", "MAX_TOKENS=4096 tokens_used=12 token_type=bearer&expires_in=3600"},
        {"names about secrets", "DB_PASSWORD_FILE=/run/secrets/db password_min_length=12 secret_name=prod-db"},
        {"booleans and null", R"({"hasToken":true,"password":null,"apiKey":false})"},
        {"already redacted", R"({"token":"REDACTED","x":"password=REDACTED"})"},
        {"field lists", R"({"required":["username","email"],"grant_type":"password","username":"bob"})"},
        {"truncated field list", R"({"grant_type":"password","username":"bob")"},
        {"non-JSON frame", "hello, this frame is not JSON: {oops"},
    };
    return rows;
}

} // namespace mapi_test
